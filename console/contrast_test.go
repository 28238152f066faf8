package console_test

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
)

// sheet is what the contrast tests read of the style sheets in one theme: the custom properties
// of :root and, by selector, the declarations of every rule (one selector of a list each).
type sheet struct {
	name  string
	vars  map[string]string
	rules map[string]map[string]string
}

// themes reads console.css and builder.css: light (the rules outside any @media) and dark
// (light, overridden by the rules inside @media (prefers-color-scheme: dark)). Rules inside
// other @media blocks (small screens) are left out: they change layout, not colours.
func themes(t *testing.T, files ...string) (light, dark sheet) {
	t.Helper()
	light = sheet{"light", map[string]string{}, map[string]map[string]string{}}
	darkOnly := sheet{"dark", map[string]string{}, map[string]map[string]string{}}
	comment := regexp.MustCompile(`(?s)/\*.*?\*/`)
	space := regexp.MustCompile(`\s+`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		css := comment.ReplaceAllString(string(b), "")
		var preludes []string // the prelude of each open block
		start := 0
		for i, c := range css {
			switch c {
			case '{':
				preludes = append(preludes, strings.TrimSpace(css[start:i]))
				start = i + 1
			case '}':
				n := len(preludes)
				require.NotZero(t, n, "%s: a } with no {", f)
				into, skip := &light, false
				for _, p := range preludes[:n-1] {
					switch {
					case strings.HasPrefix(p, "@media") && strings.Contains(p, "prefers-color-scheme: dark"):
						into = &darkOnly
					case strings.HasPrefix(p, "@"):
						skip = true
					}
				}
				if body := css[start:i]; !skip && !strings.HasPrefix(preludes[n-1], "@") && !strings.Contains(body, "{") {
					decls := map[string]string{}
					for _, decl := range strings.Split(body, ";") {
						if k, v, ok := strings.Cut(decl, ":"); ok {
							decls[strings.TrimSpace(k)] = strings.TrimSpace(v)
						}
					}
					for _, sel := range strings.Split(preludes[n-1], ",") {
						sel = space.ReplaceAllString(strings.TrimSpace(sel), " ")
						if sel == ":root" {
							for k, v := range decls {
								if strings.HasPrefix(k, "--") {
									into.vars[k] = v
								}
							}
							continue
						}
						if into.rules[sel] == nil {
							into.rules[sel] = map[string]string{}
						}
						for k, v := range decls {
							into.rules[sel][k] = v
						}
					}
				}
				preludes = preludes[:n-1]
				start = i + 1
			}
		}
		require.Empty(t, preludes, "%s: unclosed blocks", f)
	}
	dark = sheet{"dark", map[string]string{}, map[string]map[string]string{}}
	for _, from := range []sheet{light, darkOnly} {
		for k, v := range from.vars {
			dark.vars[k] = v
		}
		for sel, decls := range from.rules {
			if dark.rules[sel] == nil {
				dark.rules[sel] = map[string]string{}
			}
			for k, v := range decls {
				dark.rules[sel][k] = v
			}
		}
	}
	return light, dark
}

// decl is the value of property prop in the rule for selector sel (a custom property's name when
// it is var(--x)): the test fails when the style sheets have no such declaration.
func (s sheet) decl(t *testing.T, sel, prop string) string {
	t.Helper()
	v, ok := s.rules[sel][prop]
	require.True(t, ok, "%s: no %s in a rule for %q: the contrast test reads it there", s.name, prop, sel)
	if m := varRef.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	return v
}

var varRef = regexp.MustCompile(`^var\((--[\w-]+)\)$`)

// rgb resolves a custom property to a colour (#rgb or #rrggbb, through var() references).
func rgb(vars map[string]string, name string) ([3]float64, error) {
	v, seen := name, 0
	for {
		if seen++; seen > 10 {
			return [3]float64{}, fmt.Errorf("%s: var() references loop", name)
		}
		if m := varRef.FindStringSubmatch(v); m != nil {
			v = m[1]
		}
		if !strings.HasPrefix(v, "--") {
			break
		}
		next, ok := vars[v]
		if !ok {
			return [3]float64{}, fmt.Errorf("%s: no custom property %s", name, v)
		}
		v = next
	}
	h := strings.TrimPrefix(v, "#")
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	if len(h) != 6 || !strings.HasPrefix(v, "#") {
		return [3]float64{}, fmt.Errorf("%s is %q: the contrast test reads #rgb and #rrggbb colours only", name, v)
	}
	var c [3]float64
	for i := range 3 {
		n, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		if err != nil {
			return c, fmt.Errorf("%s is %q: %w", name, v, err)
		}
		c[i] = float64(n) / 255
	}
	return c, nil
}

