package console_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
)

// overlapsJS defines overlaps(links): the pairs of links that run together along a segment.
// links are {from, to, path} (an SVG path element, from and to the handles it joins); each is
// sampled every 2 px on the screen. Two links may share what they must: the way out of one
// handle both leave (a common start, as far as they run together from it, but not the last leg
// of either, the way along the gap to the row it enters: that is its own) and the way into one
// handle both enter (a common end). Anywhere else, 12 px or more of one within 1 px of the
// other is a shared segment (a crossing shares a point or two).
const overlapsJS = `
function overlaps(links) {
  const CELL = 2, RUN = 6;
  const L = links.map((l) => {
    const m = l.path.getScreenCTM(), len = l.path.getTotalLength(), pts = [], back = [];
    const at = (s) => { const a = l.path.getPointAtLength(s), q = new DOMPoint(a.x, a.y).matrixTransform(m); return [q.x, q.y]; };
    // every 2 px on the screen from the start, and from the end (a common end is found from there)
    const step = CELL / (Math.hypot(m.a, m.b) || 1);
    for (let s = 0; s <= len; s += step) pts.push(at(s));
    for (let s = len; s >= 0; s -= step) back.push(at(s));
    // entry: where the link's last leg starts, the way along the gap to the row it enters
    // (back from its final straight, past the corner, to where it runs straight down or up)
    let k = pts.length - 1;
    const yEnd = pts[k][1];
    while (k > 0 && Math.abs(pts[k - 1][1] - yEnd) <= 1) k--;
    const upright = (i) => Math.abs(pts[i][0] - pts[i - 1][0]) < 0.2 && Math.abs(pts[i][1] - pts[i - 1][1]) > 1.5;
    while (k > 0 && !upright(k)) k--;
    let entry = pts.length;
    if (k > 0) {
      const x = pts[k][0];
      while (k > 0 && Math.abs(pts[k - 1][0] - x) <= 1) k--;
      entry = k;
    }
    return { from: l.from, to: l.to, pts, back, entry };
  });
  const near = (p, q) => Math.abs(p[0] - q[0]) <= 1 && Math.abs(p[1] - q[1]) <= 1;
  const cells = new Map(), key = (x, y) => x + ',' + y;
  L.forEach((l, i) => l.pts.forEach((p) => {
    const k = key(Math.round(p[0] / CELL), Math.round(p[1] / CELL));
    if (!cells.has(k)) cells.set(k, new Set());
    cells.get(k).add(i);
  }));
  const shared = new Map(); // "i,j" -> [points of i left to check from, to]
  const allowed = (i, j) => {
    const k = i + ',' + j;
    if (!shared.has(k)) {
      const a = L[i].pts, b = L[j].pts, ab = L[i].back, bb = L[j].back;
      let pre = 0, suf = 0;
      if (L[i].from === L[j].from) while (pre < a.length && pre < b.length && near(a[pre], b[pre])) pre++;
      if (L[i].to === L[j].to) while (suf < ab.length && suf < bb.length && near(ab[suf], bb[suf])) suf++;
      // links that leave one step run together only on their way out: each enters its row
      // on a leg of its own
      shared.set(k, [Math.min(pre, L[i].entry), a.length - suf]);
    }
    return shared.get(k);
  };
  const out = [];
  L.forEach((a, i) => {
    const runs = new Map();
    a.pts.forEach((p, n) => {
      const cx = Math.round(p[0] / CELL), cy = Math.round(p[1] / CELL), here = new Set();
      for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) for (const j of cells.get(key(cx + dx, cy + dy)) || []) {
        if (j === i || here.has(j)) continue;
        const [lo, hi] = allowed(i, j);
        if (n < lo || n >= hi) continue;
        if (L[j].pts.some((q) => near(p, q))) here.add(j);
      }
      for (const [j, r] of runs) if (!here.has(j)) runs.delete(j);
      for (const j of here) {
        const r = (runs.get(j) || 0) + 1;
        runs.set(j, r);
        if (r === RUN && i < j) out.push(a.from + '->' + a.to + ' runs along ' + L[j].from + '->' + L[j].to + ' at ' + Math.round(p[0]) + ',' + Math.round(p[1]));
      }
    });
  });
  return out;
}`

