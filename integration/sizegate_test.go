package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	weftclient "github.com/weftworks/weft/client"
)

// TestSizeGateAndStuckCancel: on a real server, values that used to fail every workflow task
// with PayloadsTooLarge forever now end cleanly: a template producing 2.7 MB fails its run with
// the size and the limit, a 3 MB review edit is refused by the validator (the run goes on and
// is decided), a 3 MB inline input is refused before the start. And a run whose workflow task
// keeps failing anyway is ended by weft cancel, which says it terminated it.
func TestSizeGateAndStuckCancel(t *testing.T) {
	c := dial(t)
	queue := "size-gate"
	startWorker(t, c, queue, nil)
	wc := weftclient.New(c, queue)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// A template producing 2.7 MB from a 700 KB input: the run fails, it does not hang.
	doc := filepath.Join(t.TempDir(), "doc.txt")
	require.NoError(t, os.WriteFile(doc, []byte(strings.Repeat("x", 700<<10)), 0o644))
	big := writeTemp(t, `{"name":"big","inputs":{"doc":{"type":"string"}},"steps":[
	  {"id":"t","tool":"template","inputs":{"text":"{{ inputs.doc }}{{ inputs.doc }}{{ inputs.doc }}{{ inputs.doc }}"}}],
	  "output":"{{ t.output.text.length }}"}`)
	code, out, errOut := weft(t, queue, "run", big, "--id", "size-template", "--input", "doc=@"+doc)
	require.NotEqual(t, 0, code, out+errOut)
	require.Contains(t, out+errOut, `the template step's output is 2.7 MB of JSON, more than weft puts into a run's history (1.5 MB`)
	d, err := wc.Describe(ctx, "size-template")
	require.NoError(t, err)
	require.Equal(t, "failed", d.Status)

	// A 3 MB review edit is refused before history; the run is still decided afterwards.
	review := writeTemp(t, `{"name":"rv","steps":[{"id":"ok","tool":"review","inputs":{"title":"Ship?","data":"small"}}],
	  "output":"{{ ok.output.decision }}"}`)
	code, out, errOut = weft(t, queue, "run", review, "--id", "size-review", "--detach")
	require.Equal(t, 0, code, out+errOut)
	require.Eventually(t, func() bool {
		p, err := wc.Pending(ctx, "size-review")
		return err == nil && len(p) == 1
	}, time.Minute, 100*time.Millisecond)
	_, err = wc.Review(ctx, "size-review", weftclient.Decision{Step: "ok", Decision: "edit", Data: strings.Repeat("x", 3<<20), Reviewer: "rita"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "more than a review edit may carry (1.0 MB)")
	_, err = wc.Review(ctx, "size-review", weftclient.Decision{Step: "ok", Decision: "approve", Reviewer: "rita"})
	require.NoError(t, err)
	res, err := wc.Result(ctx, "size-review")
	require.NoError(t, err)
	require.Equal(t, "approve", res.GetOutput().GetStringValue())

	// A 3 MB inline input is refused before the start, with the limit named.
	large := filepath.Join(t.TempDir(), "large.txt")
	require.NoError(t, os.WriteFile(large, []byte(strings.Repeat("x", 3<<20)), 0o644))
	code, out, errOut = weft(t, queue, "run", big, "--id", "size-input", "--input", "doc=@"+large)
	require.NotEqual(t, 0, code, out+errOut)
	require.Contains(t, out+errOut, "weft starts runs up to 1.5 MB")

	// A run whose workflow task fails every time (as one over Temporal's limits did): weft
	// cancel terminates it and says so.
	stuckQueue := queue + "-stuck"
	w := sdkworker.New(c, stuckQueue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context) error { panic("every task fails") }, workflow.RegisterOptions{Name: "stuck"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "size-stuck", TaskQueue: stuckQueue}, "stuck")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		d, err := wc.Describe(ctx, "size-stuck")
		return err == nil && d.TaskAttempt >= weftclient.StuckTaskAttempts
	}, time.Minute, 100*time.Millisecond)
	code, out, errOut = weft(t, stuckQueue, "cancel", "size-stuck")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "Terminated size-stuck: cancelled by")
	require.Contains(t, out, "so the cancel could not be delivered")
	d, err = wc.Describe(ctx, "size-stuck")
	require.NoError(t, err)
	require.Equal(t, "terminated", d.Status)
}