// ratio is the contrast ratio of the colours fg and on resolve to in the theme (rgb); the test
// fails when either does not resolve.
func (s sheet) ratio(t *testing.T, fg, on string) float64 {
	t.Helper()
	a, err := rgb(s.vars, fg)
	require.NoError(t, err)
	b, err := rgb(s.vars, on)
	require.NoError(t, err)
	return contrast(a, b)
}

// contrast is WCAG 2's contrast ratio of two colours.
func contrast(a, b [3]float64) float64 {
	lum := func(c [3]float64) float64 {
		var l [3]float64
		for i, v := range c {
			if v <= 0.03928 {
				l[i] = v / 12.92
			} else {
				l[i] = math.Pow((v+0.055)/1.055, 2.4)
			}
		}
		return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
	}
	la, lb := lum(a), lum(b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

func TestContrast(t *testing.T) {
	require.InDelta(t, 21, contrast([3]float64{0, 0, 0}, [3]float64{1, 1, 1}), 0.01)
	require.InDelta(t, 4.48, contrast([3]float64{0x77 / 255.0, 0x77 / 255.0, 0x77 / 255.0}, [3]float64{1, 1, 1}), 0.01)
}

// TestTextContrastAA: every pair of text colour and the background it is drawn on in
// console.css and builder.css reaches WCAG AA (4.5:1), in light and dark.
func TestTextContrastAA(t *testing.T) {
	light, dark := themes(t, "static/console.css", "static/builder.css")
	type pair struct{ text, on, where string }
	pairs := []pair{
		{"--fg", "--bg", "body text"}, {"--fg", "--card", "text on cards, tables, panels"},
		{"--fg", "--code-bg", "JSON blocks"}, {"--fg", "--button-bg", "buttons"},
		{"--muted", "--bg", "notes, meta lines"}, {"--muted", "--card", "table headers, node subtitles"},
		{"--link", "--bg", "links"}, {"--link", "--card", "links in tables"},
		{"--header-fg", "--header-bg", "the navigation"},
		{"--error-text", "--bg", "errors"}, {"--error-text", "--card", "diagnostics, field errors"},
		{"--error-text", "--button-bg", "Reject and Cancel buttons"},
		{"--warn-text", "--bg", "warnings"}, {"--warn-text", "--card", "diagnostics' warnings"},
		{"--ok-text", "--bg", "“valid”"}, {"--ok-text", "--card", "the builder's ✓ valid"},
		{"--fg", "--pending", "a status badge of another status"},
	}
	for _, s := range []string{"--running", "--completed", "--failed", "--review", "--cancelled"} {
		pairs = append(pairs, pair{"--on-accent", s, "status badges, Approve, the review count"})
	}
	for _, c := range categoryColours(t) {
		pairs = append(pairs, pair{"--on-cat", c, "category chips"})
	}
	for _, theme := range []sheet{light, dark} {
		for _, p := range pairs {
			t.Run(fmt.Sprintf("%s %s on %s", theme.name, p.text, p.on), func(t *testing.T) {
				r := theme.ratio(t, p.text, p.on)
				require.GreaterOrEqual(t, r, 4.5, "%s (%s): %s on %s is %.2f:1 in %s, under WCAG AA's 4.5:1",
					p.where, theme.name, theme.vars[p.text], theme.vars[p.on], r, theme.name)
			})
		}
	}
}

// TestNonTextContrast: the boundaries of controls and the colours of graph elements in
// console.css and builder.css reach 3:1 against what they are drawn on (WCAG 1.4.11, non-text
// contrast), in light and dark: borders of buttons and inputs, the focus ring, node borders by
// status (the run graph, the builder's steps, the minimap's nodes), edges, and the live dot.
// --line is left out: it only divides rows and panels that their content already tells apart.
func TestNonTextContrast(t *testing.T) {
	light, dark := themes(t, "static/console.css", "static/builder.css")
	type pair struct{ fg, on, where string }
	var pairs []pair
	for _, on := range []string{"--bg", "--card", "--button-bg", "--input-bg"} {
		pairs = append(pairs, pair{"--control-line", on, "borders of buttons and inputs"})
	}
	for _, on := range []string{"--bg", "--card", "--button-bg"} {
		pairs = append(pairs, pair{"--focus", on, "the focus ring of graph nodes, builder steps, the canvas and the file button"})
	}
	for _, s := range []string{"--pending-line", "--running", "--completed", "--failed", "--skipped", "--cancelled", "--review"} {
		pairs = append(pairs, pair{s, "--card", "node borders and minimap nodes by status on the graph's canvas"})
	}
	pairs = append(pairs,
		pair{"--edge", "--card", "edges (graph, builder connections)"},
		pair{"--completed", "--card", "then edges"}, pair{"--failed", "--card", "else edges"},
		pair{"--completed", "--bg", "the live dot"}, pair{"--failed", "--bg", "the live dot when stale"},
	)
	for _, theme := range []sheet{light, dark} {
		for _, p := range pairs {
			t.Run(fmt.Sprintf("%s %s on %s", theme.name, p.fg, p.on), func(t *testing.T) {
				r := theme.ratio(t, p.fg, p.on)
				require.GreaterOrEqual(t, r, 3.0, "%s (%s): %s on %s is %.2f:1 in %s, under WCAG 1.4.11's 3:1",
					p.where, theme.name, theme.vars[p.fg], theme.vars[p.on], r, theme.name)
			})
		}
	}
}

// categoryColours are the colours of the registry's categories (every tool's, from console.Tools,
// so a new category without a colour fails the contrast tests), --c-<category> each, and the
// colour of a category without one (--muted, the fallback of var(--cat)).
func categoryColours(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, tool := range console.Tools() {
		seen["--c-"+tool.Category] = true
	}
	out := []string{"--muted"}
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	require.Greater(t, len(out), 5, "the registry's categories")
	return out
}

// TestMarksAndCategoriesContrast: the graph's status marks (✓ ✕ ⟳ ⊘ ⏸ ○ ⤼: what tells a status
// apart besides colour) and the words on a node reach their contrast on the box of each status;
// the category colours reach 3:1 wherever they are drawn as a mark (the band of a node, the
// builder palette's edge, the builder's minimap); the builder's steps and problem badges hold
// their text to 4.5:1. Light and dark. Colours are read from the rules that draw them.
func TestMarksAndCategoriesContrast(t *testing.T) {
	light, dark := themes(t, "static/console.css", "static/builder.css")
	cats := categoryColours(t)
	for _, th := range []sheet{light, dark} {
		type pair struct {
			fg, on, where string
			min           float64
		}
		var pairs []pair
		box := func(st string) string {
			if st == "" {
				return th.decl(t, "svg .node .box", "fill")
			}
			return th.decl(t, "svg .node.st-"+st+" .box", "fill")
		}
		// marks: the glyph says the status, so it is held to text contrast
		mark := func(st string) string { return th.decl(t, "svg .node.st-"+st+" .st-mark", "fill") }
		pairs = append(pairs,
			pair{th.decl(t, "svg .node .st-mark", "fill"), box(""), "the pending mark ○", 4.5},
			pair{th.decl(t, "svg .node .st-mark", "fill"), box("skipped"), "the skipped mark ⤼", 4.5},
			pair{mark("cancelled"), box(""), "the cancelled mark ⊘", 4.5})
		for _, st := range []string{"running", "completed", "failed", "awaiting_review"} {
			pairs = append(pairs, pair{mark(st), box(st), "the " + st + " mark", 4.5})
		}
		for _, st := range []string{"", "running", "completed", "failed", "skipped", "awaiting_review"} {
			pairs = append(pairs,
				pair{th.decl(t, "svg .node .label", "fill"), box(st), "a node's name, status " + st, 4.5},
				pair{th.decl(t, "svg .node .sub", "fill"), box(st), "a node's tool and progress, status " + st, 4.5})
			for _, c := range cats {
				pairs = append(pairs, pair{c, box(st), "the category band of a node, status " + st, 3})
			}
		}
		// the builder's steps: plain, selected, with an error
		for _, sel := range []string{".drawflow .drawflow-node.b-step", ".drawflow .drawflow-node.b-step.selected-step", ".drawflow .drawflow-node.b-step.b-has-error"} {
			bg := th.decl(t, sel, "background")
			pairs = append(pairs,
				pair{th.decl(t, ".drawflow .drawflow-node.b-step", "color"), bg, "a builder step's name (" + sel + ")", 4.5},
				pair{th.decl(t, ".b-node-sub", "color"), bg, "a builder step's tool (" + sel + ")", 4.5})
			for _, c := range cats {
				pairs = append(pairs, pair{c, bg, "the category band of a builder step (" + sel + ")", 3})
			}
		}
		pairs = append(pairs,
			pair{th.decl(t, ".b-badge", "color"), th.decl(t, ".b-badge", "background"), "a builder step's error badge", 4.5},
			pair{th.decl(t, ".b-badge", "color"), th.decl(t, ".b-badge.warning", "background"), "a builder step's warning badge", 4.5})
		for _, c := range cats {
			pairs = append(pairs,
				pair{c, "--button-bg", "the category edge of a palette entry", 3},
				pair{c, "--card", "a step on the builder's minimap", 3})
		}
		for _, p := range pairs {
			t.Run(fmt.Sprintf("%s %s on %s", th.name, p.fg, p.on), func(t *testing.T) {
				r := th.ratio(t, p.fg, p.on)
				require.GreaterOrEqual(t, r, p.min, "%s (%s): %s on %s is %.2f:1, under %.1f:1", p.where, th.name, p.fg, p.on, r, p.min)
			})
		}
	}
}
