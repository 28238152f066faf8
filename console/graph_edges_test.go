package console_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestRunGraphEdgesClearOfSteps: on a run's graph no edge passes behind a step it does not join
// (sampled every 4 px), for a 30-step chain, one step feeding 99, 10 chains of 10, a chain in
// bands with skips and fan-in into later bands (the lanes of a gap between rows fit it), and
// parallel branches whose steps also wait for steps layers up (an edge drawn behind a step there
// reads as a dependency on it), as the builder's links are held to in TestBuilderLinksClearOfSteps.
func TestRunGraphEdgesClearOfSteps(t *testing.T) {
	for _, tc := range []struct{ name, file string }{{"chain", chainFile()}, {"fan", fanFile()}, {"hundred", hundredStepFile()}, {"band skips", bandSkipsFile()}, {"parallel skips", parallelSkipsFile()}} {
		page := fixtureRun(t, tc.file, `{"workflow":"x","status":"running","steps":[]}`)
		ctx := chromium(t)
		var m struct {
			Edges, Points int
			Crossings     []string
		}
		run(t, ctx, tc.name, chromedp.Navigate(page), chromedp.WaitVisible(`svg#graph g.node`),
			chromedp.Evaluate(`(() => {
			  const boxes = [...document.querySelectorAll('svg#graph g.node')].map((g) => [g.dataset.step, g.querySelector('rect.box').getBoundingClientRect()]);
			  let edges = 0, points = 0; const crossings = [];
			  for (const p of document.querySelectorAll('svg#graph path.edge')) {
			    edges++; const from = p.dataset.from, to = p.dataset.to, len = p.getTotalLength(), m = p.getScreenCTM();
			    for (let l = 10; l < len - 10; l += 4) { points++;
			      const q = p.getPointAtLength(l), x = m.a*q.x + m.c*q.y + m.e, y = m.b*q.x + m.d*q.y + m.f;
			      for (const [s, r] of boxes) { if (s === from || s === to) continue;
			        if (x > r.left + 1 && x < r.right - 1 && y > r.top + 1 && y < r.bottom - 1) { crossings.push(from + '->' + to + ' behind ' + s); break; } } } }
			  return { Edges: edges, Points: points, Crossings: [...new Set(crossings)] };
			})()`, &m))
		require.Positive(t, m.Edges, tc.name)
		require.Greater(t, m.Points, m.Edges, "%s: edges were sampled", tc.name)
		require.Empty(t, m.Crossings, "%s: edges behind steps", tc.name)
		shot(t, ctx, "run-graph-edges-"+artifactName(tc.name))
	}
}

// parallelSkipsFile is a fetch feeding three parallel branches of three steps each, whose last
// steps each also read fetch and the first step of another branch, and an answer that reads the
// last step of every branch and fetch: edges that skip layers past the branches' steps.
func parallelSkipsFile() string {
	steps := []string{`{"id":"fetch","tool":"template","inputs":{"text":"start"}}`}
	var last []string
	for b := range 3 {
		prev := "fetch"
		for i := range 3 {
			id := fmt.Sprintf("b%d_%d", b, i)
			text := fmt.Sprintf("{{ %s.output.text }}", prev)
			if i == 2 {
				text += fmt.Sprintf(" {{ fetch.output.text }} {{ b%d_0.output.text }}", (b+1)%3)
			}
			steps = append(steps, fmt.Sprintf(`{"id":%q,"tool":"template","inputs":{"text":%q}}`, id, text))
			prev = id
		}
		last = append(last, "{{ "+prev+".output.text }}")
	}
	steps = append(steps, fmt.Sprintf(`{"id":"answer","tool":"template","inputs":{"text":%q}}`, strings.Join(last, " ")+" {{ fetch.output.text }}"))
	return `{"name":"parallel","steps":[` + strings.Join(steps, ",") + `]}`
}
