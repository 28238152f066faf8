package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/eval/report"
	"github.com/weftworks/weft/runwire"
)

// The trajectory graders read the tool calls of the case's run as its Execution holds them
// (every surface's one computed value): Step's agent's, or every step's in the steps' order. A
// call counts whatever it ended with (completed, failed, refused, tool drift) except one a stop
// condition skipped before it ran.

// toolOrder is the toolOrder grader: a list of tools, or {"order": [...], "exact": true}.
type toolOrder struct {
	Order []string `json:"order"`
	// Exact: the calls are these, in this order, and no others (else a subsequence: these calls
	// in this order, others between them allowed).
	Exact bool `json:"exact,omitempty"`
}

func (x Expect) toolOrder() (toolOrder, error) {
	var o toolOrder
	if json.Unmarshal(x.ToolOrder, &o.Order) == nil && len(o.Order) > 0 {
		return o, nil
	}
	if err := json.Unmarshal(x.ToolOrder, &o); err != nil || len(o.Order) == 0 {
		return o, errors.New(`toolOrder: give a list of tools ("search", "workflow:NAME", "mcp:SERVER/TOOL"), or {"order": [...], "exact": true}`)
	}
	return o, nil
}

// trajectoryGraders says whether x grades the run's tool calls.
func (x Expect) trajectoryGraders() bool {
	return x.Tools != nil || len(x.ToolOrder) > 0 || x.MaxToolCalls != nil
}

// toolCalls are the tools called in e's run, in order: step's (every step's when "").
func toolCalls(e *weftclient.Execution, step string) ([]string, error) {
	if e == nil || e.State == nil {
		why := "the run's state could not be read"
		if e != nil && e.StateErr != "" {
			why += ": " + e.StateErr
		}
		return nil, errors.New(why)
	}
	var calls []string
	found := step == ""
	for _, s := range e.State.GetSteps() {
		if step != "" && s.GetId() != step {
			continue
		}
		found = true
		for _, c := range s.GetToolCalls() {
			if c.GetStatus() != runwire.StatusSkipped {
				calls = append(calls, c.GetTool())
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("the run has no step %q", step)
	}
	return calls, nil
}

// GradeTrajectory applies x's trajectory graders (tools, toolOrder, maxToolCalls; on x.Step or
// the whole run) to the tool calls of e, the case's run.
func GradeTrajectory(x Expect, e *weftclient.Execution) []report.Grade {
	var grades []report.Grade
	add := func(g string, pass bool, detail string) {
		s := 0.0
		if pass {
			s = 1
		}
		grades = append(grades, report.Grade{Grader: g, Pass: pass, Score: s, Detail: detail})
	}
	calls, err := toolCalls(e, x.Step)
	if err != nil {
		for _, g := range []struct {
			name string
			on   bool
		}{{"tools", x.Tools != nil}, {"toolOrder", len(x.ToolOrder) > 0}, {"maxToolCalls", x.MaxToolCalls != nil}} {
			if g.on {
				add(g.name, false, err.Error())
			}
		}
		return grades
	}
	of := "the run"
	if x.Step != "" {
		of = "step " + x.Step
	}
	called := slices.Compact(slices.Sorted(slices.Values(calls)))
	if x.Tools != nil {
		want := slices.Compact(slices.Sorted(slices.Values(x.Tools)))
		var missing, extra []string
		for _, t := range want {
			if !slices.Contains(called, t) {
				missing = append(missing, t)
			}
		}
		for _, t := range called {
			if !slices.Contains(want, t) {
				extra = append(extra, t)
			}
		}
		var why []string
		if len(missing) > 0 {
			why = append(why, "not called: "+strings.Join(missing, ", "))
		}
		if len(extra) > 0 {
			why = append(why, "called too: "+strings.Join(extra, ", "))
		}
		add("tools", len(why) == 0, cond(len(why) == 0, "", fmt.Sprintf("%s called %s; %s", of, cond(len(called) == 0, "no tool", strings.Join(called, ", ")), strings.Join(why, "; "))))
	}
	if len(x.ToolOrder) > 0 {
		o, _ := x.toolOrder()
		pass := slices.Equal(calls, o.Order)
		how := "exactly"
		if !o.Exact {
			pass, how = subsequence(o.Order, calls), "in this order"
		}
		add("toolOrder", pass, cond(pass, "", fmt.Sprintf("want %s %s; %s called %s", how, strings.Join(o.Order, " → "), of, listOrNone(calls))))
	}
	if x.MaxToolCalls != nil {
		pass := len(calls) <= *x.MaxToolCalls
		add("maxToolCalls", pass, cond(pass, "", fmt.Sprintf("%s made %d tool calls, more than %d", of, len(calls), *x.MaxToolCalls)))
	}
	return grades
}

// subsequence says whether want appear in got in order (others between them allowed).
func subsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "no tool"
	}
	return strings.Join(s, " → ")
}
