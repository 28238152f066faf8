package integration

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// TestCrashResume kills a worker process with SIGKILL while a step is in flight, starts another
// worker, and checks that the run completes and that the steps finished before the crash did not
// run again.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	c := dial(t)
	queue := "crash"
	se := &sideEffects{path: filepath.Join(t.TempDir(), "effects.log")}
	proc := startCrashWorker(t, queue, se)

	code, _, errOut := weft(t, queue, "run", "../testdata/fixtures/crash-chain.json", "--id", "crash-1", "--detach")
	require.Equal(t, 0, code, errOut)
	require.Eventually(t, func() bool { return se.count("start slow-b") == 1 }, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, 1, se.count("done a"), "step a finished before the crash")
	proc.kill(t)

	startWorker(t, c, queue, map[string]activities.Handler{"embed": countingEmbed(se)})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var res weftv1.RunResult
	require.NoError(t, c.GetWorkflow(ctx, "crash-1", "").Get(ctx, &res))
	out := res.Output.GetStructValue().AsMap()
	require.Equal(t, "a|slow-b|c", out["chain"])

	require.Equal(t, 1, se.count("start a"), "a completed before the crash and must not run again")
	require.Equal(t, 2, se.count("start slow-b"), "b was in flight when the worker died: it runs again")
	require.Equal(t, 1, se.count("done slow-b"))
	require.Equal(t, 1, se.count("start c"))
	require.Equal(t, 1, se.count("done c"))
}
