package integration

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
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
	// A client follows the run through the crash: the run's events are rebuilt by replay on the
	// new worker, and the client sees each once, in order.
	var mu sync.Mutex
	var seen []events.Event
	streamed := make(chan error, 1)
	go func() {
		_, err := weftclient.New(c, queue).Stream(context.Background(), "crash-1", weftclient.StreamOptions{NoDeltas: true}, func(e events.Event) {
			mu.Lock()
			seen = append(seen, e)
			mu.Unlock()
		})
		streamed <- err
	}()
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

	select {
	case err := <-streamed:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("the client's stream did not end with the run")
	}
	mu.Lock()
	defer mu.Unlock()
	var kinds []string
	started := map[string]int{}
	for i, e := range seen {
		require.Equal(t, int64(i+1), e.Seq, "event %d (%s %s): numbered 1, 2, 3, … across the crash, none missing or twice", i, e.Type, e.Step)
		if e.Type == events.StepStarted {
			started[e.Step]++
		}
		if e.Step != "" {
			kinds = append(kinds, e.Type+" "+e.Step)
		} else {
			kinds = append(kinds, e.Type)
		}
	}
	require.Equal(t, map[string]int{"a": 1, "b": 1, "c": 1}, started, "each step started once as the run saw it (b's activity ran twice; the step did not): %v", kinds)
	require.Equal(t, events.RunCompleted, seen[len(seen)-1].Type, "%v", kinds)
}
