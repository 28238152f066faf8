package console_test

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// themes reads the custom properties of the :root rules of the style sheets: light (outside
// any @media) and dark (light, overridden by those inside @media (prefers-color-scheme: dark)).
func themes(t *testing.T, files ...string) (light, dark map[string]string) {
	t.Helper()
	light, darkOnly := map[string]string{}, map[string]string{}
	comment := regexp.MustCompile(`(?s)/\*.*?\*/`)
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
				if preludes[n-1] == ":root" {
					into := light
					for _, p := range preludes[:n-1] {
						if strings.HasPrefix(p, "@media") && strings.Contains(p, "prefers-color-scheme: dark") {
							into = darkOnly
						}
					}
					for _, decl := range strings.Split(css[start:i], ";") {
						k, v, ok := strings.Cut(decl, ":")
						if k = strings.TrimSpace(k); ok && strings.HasPrefix(k, "--") {
							into[k] = strings.TrimSpace(v)
						}
					}
				}
				preludes = preludes[:n-1]
				start = i + 1
			case ';':
				if len(preludes) == 0 || preludes[len(preludes)-1] != ":root" {
					start = i + 1
				}
			}
		}
		require.Empty(t, preludes, "%s: unclosed blocks", f)
	}
	dark = map[string]string{}
	for k, v := range light {
		dark[k] = v
	}
	for k, v := range darkOnly {
		dark[k] = v
	}
	return light, dark
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
	for _, c := range []string{"retrieval", "embedding", "management", "utility", "control", "generation", "review", "memory"} {
		pairs = append(pairs, pair{"--on-accent", "--c-" + c, "category chips"})
	}
	for _, theme := range []struct {
		name string
		vars map[string]string
	}{{"light", light}, {"dark", dark}} {
		for _, p := range pairs {
			t.Run(fmt.Sprintf("%s %s on %s", theme.name, p.text, p.on), func(t *testing.T) {
				fg, err := rgb(theme.vars, p.text)
				require.NoError(t, err)
				bg, err := rgb(theme.vars, p.on)
				require.NoError(t, err)
				r := contrast(fg, bg)
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
	for _, theme := range []struct {
		name string
		vars map[string]string
	}{{"light", light}, {"dark", dark}} {
		for _, p := range pairs {
			t.Run(fmt.Sprintf("%s %s on %s", theme.name, p.fg, p.on), func(t *testing.T) {
				fg, err := rgb(theme.vars, p.fg)
				require.NoError(t, err)
				bg, err := rgb(theme.vars, p.on)
				require.NoError(t, err)
				r := contrast(fg, bg)
				require.GreaterOrEqual(t, r, 3.0, "%s (%s): %s on %s is %.2f:1 in %s, under WCAG 1.4.11's 3:1",
					p.where, theme.name, theme.vars[p.fg], theme.vars[p.on], r, theme.name)
			})
		}
	}
}
