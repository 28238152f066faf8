package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows"
)

// TestRecordAndReplayHistories runs sample workflows on the real server, replays each history
// against the current interpreter, and with -update-histories stores them in
// workflows/testdata/histories, where workflows' replay test checks them on every change.
func TestRecordAndReplayHistories(t *testing.T) {
	c := dial(t)
	queue := "histories"
	se := &sideEffects{path: filepath.Join(t.TempDir(), "effects.log")}
	startWorker(t, c, queue, fakeHandlers(se))
	samples := []struct {
		name   string
		args   []string
		review string
	}{
		{"multi-collection-search", []string{"multi-collection-search", "--input", "query=limits"}, ""},
		{"approval-demo", []string{"approval-demo"}, `{"decision":"edit","data":{"headline":"edited","items":[]},"reviewer":"ana"}`},
		{"replay-mix", []string{"../testdata/fixtures/replay-mix.json"}, ""},
		{"agent-replay", []string{"../testdata/fixtures/agent-replay.json"}, `{"id":"agent/c3","decision":"approve","reviewer":"ana"}`},
		// Recorded since registry checks are recorded (workflows.ChangeCheckedOnce): replayed
		// on a registry whose schemas were tightened (workflows' TestReplayOnATightenedRegistry).
		{"checked-once-mix", []string{"../testdata/fixtures/replay-mix.json"}, ""},
		{"checked-once-agent", []string{"../testdata/fixtures/agent-replay.json"}, `{"id":"agent/c3","decision":"approve","reviewer":"ana"}`},
		// Recorded before ingest batched (change provider-batches/ingest): one call per document.
		{"ingest-fanout", []string{"../testdata/fixtures/ingest-fanout.json"}, ""},
	}
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			id := "history-" + s.name
			args := append([]string{"run"}, s.args...)
			code, _, errOut := weft(t, queue, append(args, "--id", id, "--detach")...)
			require.Equal(t, 0, code, errOut)
			if s.review != "" {
				waitForReview(t, c, id)
				require.NoError(t, c.SignalWorkflow(context.Background(), id, "", runwire.SignalReview, json.RawMessage(s.review)))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			require.NoError(t, c.GetWorkflow(ctx, id, "").Get(ctx, nil))
			data := historyJSON(t, c, id)
			// Runs carry the file's text (workflow_files too when they call workflows), not
			// the definition as a struct.
			req := startRequest(t, c, id)
			require.NotEmpty(t, req.GetDefinitionJson())
			require.Nil(t, req.GetDefinition())
			require.Empty(t, req.GetWorkflows())
			replayAndStore(t, id, s.name, data)
		})
	}
}

// TestRecordAndReplayChatHistory records a chat session of two turns (each an Update running an
// agent turn with a tool call) and replays it; with -update-histories it is stored for the
// workflows package's replay test.
func TestRecordAndReplayChatHistory(t *testing.T) {
	c := dial(t)
	queue := "histories-chat"
	startWorker(t, c, queue, map[string]activities.Handler{"llm": chatLLM, "search": fakeSearch})
	wc := weftclient.New(c, queue)
	id := "history-chat-session"
	_, _, err := wc.StartChat(context.Background(), id, weftclient.ChatOptions{Tools: []string{"search"}, Collection: "docs", TurnsPerRun: 2})
	require.NoError(t, err)
	for _, q := range []string{"first question", "second question"} {
		turn, err := wc.Send(context.Background(), id, q, "")
		require.NoError(t, err)
		require.Len(t, turn.ToolCalls, 1)
	}
	// Two turns per run: the first run has continued as new; replay that one.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.Eventually(t, func() bool {
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetFirstRunId() != d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}, 10*time.Second, 50*time.Millisecond, "the session continued as new")
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	first := d.GetWorkflowExecutionInfo().GetFirstRunId()
	data := runHistoryJSON(t, c, id, first)
	replayAndStore(t, id, "chat-session", data)
}

func historyJSON(t *testing.T, c client.Client, id string) []byte {
	return runHistoryJSON(t, c, id, "")
}

// runHistoryJSON is the history of one run of a workflow ("" for the latest) as JSON.
func runHistoryJSON(t *testing.T, c client.Client, id, runID string) []byte {
	var events []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(context.Background(), id, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		events = append(events, ev)
	}
	data, err := protojson.MarshalOptions{Indent: " "}.Marshal(&historypb.History{Events: events})
	require.NoError(t, err)
	return data
}

// startRequest is the RunRequest a run was started with, from its first history event.
func startRequest(t *testing.T, c client.Client, id string) *weftv1.RunRequest {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	require.True(t, it.HasNext())
	ev, err := it.Next()
	require.NoError(t, err)
	var req weftv1.RunRequest
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(ev.GetWorkflowExecutionStartedEventAttributes().GetInput(), &req))
	return &req
}

// TestRecordAndReplayBatchHistory records a forEach large enough to run in batch child
// workflows (3,000 items, concurrency 32) and replays the parent's history; with
// -update-histories it is stored under the name the layout version gives it
// (foreach-batches-vN), so each layout weft ever ran stays in the replay test.
func TestRecordAndReplayBatchHistory(t *testing.T) {
	c := dial(t)
	queue := "histories-batches"
	startWorker(t, c, queue, fanoutHandlers())
	wc := weftclient.New(c, queue)
	const n = 3000
	name := fmt.Sprintf("foreach-batches-v%d", workflows.ForEachBatchLayout)
	id := "history-" + name
	run, err := wc.Start(context.Background(), fanoutDef(n, 32), weftclient.StartOptions{ID: id, Source: "fanout", Inputs: map[string]any{"items": fanoutItems(n)}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := run.Get(ctx)
	require.NoError(t, err)
	require.EqualValues(t, n, res.Output.GetStructValue().AsMap()["count"])
	data := historyJSON(t, c, id)
	require.Contains(t, string(data), workflows.BatchWorkflowType, "the items ran in batches")
	replayAndStore(t, id, name, data)
}

// replayAndStore replays a recorded history against the current interpreter and, with
// -update-histories, stores it for the workflows package's replay test under name.
func replayAndStore(t *testing.T, id, name string, data []byte) {
	t.Helper()
	replayer := sdkworker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(workflows.Run, workflow.RegisterOptions{Name: runwire.WorkflowType})
	replayer.RegisterWorkflowWithOptions(workflows.Chat, workflow.RegisterOptions{Name: runwire.ChatWorkflowType})
	hist, err := client.HistoryFromJSON(bytesReader(data), client.HistoryJSONOptions{})
	require.NoError(t, err)
	require.NoError(t, replayer.ReplayWorkflowHistoryWithOptions(quiet(), hist,
		sdkworker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id}}))
	if *updateHistories {
		writeHistory(t, name, data)
	}
}
