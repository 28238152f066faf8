package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/weftworks/weft/eval/report"
)

// At reads path (dot-separated keys and indexes) in v.
func At(v any, path string) (any, error) {
	if path == "" {
		return v, nil
	}
	cur := v
	for _, p := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[p]
			if !ok {
				return nil, fmt.Errorf("the output has no %q at %s", p, path)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("%s: %q is not an index of a list of %d", path, p, len(c))
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("%s: %q is inside a %T, not an object or a list", path, p, cur)
		}
	}
	return cur, nil
}

// outputText is what contains, matches and judge read: a string as it is, a model answer's text,
// anything else as JSON.
func outputText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if t, ok := x["text"].(string); ok {
			return t
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Judge scores text against a rubric: a score from 0 to 1, why, and the tokens and cost it used.
type Judge func(ctx context.Context, rubric, text string) (score float64, reason string, tokens int64, cost float64, err error)

// Grade applies every grader of x to output (judge through judge; nil skips it).
func Grade(ctx context.Context, x Expect, output any, judge Judge) (grades []report.Grade, tokens int64, cost float64) {
	add := func(g string, pass bool, detail string) {
		s := 0.0
		if pass {
			s = 1
		}
		grades = append(grades, report.Grade{Grader: g, Pass: pass, Score: s, Detail: detail})
	}
	if x.Error != "" {
		add("error", false, fmt.Sprintf("the run completed; the case expects it to fail with %q", x.Error))
		return grades, 0, 0
	}
	v, err := At(output, x.Path)
	if err != nil {
		add("path", false, err.Error())
		return grades, 0, 0
	}
	text := outputText(v)
	if len(x.Equals) > 0 {
		var want any
		_ = json.Unmarshal(x.Equals, &want)
		got := v
		if s, ok := want.(string); ok {
			got = text
			want = s
		}
		pass := reflect.DeepEqual(normJSON(got), normJSON(want))
		add("equals", pass, cond(pass, "", fmt.Sprintf("want %s, got %s", shortJSON(want), shortJSON(got))))
	}
	if len(x.Contains) > 0 {
		subs, _ := x.contains()
		var missing []string
		for _, s := range subs {
			if !strings.Contains(text, s) {
				missing = append(missing, strconv.Quote(s))
			}
		}
		add("contains", len(missing) == 0, cond(len(missing) == 0, "", "not found: "+strings.Join(missing, ", ")))
	}
	if x.Matches != "" {
		re := regexp.MustCompile(x.Matches)
		pass := re.MatchString(text)
		add("matches", pass, cond(pass, "", fmt.Sprintf("%q does not match %s", shorten(text, 80), x.Matches)))
	}
	if len(x.Schema) > 0 {
		s, _ := compileSchema(x.Schema)
		err := s.Validate(normJSON(v))
		add("schema", err == nil, cond(err == nil, "", fmt.Sprint(err)))
	}
	for _, b := range []struct {
		name string
		raw  json.RawMessage
		ok   func(got, lim float64) bool
	}{{"max", x.Max, func(g, l float64) bool { return g <= l }}, {"min", x.Min, func(g, l float64) bool { return g >= l }}} {
		if len(b.raw) == 0 {
			continue
		}
		path, lim, _ := bound(b.raw)
		at, err := At(v, path)
		if err != nil {
			add(b.name, false, err.Error())
			continue
		}
		got, ok := at.(float64)
		if !ok {
			if f, perr := strconv.ParseFloat(strings.TrimSpace(outputText(at)), 64); perr == nil {
				got, ok = f, true
			}
		}
		if !ok {
			add(b.name, false, fmt.Sprintf("%s is not a number", shortJSON(at)))
			continue
		}
		pass := b.ok(got, lim)
		add(b.name, pass, cond(pass, "", fmt.Sprintf("%g is %s %g", got, cond(b.name == "max", "above", "below"), lim)))
	}
	if len(x.Judge) > 0 {
		rubric, passAt, _ := x.judge()
		if judge == nil {
			add("judge", false, "no judge: the model is not reachable")
		} else {
			score, reason, tok, c, err := judge(ctx, rubric, text)
			tokens, cost = tokens+tok, cost+c
			if err != nil {
				add("judge", false, "the judge failed: "+err.Error())
			} else {
				grades = append(grades, report.Grade{Grader: "judge", Pass: score >= passAt, Score: score, Detail: reason})
			}
		}
	}
	return grades, tokens, cost
}

func cond(ok bool, a, b string) string {
	if ok {
		return a
	}
	return b
}

func normJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func shortJSON(v any) string {
	b, _ := json.Marshal(v)
	return shorten(string(b), 80)
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// GradeFailure grades a run that failed with cause: only an expected error passes.
func GradeFailure(x Expect, cause string) []report.Grade {
	if x.Error == "" {
		return []report.Grade{{Grader: "error", Pass: false, Detail: "the run failed: " + cause}}
	}
	pass := strings.Contains(cause, x.Error)
	g := report.Grade{Grader: "error", Pass: pass, Detail: cond(pass, cause, fmt.Sprintf("the run failed with %q, which does not contain %q", shorten(cause, 200), x.Error))}
	if pass {
		g.Score = 1
	}
	return []report.Grade{g}
}
