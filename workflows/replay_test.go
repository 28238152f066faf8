package workflows_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestReplayRecordedHistories replays histories recorded on a real server
// (go test ./integration -run TestRecordAndReplayHistories -args -update-histories). A change to
// the interpreter that would break running executions fails here; guard intended changes with
// workflow.GetVersion. histories/struct-definition holds runs recorded before run requests
// carried the file's text (definition_json): they carry the definition as a struct, and are
// kept as they are, since such runs may still be open when a worker is upgraded.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 3)
	legacy, err := filepath.Glob("testdata/histories/struct-definition/*.json")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(legacy), 3)
	for _, f := range append(files, legacy...) {
		name := strings.TrimPrefix(f, "testdata/histories/")
		t.Run(name, func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(workflows.Run, workflow.RegisterOptions{Name: runwire.WorkflowType})
			r.RegisterWorkflowWithOptions(workflows.Chat, workflow.RegisterOptions{Name: runwire.ChatWorkflowType})
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			hist, err := client.HistoryFromJSON(bytes.NewReader(data), client.HistoryJSONOptions{})
			require.NoError(t, err)
			// The recording test ran each sample with the id history-NAME: child workflow ids
			// derive from it, so replay must use the same.
			id := "history-" + strings.TrimSuffix(filepath.Base(f), ".json")
			require.NoError(t, r.ReplayWorkflowHistoryWithOptions(quietLogger(), hist,
				worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id}}))
		})
	}
}

// TestReplayDetectsChangedCommands shows the replay check can fail: a "weft" workflow that
// schedules other commands does not replay the recorded history.
func TestReplayDetectsChangedCommands(t *testing.T) {
	changed := func(ctx workflow.Context, req *weftv1.RunRequest) (*weftv1.RunResult, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 1})
		_ = workflow.ExecuteActivity(ctx, "rerank", map[string]any{}).Get(ctx, nil)
		return &weftv1.RunResult{}, nil
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: runwire.WorkflowType})
	err := r.ReplayWorkflowHistoryFromJSONFile(quietLogger(), "testdata/histories/multi-collection-search.json")
	require.Error(t, err)
}

// TestReplayOnATightenedRegistry: a release that tightens a tool's input schema must not break
// runs in flight. Runs recorded since ChangeCheckedOnce carry the verdicts of their registry
// checks (the definition's tool inputs, the agent's tool-call arguments), so they replay on a
// registry where those inputs no longer fit; runs recorded before it check again on replay and
// fail, which shows the tightening bites.
func TestReplayOnATightenedRegistry(t *testing.T) {
	defer toolspec.TightenForTest("similarity", `{"type":"object","required":["text1","text2"],"properties":{
	  "text1":{"type":"string","minLength":10},"text2":{"type":"string","minLength":10}}}`)()
	defer toolspec.TightenForTest("search", `{"type":"object","required":["query","mustHave"],"properties":{
	  "query":{"type":"string"},"mustHave":{"type":"string"}}}`)()
	data, err := os.ReadFile("../testdata/fixtures/replay-mix.json")
	require.NoError(t, err)
	_, err = dsl.Load("replay-mix.json", data)
	require.ErrorContains(t, err, "text1", "the recorded definition no longer fits the tightened schema")

	replay := func(file string) error {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(workflows.Run, workflow.RegisterOptions{Name: runwire.WorkflowType})
		id := "history-" + strings.TrimSuffix(filepath.Base(file), ".json")
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		hist, err := client.HistoryFromJSON(bytes.NewReader(b), client.HistoryJSONOptions{})
		require.NoError(t, err)
		return r.ReplayWorkflowHistoryWithOptions(quietLogger(), hist, worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id}})
	}
	for _, f := range []string{"checked-once-mix", "checked-once-agent"} {
		require.NoError(t, replay("testdata/histories/"+f+".json"), "%s replays on the tightened registry", f)
	}
	for _, f := range []string{"replay-mix", "agent-replay"} {
		require.Error(t, replay("testdata/histories/"+f+".json"), "%s (recorded before the checks were recorded) checks again", f)
	}
}
