package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
)

// waitFor polls cond until it holds or ctx ends (a handler's wait on what the test arranges).
func waitFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// cancelRequested reports whether the run's history holds a cancellation request of an activity.
func cancelRequested(c client.Client, id string) bool {
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return false
		}
		if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED {
			return true
		}
	}
	return false
}

func stepOutcomes(t *testing.T, c client.Client, queue, id string) map[string]string {
	t.Helper()
	st, err := weftclient.New(c, queue).State(context.Background(), id)
	require.NoError(t, err)
	out := map[string]string{}
	for _, s := range st.Steps {
		out[s.Id] = s.Status
		if s.Status == "completed" {
			out[s.Id] += " " + s.GetOutput().GetStructValue().GetFields()["text"].GetStringValue()
		}
		if s.Error != "" {
			out[s.Id] += ": " + s.Error
		}
	}
	return out
}

// TestACompletedStepSurvivesAnotherStepsFailure (issue 39, item 6): a step whose activity
// completes while another step's failure cancels it keeps its output and shows completed (its
// side effects happened; weft retry reuses it), and a step whose activity does not answer the
// cancellation is cancelled without the failed run waiting for it.
func TestACompletedStepSurvivesAnotherStepsFailure(t *testing.T) {
	c := dial(t)
	queue := "failrace"
	se := &sideEffects{path: filepath.Join(t.TempDir(), "effects.log")}
	hung := make(chan struct{})
	startWorker(t, c, queue, map[string]activities.Handler{"embed": func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		text := fmt.Sprint(in["text"])
		se.record("start " + text)
		id := activity.GetInfo(ctx).WorkflowExecution.ID
		switch {
		case text == "boom":
			// fails while the other step is in flight
			if err := waitFor(ctx, func() bool { return se.count("start keep")+se.count("start hang") > 0 }); err != nil {
				return nil, nil, err
			}
			return nil, nil, &activities.InputError{Msg: "cannot embed boom"}
		case text == "keep":
			// finishes after the workflow asked to cancel it (it does not look at its context)
			if err := waitFor(context.Background(), func() bool { return cancelRequested(c, id) }); err != nil {
				return nil, nil, err
			}
		case text == "hang":
			<-hung // never answers the cancellation
		}
		se.record("done " + text)
		return map[string]any{"text": strings.ToUpper(text)}, &toolspec.Usage{EmbeddingTokens: 4}, nil
	}})
	t.Cleanup(func() { close(hung) }) // before the worker stops
	dir := t.TempDir()
	flow := func(second, fail string) string {
		return `{"name":"fail-race","steps":[
		  {"id":"store","tool":"embed","inputs":{"text":"` + second + `"}},
		  {"id":"bad","tool":"embed","inputs":{"text":"` + fail + `"}}],
		  "output":"{{ store.output.text }} {{ bad.output.text }}"}`
	}
	broken, fixed := filepath.Join(dir, "broken.json"), filepath.Join(dir, "fixed.json")
	require.NoError(t, os.WriteFile(broken, []byte(flow("keep", "boom")), 0o644))
	require.NoError(t, os.WriteFile(fixed, []byte(flow("keep", "fine")), 0o644))

	// Recorded (-update-histories) for workflows' replay test: the activity's cancellation
	// answered by its result, and not answered within workflows' failure grace.
	code, out, errOut := weft(t, queue, "run", broken, "--id", "history-failure-keeps-completed")
	require.Equal(t, 1, code, out+errOut)
	replayAndStore(t, "history-failure-keeps-completed", "failure-keeps-completed", historyJSON(t, c, "history-failure-keeps-completed"))
	require.Contains(t, out, "cannot embed boom")
	require.Equal(t, 1, se.count("done keep"), "store's activity completed")
	require.Equal(t, map[string]string{"store": "completed KEEP", "bad": "failed: embed: cannot embed boom"}, stepOutcomes(t, c, queue, "history-failure-keeps-completed"),
		"the step whose activity completed keeps its output")

	code, out, errOut = weft(t, queue, "retry", "history-failure-keeps-completed", "--file", fixed, "--id", "failrace-1b")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "reused: store")
	require.Contains(t, out, `"KEEP FINE"`)
	require.Equal(t, 1, se.count("start keep"), "weft retry did not run the completed step again")

	hang := filepath.Join(dir, "hang.json")
	require.NoError(t, os.WriteFile(hang, []byte(flow("hang", "boom")), 0o644))
	start := time.Now()
	code, out, errOut = weft(t, queue, "run", hang, "--id", "history-failure-grace-expired")
	require.Equal(t, 1, code, out+errOut)
	replayAndStore(t, "history-failure-grace-expired", "failure-grace-expired", historyJSON(t, c, "history-failure-grace-expired"))
	require.Less(t, time.Since(start), 30*time.Second, "the failed run does not wait for an activity that ignores its cancellation")
	require.Equal(t, map[string]string{"store": "cancelled: cancelled: another step failed", "bad": "failed: embed: cannot embed boom"},
		stepOutcomes(t, c, queue, "history-failure-grace-expired"))
}
