package starter

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/english"
	"github.com/weftworks/weft/internal/fuzzy"
	"github.com/weftworks/weft/workflows"
	"github.com/weftworks/weft/workflows/dsl"
)

// decisionKeys are the keys of a fixture's review decision.
var decisionKeys = []string{"decision", "data", "reviewer", "comment"}

// mockKeys are the special keys of a mocked output.
var mockKeys = []string{"$error", "$calls"}

// reviewKey splits a review key into its step and the rest: "check[2]" and "agent/call_1" belong
// to the steps check and agent.
var reviewKey = regexp.MustCompile(`^([^\[/]+)(\[\d+\]|/.+)?$`)

// checkFixture finds what in a fixture's mocks and reviews could never take effect: a key that
// names no step of the workflow (nor, for mocks, a tool), a step that never calls a tool or never
// waits for a review, an unknown key in a decision and an unknown $-key in a mocked output, and a
// mocked output the tool could never return (checkMockOutput; a warning for a vai file). Each
// problem names its key, with its position in the file when it can be found, and a did-you-mean.
// Without these checks a typo made the fixture test something else than it says, silently.
func checkFixture(src *dsl.Source, fx fixture, w *dsl.Workflow) (errs, warnings []string) {
	at := src.AtKey
	steps := map[string]*dsl.CompiledStep{}
	var stepIDs, reviewable []string
	for _, cs := range w.Steps {
		steps[cs.ID] = cs
		stepIDs = append(stepIDs, cs.ID)
		if waitsForReview(cs) {
			reviewable = append(reviewable, cs.ID)
		}
	}
	var tools []string
	for _, s := range toolspec.All() {
		if s.Kind == toolspec.KindActivity {
			tools = append(tools, s.Name)
		}
	}
	var problems []dsl.Diagnostic
	for _, k := range slices.Sorted(maps.Keys(fx.Mocks)) {
		ptr := "/mocks/" + pointerToken(k)
		var tool *toolspec.Spec // the tool whose output the mock stands for, when one is known
		if cs, ok := steps[k]; ok {
			kind := stepKind(cs)
			if kind == toolspec.KindInline || kind == toolspec.KindReview {
				hint := "only steps that call a tool take mocks: remove it"
				if kind == toolspec.KindReview {
					hint = `answer it in "reviews" instead`
				}
				problems = append(problems, at(ptr, fmt.Sprintf("step %q is %s step, which never calls a tool: its mock would never be used", k, english.A(cs.Tool)), hint))
				continue
			}
			if kind == toolspec.KindActivity {
				tool = cs.Spec
			}
		} else if spec, ok := toolspec.Lookup(k); ok && spec.Kind != toolspec.KindActivity {
			problems = append(problems, at(ptr, fmt.Sprintf("%s runs inside the workflow and never calls a tool: a mock for it would never be used", k),
				"mock the tools its steps call"))
			continue
		} else if !ok {
			hint := fmt.Sprintf("mocks are keyed by a step id (%s) or a tool name", listShort(stepIDs))
			if m := nearest(k, append(append([]string{}, stepIDs...), tools...)); m != "" {
				hint = fmt.Sprintf("did you mean %q? %s", m, hint)
			}
			problems = append(problems, at(ptr, fmt.Sprintf("the workflow has no step %q and there is no tool %q", k, k), hint))
			continue
		} else {
			tool = spec
		}
		mockProblems := checkMockValue(at, ptr, fx.Mocks[k])
		problems = append(problems, mockProblems...)
		if len(mockProblems) == 0 && tool != nil {
			out := checkMockOutput(src, tool, ptr, fx.Mocks[k])
			if w.Dialect == dsl.DialectVai {
				// vai's fixtures mock vai's outputs, which its files read (and validate warns of
				// such a read): said, as validate says it, without failing the case.
				for i := range out {
					out[i].Severity = dsl.SeverityWarning
				}
			}
			problems = append(problems, out...)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(fx.Reviews)) {
		ptr := "/reviews/" + pointerToken(k)
		step := k
		if m := reviewKey.FindStringSubmatch(k); m != nil {
			step = m[1]
		}
		cs, ok := steps[step]
		switch {
		case !ok:
			hint := fmt.Sprintf("reviews are keyed by a review's id (step, step[1], agent/CALL_ID) or its step: %s", listShort(reviewable))
			if len(reviewable) == 0 {
				hint = "no step of this workflow waits for a review: remove it"
			}
			if m := nearest(step, reviewable); m != "" {
				hint = fmt.Sprintf("did you mean %q? %s", m, hint)
			}
			problems = append(problems, at(ptr, fmt.Sprintf("the workflow has no step %q", step), hint))
			continue
		case !waitsForReview(cs):
			hint := fmt.Sprintf("the steps that can: %s", listShort(reviewable))
			if len(reviewable) == 0 {
				hint = "no step of this workflow waits for a review: remove it"
			}
			problems = append(problems, at(ptr, fmt.Sprintf("step %q is %s step, which never waits for a review", step, english.A(cs.Tool)), hint))
			continue
		}
		for _, dk := range slices.Sorted(maps.Keys(fx.Reviews[k])) {
			if slices.Contains(decisionKeys, dk) {
				continue
			}
			hint := "a decision has decision, data, reviewer and comment"
			if m := nearest(dk, decisionKeys); m != "" {
				hint = fmt.Sprintf("did you mean %q? %s", m, hint)
			}
			problems = append(problems, at(ptr+"/"+pointerToken(dk), fmt.Sprintf("unknown key %q in a review decision", dk), hint))
		}
	}
	// What a step's status is expected to be: a step of the workflow, a status of the vocabulary
	// every surface shows (a "complete" matched nothing and the fixture failed with a puzzle).
	for _, k := range slices.Sorted(maps.Keys(fx.Expect.Steps)) {
		ptr := "/expect/steps/" + pointerToken(k)
		if _, ok := steps[k]; !ok {
			hint := fmt.Sprintf("expect.steps is keyed by step ids: %s", listShort(stepIDs))
			if m := nearest(k, stepIDs); m != "" {
				hint = fmt.Sprintf("did you mean %q? %s", m, hint)
			}
			problems = append(problems, at(ptr, fmt.Sprintf("the workflow has no step %q", k), hint))
			continue
		}
		if st := fx.Expect.Steps[k].Status; !slices.Contains(stepStatuses, st) {
			hint := "a step ends " + strings.Join(stepStatuses, ", ")
			if m := nearest(st, stepStatuses); m != "" {
				hint = fmt.Sprintf("did you mean %q? %s", m, hint)
			}
			problems = append(problems, at(ptr+"/status", fmt.Sprintf("%q is not a step status", st), hint))
		}
	}
	// In the order of the file, as validate prints a workflow's problems.
	sort.SliceStable(problems, func(i, j int) bool {
		a, b := problems[i], problems[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	for _, d := range problems {
		if d.Severity == dsl.SeverityWarning {
			warnings = append(warnings, d.String())
			continue
		}
		errs = append(errs, d.String())
	}
	return errs, warnings
}

// stepStatuses are the statuses a step of a finished fixture run can have.
var stepStatuses = []string{workflows.StatusCompleted, workflows.StatusFailed, workflows.StatusSkipped, workflows.StatusCancelled,
	workflows.StatusNotRun, workflows.StatusAwaitingReview}

// checkMockValue refuses $-keys a mocked output does not know ($eror for $error would otherwise
// be returned as the output) and a $calls that is not a list.
func checkMockValue(at func(pointer, msg, hint string) dsl.Diagnostic, ptr string, v any) []dsl.Diagnostic {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var problems []dsl.Diagnostic
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !strings.HasPrefix(k, "$") || slices.Contains(mockKeys, k) || k == "$weftBlob" {
			continue
		}
		hint := `a mock is an output, {"$error": "message"} or {"$calls": [output, ...]}`
		if n := nearest(k, mockKeys); n != "" {
			hint = fmt.Sprintf("did you mean %q? %s", n, hint)
		}
		problems = append(problems, at(ptr+"/"+pointerToken(k), fmt.Sprintf("unknown key %q in a mock", k), hint))
	}
	if e, ok := m["$error"]; ok {
		if _, isText := e.(string); !isText {
			problems = append(problems, at(ptr+"/$error", "$error is the failure's message: a string", `{"$error": "quota exceeded"}`))
		}
	}
	if c, ok := m["$calls"]; ok {
		calls, isList := c.([]any)
		if !isList {
			problems = append(problems, at(ptr+"/$calls", "$calls is a list of outputs, one per call", `{"$calls": [first, second]}`))
		}
		for i, out := range calls {
			problems = append(problems, checkMockValue(at, fmt.Sprintf("%s/$calls/%d", ptr, i), out)...)
		}
	}
	return problems
}

// checkMockOutput checks a mocked output (each of a $calls list) against what the tool can return
// (toolspec.Spec.MockSchema, from its Go output type): a field it does not have, a value of the
// wrong type. A fixture could otherwise pass on an output the real tool never gives. A mock may
// leave fields out; a $error mock is a failure, not an output.
func checkMockOutput(src *dsl.Source, tool *toolspec.Spec, ptr string, v any) []dsl.Diagnostic {
	sch := tool.MockSchema()
	if sch == nil {
		return nil
	}
	if m, ok := v.(map[string]any); ok {
		if _, failed := m["$error"]; failed {
			return nil
		}
		if _, stored := m["$weftBlob"]; stored {
			return nil // a reference to an output kept in the store, as a large output is
		}
		if calls, ok := m["$calls"].([]any); ok {
			var out []dsl.Diagnostic
			for i, c := range calls {
				out = append(out, checkMockOutput(src, tool, fmt.Sprintf("%s/$calls/%d", ptr, i), c)...)
			}
			return out
		}
	}
	ds := src.Check(ptr, sch)
	for i := range ds {
		if ds[i].Hint == "" {
			ds[i].Hint = fmt.Sprintf("a mock stands for what %s returns: give a value it could", tool.Name)
		}
	}
	return ds
}

// stepKind is the kind of a step's tool ("" when the tool is unknown).
func stepKind(cs *dsl.CompiledStep) toolspec.Kind {
	if cs.Spec != nil {
		return cs.Spec.Kind
	}
	if s, ok := toolspec.Lookup(cs.Tool); ok {
		return s.Kind
	}
	return ""
}

// waitsForReview: review steps, agents (their approved tool calls) and child workflows (the
// reviews inside them) are the steps a review decision can answer.
func waitsForReview(cs *dsl.CompiledStep) bool {
	switch stepKind(cs) {
	case toolspec.KindReview, toolspec.KindAgent, toolspec.KindChild:
		return true
	}
	return false
}

// pointerToken escapes a key for a JSON pointer.
func pointerToken(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

// listShort lists names, the first eight of them.
func listShort(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 8 {
		return strings.Join(names[:8], ", ") + ", …"
	}
	return strings.Join(names, ", ")
}

// nearest is the candidate closest to s, when it is close enough to be a typo.
func nearest(s string, candidates []string) string { return fuzzy.Nearest(s, candidates) }
