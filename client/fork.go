package client

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/english"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// ForkOptions say where to fork an agent.
type ForkOptions struct {
	// Step is the agent step to fork.
	Step string
	// Iteration: the new run keeps the first Iteration model calls and their tool results and
	// goes on with iteration Iteration+1 (0: from the start, with the prompt edited by Message).
	Iteration int
	// Message, when set, is a user message the agent reads next (at Iteration 0 it replaces the
	// prompt).
	Message string
	// ID of the new run (default: the old id + "-fork-" + random).
	ID string
	// Origin and StartedBy as in RetryOptions.
	Origin    string
	StartedBy string
}

// ForkPlan says what a fork reuses.
type ForkPlan struct {
	Reused []string `json:"reused"`
	Rerun  []string `json:"rerun"`
	// Iterations is how many of the agent's recorded iterations the fork starts from.
	Iterations int `json:"iterations"`
	// Messages is the length of the conversation the forked agent starts from.
	Messages int `json:"messages"`
}

// Fork starts a new run that reuses what run runID recorded up to an agent's iteration — the
// outputs of the steps before the agent, the agent's model answers and tool results up to
// o.Iteration — and goes on from there, with o.Message as the next user message. The recorded
// conversation is the agent step's output when it completed (or returned at a limit); when it
// failed, the run's history: the input of its last model call, and the iterations whose model
// answers and tool results that call read. As LangGraph's update_state + fork, on Temporal: the
// source run is not changed. Only who may act on the run forks it (CheckAct).
func (c *Client) Fork(ctx context.Context, runID string, o ForkOptions) (*Run, *ForkPlan, error) {
	if err := c.CheckAct(ctx, "fork", "run "+runID, runID); err != nil {
		return nil, nil, err
	}
	old, err := c.startRequest(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	st, err := c.ownState(ctx, runID)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the recorded outputs of %s (a worker must be running to answer for a closed run): %w", runID, err)
	}
	w, err := runwire.RequestWorkflow(old)
	if err != nil {
		return nil, nil, fmt.Errorf("the run's own definition: %w", err)
	}
	cs, ok := w.Step(o.Step)
	if !ok {
		return nil, nil, &InvalidError{Err: fmt.Errorf("--step %q: the workflow has no such step", o.Step)}
	}
	if cs.Spec == nil || cs.Spec.Kind != toolspec.KindAgent {
		return nil, nil, &InvalidError{Err: fmt.Errorf("--step %q is %s step: only agent steps can be forked", o.Step, english.A(cs.Tool))}
	}
	completed := completedOutputs(st)
	var agentOut map[string]any
	for _, s := range st.Steps {
		if s.Id != o.Step {
			continue
		}
		if completed[s.Id] != nil {
			agentOut, _ = completed[s.Id].AsInterface().(map[string]any)
			continue
		}
		if s.Status != runwire.StatusFailed && !(s.Status == runwire.StatusCompleted && s.OutputTruncated) {
			return nil, nil, &InvalidError{Err: fmt.Errorf("step %s of run %s is %s: a fork starts from an agent's recorded conversation, which a completed or failed agent step holds (wait for it to end)", o.Step, runID, s.Status)}
		}
		// A failed agent (or one whose output was too large for the state) has no output: its
		// conversation is the input of its last model call, in the run's history.
		_, instructions := cs.Lazy["instructions"]
		if agentOut, err = c.recordedAgent(ctx, runID, cs.ID, instructions, s); err != nil {
			return nil, nil, err
		}
	}
	if agentOut == nil {
		return nil, nil, &InvalidError{Err: fmt.Errorf("step %s of run %s has no recorded output to fork from", o.Step, runID)}
	}
	resume, err := forkResume(agentOut, o, runID, cs.ID)
	if err != nil {
		return nil, nil, &InvalidError{Err: err}
	}
	// The definition with the agent's resume input: a lazy input, never read as a template.
	var doc map[string]any
	if err := json.Unmarshal(mustJSON(w.Def), &doc); err != nil {
		return nil, nil, fmt.Errorf("the run's definition: %w", err)
	}
	steps, _ := doc["steps"].([]any)
	for _, e := range steps {
		if s, _ := e.(map[string]any); s["id"] == o.Step {
			in, _ := s["inputs"].(map[string]any)
			if in == nil {
				in = map[string]any{}
				s["inputs"] = in
			}
			in["resume"] = resume
		}
	}
	name, _, _ := runwire.DefinitionText(old)
	fw, err := dsl.Load(name, mustJSON(doc))
	if err != nil {
		return nil, nil, fmt.Errorf("the forked definition: %w", err)
	}
	again := map[string]bool{o.Step: true}
	downstream(fw, again)
	msgs, _ := resume["messages"].([]any)
	plan := &ForkPlan{Iterations: o.Iteration, Messages: len(msgs)}
	var reuse map[string]*structpb.Value
	plan.Reused, plan.Rerun, reuse = splitPlan(fw, again, completed)
	run, err := c.startAgain(ctx, runID, old, fw, reuse, restart{ID: o.ID, Origin: o.Origin, StartedBy: o.StartedBy, Suffix: "fork"})
	if err != nil {
		return nil, nil, err
	}
	return run, plan, nil
}

// forkResume is the agent's resume input: its recorded conversation up to (not including) the
// model answer of iteration o.Iteration+1, the tool calls of those iterations, the agent that
// was answering then, and o.Message.
func forkResume(out map[string]any, o ForkOptions, runID, step string) (map[string]any, error) {
	recorded, _ := out["iterations"].(float64)
	if o.Iteration < 0 || o.Iteration > int(recorded) {
		return nil, fmt.Errorf("--iteration %d: the agent %s recorded %s; fork from 0 to %d", o.Iteration, step, english.Count(int(recorded), "iteration"), int(recorded))
	}
	msgs, _ := out["messages"].([]any)
	var kept []any
	answers := 0
	for _, m := range msgs {
		if mm, _ := m.(map[string]any); mm["role"] == "assistant" {
			answers++
			if answers > o.Iteration {
				break
			}
		}
		kept = append(kept, m)
	}
	if o.Message != "" {
		last, _ := lastOf(kept).(map[string]any)
		if o.Iteration == 0 && last["role"] == "user" {
			kept[len(kept)-1] = map[string]any{"role": "user", "content": o.Message}
		} else {
			kept = append(kept, map[string]any{"role": "user", "content": o.Message})
		}
	}
	var calls []any
	recCalls, _ := out["toolCalls"].([]any)
	for _, c := range recCalls {
		if cm, _ := c.(map[string]any); cm != nil {
			if it, _ := cm["iteration"].(float64); int(it) <= o.Iteration {
				calls = append(calls, c)
			}
		}
	}
	res := map[string]any{"messages": nonNil(kept), "toolCalls": nonNil(calls), "iteration": o.Iteration, "from": runID}
	if o.Message != "" {
		res["edited"] = true
	}
	agent := ""
	handoffs, _ := out["handoffs"].([]any)
	for _, h := range handoffs {
		if hm, _ := h.(map[string]any); hm != nil {
			if it, _ := hm["iteration"].(float64); int(it) <= o.Iteration {
				agent, _ = hm["to"].(string)
			}
		}
	}
	if agent != "" {
		res["agent"] = agent
	}
	return res, nil
}

func lastOf(s []any) any {
	if len(s) == 0 {
		return nil
	}
	return s[len(s)-1]
}

func nonNil(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
