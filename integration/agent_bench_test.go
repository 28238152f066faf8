package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/stretchr/testify/require"
	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/worker"
)

// loopModel is a zero-latency model: it asks for one search per turn until it has seen n tool
// results, then answers.
func loopModel(n int) activities.Handler {
	return func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		msgs, _ := in["messages"].([]any)
		seen := 0
		for _, m := range msgs {
			if mm, _ := m.(map[string]any); mm["role"] == "tool" {
				seen++
			}
		}
		if seen >= n {
			return map[string]any{"text": "done", "toolCalls": []any{}}, &toolspec.Usage{TotalTokens: 1}, nil
		}
		return map[string]any{"text": "", "toolCalls": []any{map[string]any{"id": fmt.Sprintf("c%d", seen), "name": "search", "arguments": `{"query":"q","collection":"c"}`}}}, &toolspec.Usage{TotalTokens: 1}, nil
	}
}

func agentFile(iterations int) string {
	return fmt.Sprintf(`{"name":"bench-agent","steps":[{"id":"a","tool":"agent","inputs":{"prompt":"go","tools":["search"],"maxIterations":%d}}],"output":"{{ a.output.text }}"}`, iterations+1)
}

// handAgent is the hand-written counterpart: the same llm and search activities in a loop.
func handAgent(ctx workflow.Context, n int) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	msgs := []any{map[string]any{"role": "user", "content": "go"}}
	for {
		var r toolspec.Result
		if err := workflow.ExecuteActivity(ctx, "llm", map[string]any{"messages": msgs}).Get(ctx, &r); err != nil {
			return "", err
		}
		out := r.Output.(map[string]any)
		calls, _ := out["toolCalls"].([]any)
		if len(calls) == 0 {
			return out["text"].(string), nil
		}
		msgs = append(msgs, map[string]any{"role": "assistant", "toolCalls": calls})
		var tr toolspec.Result
		if err := workflow.ExecuteActivity(ctx, "search", map[string]any{"query": "q", "collection": "c"}).Get(ctx, &tr); err != nil {
			return "", err
		}
		msgs = append(msgs, map[string]any{"role": "tool", "toolCallId": calls[0].(map[string]any)["id"], "content": "result"})
	}
}

// BenchmarkAgent10 runs an agent of 10 iterations with one tool call each (plus the answering
// turn) against the hand-written loop doing the same activities, zero-latency model:
//
//	go test ./integration -run '^$' -bench Agent10 -benchtime 3x
func BenchmarkAgent10(b *testing.B) {
	c := dial(b)
	queue := "bench-agent"
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Handlers: map[string]activities.Handler{"llm": loopModel(10), "search": noop}})
	if err != nil {
		b.Fatal(err)
	}
	w.RegisterWorkflowWithOptions(handAgent, workflow.RegisterOptions{Name: "handAgent"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	e := &benchEnv{c: c, queue: queue}
	e.sideBySide(b, e.weft(b, "bench-agent", agentFile(10), nil), e.hand("handAgent", 10))
}

// TestAgentHistoryPerIteration counts the history events one agent iteration adds (a model call
// and one tool call), so that long agents can be planned against Temporal's limits.
func TestAgentHistoryPerIteration(t *testing.T) {
	c := dial(t)
	queue := "agent-history"
	startWorker(t, c, queue, map[string]activities.Handler{"llm": loopModel(1), "search": noop})
	// The runs are started detached and their results read without following them; a followed
	// run is counted below (following adds nothing).
	count := func(iterations int, id string) int {
		code, out, errOut := weft(t, queue, "run", writeTemp(t, agentFile(iterations)), "--id", id, "--detach")
		if code != 0 {
			t.Fatalf("run %s: %s %s", id, out, errOut)
		}
		require.NoError(t, c.GetWorkflow(context.Background(), id, "").Get(context.Background(), nil))
		return historyLength(t, c, id)
	}
	one := count(1, "agent-hist-1")
	// Ten iterations: the model asks for ten searches (a second worker queue runs that model).
	queue10 := "agent-history-10"
	startWorker(t, c, queue10, map[string]activities.Handler{"llm": loopModel(10), "search": noop})
	queue = queue10
	ten := count(10, "agent-hist-10")
	per := float64(ten-one) / 9
	t.Logf("history events: %d for 1 iteration, %d for 10: %.1f per iteration (one model call + one tool call)", one, ten, per)
	if per > 14 {
		t.Fatalf("%.1f history events per agent iteration; expected at most 14 (2 activities and their workflow tasks)", per)
	}
	// Followed by weft run: it reads the run's events query when the history grows, which
	// writes nothing: the same history as unfollowed.
	code, out, errOut := weft(t, queue, "run", writeTemp(t, agentFile(10)), "--id", "agent-hist-10-followed", "--quiet")
	require.Equal(t, 0, code, "%s %s", out, errOut)
	followed := historyLength(t, c, "agent-hist-10-followed")
	t.Logf("followed by weft run: %d history events for 10 iterations (%d unfollowed)", followed, ten)
	require.Equal(t, ten, followed, "following a run adds nothing to its history")
}