// TestBuilderLinksApart: links that share a gap between the builder's columns or rows each run
// in a lane of their own, so that one sees which row each enters: apart from the way out of the
// step they leave together and the way into the step they enter together, no two links run along
// each other, in the files TestBuilderLinksClearOfSteps draws.
func TestBuilderLinksApart(t *testing.T) {
	files := linkFiles(t)
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil))
	total := 0
	for _, tc := range files {
		t.Run(tc.name, func(t *testing.T) {
			var m struct {
				Links, Count int
				Overlaps     []string // the first 10
			}
			run(t, ctx, tc.name, chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'f.json')`, mustJS(tc.file)), nil),
				chromedp.Evaluate(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => {
				  window.__weftBuilder.fit();
				  `+overlapsJS+`
				  const links = [...document.querySelectorAll('#b-canvas .connection')].map((c) => ({
				    to: c.classList[1].replace('node_in_', '') + '.' + c.classList[4], from: c.classList[2].replace('node_out_', '') + '.' + c.classList[3],
				    path: c.querySelector('path.main-path') }));
				  const o = overlaps(links);
				  r({ Links: links.length, Count: o.length, Overlaps: o.slice(0, 10) });
				})))`, &m, awaitPromise))
			total += m.Count
			t.Logf("%s: %d links, %d pairs run along each other", tc.name, m.Links, m.Count)
			if m.Count > 0 {
				shot(t, ctx, "builder-links-apart-"+artifactName(tc.name))
			}
			require.Zero(t, m.Count, "each link runs in its own lane; the first pairs that do not: %v", m.Overlaps)
		})
	}
	t.Logf("%d files: %d pairs of links run along each other", len(files), total)
}

// chainsFile is n chains of length template steps, side by side.
func chainsFile(n, length int) string {
	var b strings.Builder
	b.WriteString(`{"name":"chains","steps":[`)
	for c := range n {
		for i := range length {
			if c+i > 0 {
				b.WriteString(",")
			}
			if i == 0 {
				fmt.Fprintf(&b, `{"id":"c%d_%d","tool":"template","inputs":{"text":"start"}}`, c, i)
			} else {
				fmt.Fprintf(&b, `{"id":"c%d_%d","tool":"template","inputs":{"text":"{{ c%d_%d.output.text }}"}}`, c, i, c, i-1)
			}
		}
	}
	b.WriteString(`]}`)
	return b.String()
}

// bandSkipsFile is a 30-step chain (drawn in three bands of ten rows) whose steps also read
// steps in the band before, all into a row no lower than the one they leave: s5 (row 5) feeds
// rows 1 to 5 of the next two bands (skips), s16 and s26 (row 6) read three and two steps of
// earlier rows (fan-in). The gap under row 5 holds ten lanes below it and two above row 6.
func bandSkipsFile() string {
	extra := map[int][]int{16: {7, 8, 9}, 26: {9, 18}}
	for _, i := range []int{11, 12, 13, 14, 15, 21, 22, 23, 24, 25} {
		extra[i] = []int{5}
	}
	var b strings.Builder
	b.WriteString(`{"name":"skips","steps":[`)
	for i := range 30 {
		if i > 0 {
			b.WriteString(",")
		}
		text := "start"
		if i > 0 {
			text = fmt.Sprintf("{{ s%d.output.text }}", i-1)
			for _, j := range extra[i] {
				text += fmt.Sprintf(" {{ s%d.output.text }}", j)
			}
		}
		fmt.Fprintf(&b, `{"id":"s%d","tool":"template","inputs":{"text":%q}}`, i, text)
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestRunGraphEdgesApart: on a run's graph, too, no two edges run along each other apart from
// where they leave or enter the same step (overlapsJS): a long narrow plan is drawn in bands
// side by side, and the edges from the foot of one band to the head of the next each take a lane
// of their own. (One step feeding 99 is left out: its 99 curves leave one point together, as
// they must.)
func TestRunGraphEdgesApart(t *testing.T) {
	for _, tc := range []struct{ name, file string }{
		{"chain", chainFile()}, {"10 chains of 10", hundredStepFile()}, {"2 chains of 30", chainsFile(2, 30)}, {"3 chains of 30", chainsFile(3, 30)},
		{"skips and fan-in across bands", bandSkipsFile()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := fixtureRun(t, tc.file, `{"workflow":"x","status":"running","steps":[]}`)
			ctx := chromium(t)
			var m struct {
				Edges, Count int
				Overlaps     []string // the first 10
			}
			run(t, ctx, tc.name, chromedp.Navigate(page), chromedp.WaitVisible(`svg#graph g.node`),
				chromedp.Evaluate(`(() => {`+overlapsJS+`
				  const links = [...document.querySelectorAll('svg#graph path.edge')].map((p) => ({ from: p.dataset.from, to: p.dataset.to, path: p }));
				  const o = overlaps(links);
				  return { Edges: links.length, Count: o.length, Overlaps: o.slice(0, 10) };
				})()`, &m))
			t.Logf("%s: %d edges, %d pairs run along each other", tc.name, m.Edges, m.Count)
			shot(t, ctx, "run-graph-apart-"+artifactName(tc.name))
			require.Positive(t, m.Edges)
			require.Zero(t, m.Count, "each edge runs on its own; the first pairs that do not: %v", m.Overlaps)
		})
	}
}
