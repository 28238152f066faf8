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

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
)

// TestRetryResumesAFailedRun: weft retry reuses the steps that completed, runs the corrected one
// and what follows; --from runs a completed step again; a completed run is not retried.
func TestRetryResumesAFailedRun(t *testing.T) {
	c := dial(t)
	queue := "retry"
	se := &sideEffects{path: filepath.Join(t.TempDir(), "effects.log")}
	startWorker(t, c, queue, map[string]activities.Handler{"embed": func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		text := fmt.Sprint(in["text"])
		se.record("embed " + text)
		if text == "boom" {
			return nil, nil, &activities.InputError{Msg: "cannot embed boom"}
		}
		return map[string]any{"text": strings.ToUpper(text)}, nil, nil
	}})
	dir := t.TempDir()
	flow := func(b string) string {
		return `{"name":"retry-flow","steps":[
		  {"id":"a","tool":"embed","inputs":{"text":"a"}},
		  {"id":"b","tool":"embed","inputs":{"text":"` + b + `"},"dependsOn":["a"]},
		  {"id":"c","tool":"embed","inputs":{"text":"{{ a.output.text }}-{{ b.output.text }}"}}],
		  "output":"{{ c.output.text }}"}`
	}
	broken, fixed := filepath.Join(dir, "broken.json"), filepath.Join(dir, "fixed.json")
	require.NoError(t, os.WriteFile(broken, []byte(flow("boom")), 0o644))
	require.NoError(t, os.WriteFile(fixed, []byte(flow("fixed")), 0o644))

	code, out, errOut := weft(t, queue, "run", broken, "--id", "retry-1")
	require.Equal(t, 1, code)
	require.Contains(t, out, "cannot embed boom")
	require.Contains(t, errOut, "Failed at step b (its error is above)")
	require.NotContains(t, out+errOut, "retryable", "no Temporal internals")
	code, out, _ = weft(t, queue, "status", "retry-1")
	require.Equal(t, 1, code, "a failed run's status exits 1")
	require.Contains(t, out, "Failed at step b (its error is above).")
	require.Equal(t, 1, strings.Count(out, "cannot embed boom"))

	code, out, errOut = weft(t, queue, "retry", "retry-1", "--file", fixed, "--id", "retry-1b")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "reused: a")
	require.Contains(t, out, "runs:   b, c")
	require.Contains(t, out, `"A-FIXED"`)
	require.Equal(t, 1, se.count("embed a"), "a completed before and was not run again")
	require.Equal(t, 1, se.count("embed fixed"))
	st, err := weftclient.New(c, queue).State(context.Background(), "retry-1b")
	require.NoError(t, err)
	require.Equal(t, "reused from run retry-1", st.Steps[0].Reason)
	code, out, _ = weft(t, queue, "status", "retry-1b")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "[reused from run retry-1]", "weft status says a step was reused, as the README does")

	code, out, errOut = weft(t, queue, "retry", "retry-1", "--file", fixed, "--from", "a", "--id", "retry-1c", "--json")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, `"rerun": [`)
	require.Equal(t, 2, se.count("embed a"), "--from a runs a again")

	code, _, errOut = weft(t, queue, "retry", "retry-1b")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "retry-1b completed: there is nothing to resume")
}

// TestChildReviewsUnderTheParent: a review inside a workflow step's child run is listed by the
// parent's status and decided with the parent's id.
func TestChildReviewsUnderTheParent(t *testing.T) {
	c := dial(t)
	queue := "child-review"
	startWorker(t, c, queue, nil)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "parent.json"), []byte(`{"name":"parent","steps":[
	  {"id":"release","tool":"workflow","inputs":{"workflow":"approval-demo","inputs":{"version":"3.0"}}},
	  {"id":"after","tool":"template","inputs":{"text":"child said {{ release.output.decision }}"}}],"output":"{{ after.output.text }}"}`), 0o644))
	code, _, errOut := weft(t, queue, "run", filepath.Join(dir, "parent.json"), "--id", "parent-1", "--detach")
	require.Equal(t, 0, code, errOut)
	wc := weftclient.New(c, queue)
	gate := waitForGate(t, wc, "parent-1", "approval")
	require.Equal(t, "parent-1/release", gate.ExecutionId, "the gate lives in the child run")
	code, out, errOut := weft(t, queue, "status", "parent-1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "in child run parent-1/release")
	code, out, errOut = weft(t, queue, "review", "parent-1", "approve", "--reviewer", "ana")
	require.Equal(t, 0, code, out+errOut)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := wc.Result(ctx, "parent-1")
	require.NoError(t, err)
	require.Equal(t, `"child said approve"`, protoJSON(t, res.Output))
}

// TestTerminatedRunSaysWhy: a run Temporal ends for its history limit (simulated here: the test
// terminates it with the reason and identity the history service uses) says which limit and what
// to change, in `weft run`'s error and in `weft status`.
func TestTerminatedRunSaysWhy(t *testing.T) {
	c := dial(t)
	queue := "terminated"
	startWorker(t, c, queue, nil)
	file := writeTemp(t, `{"name":"waits","steps":[{"id":"gate","tool":"review","inputs":{"title":"wait","data":{"n":1}}}]}`)
	code, out, errOut := weft(t, queue, "run", file, "--id", "term-1", "--detach")
	require.Equal(t, 0, code, out+errOut)
	wc := weftclient.New(c, queue)
	require.Eventually(t, func() bool { p, err := wc.Pending(context.Background(), "term-1"); return err == nil && len(p) == 1 }, 20*time.Second, 50*time.Millisecond)
	require.NoError(t, c.TerminateWorkflow(context.Background(), "term-1", "", "Workflow history count exceeds limit."))
	_, err := wc.Result(context.Background(), "term-1")
	require.Error(t, err)
	msg := weftclient.Cause(err)
	require.Contains(t, msg, "terminated by Temporal")
	require.Contains(t, msg, "51,200 events")
	require.Contains(t, msg, "workflow` step")
	code, out, _ = weft(t, queue, "status", "term-1")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "Ended: the run was terminated by Temporal: Workflow history count exceeds limit.")

	code, out, errOut = weft(t, queue, "run", file, "--id", "term-2", "--detach")
	require.Equal(t, 0, code, out+errOut)
	require.Eventually(t, func() bool { p, err := wc.Pending(context.Background(), "term-2"); return err == nil && len(p) == 1 }, 20*time.Second, 50*time.Millisecond)
	require.NoError(t, c.TerminateWorkflow(context.Background(), "term-2", "", "maintenance"))
	_, err = wc.Result(context.Background(), "term-2")
	require.Contains(t, weftclient.Cause(err), "terminated by ")
	require.Contains(t, weftclient.Cause(err), ": maintenance")
}

// TestRetryAsksAnApprovalAgainWhenWhatItGuardsChanged: an approval is bound to what it let
// through. Retrying with a corrected definition that changes a step after the review asks the
// review again (it is not reused); a retry that changes nothing after it (the failed step alone)
// reuses it.
func TestRetryAsksAnApprovalAgainWhenWhatItGuardsChanged(t *testing.T) {
	c := dial(t)
	queue := "retry-approval"
	startWorker(t, c, queue, map[string]activities.Handler{"embed": func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		if fmt.Sprint(in["text"]) == "boom" {
			return nil, nil, &activities.InputError{Msg: "cannot embed boom"}
		}
		return map[string]any{"text": fmt.Sprint(in["text"])}, nil, nil
	}})
	dir := t.TempDir()
	flow := func(pay string) string {
		return `{"name":"pay","steps":[
		  {"id":"approval","tool":"review","inputs":{"title":"pay 10 to acme?","data":{"amount":10,"to":"acme"}}},
		  {"id":"pay","tool":"embed","inputs":{"text":"` + pay + `"},"dependsOn":["approval"]}]}`
	}
	broken, changed := filepath.Join(dir, "broken.json"), filepath.Join(dir, "changed.json")
	require.NoError(t, os.WriteFile(broken, []byte(flow("boom")), 0o644))
	require.NoError(t, os.WriteFile(changed, []byte(flow("10000 to mallory")), 0o644))

	code, _, errOut := weft(t, queue, "run", broken, "--id", "pay-1", "--detach")
	require.Equal(t, 0, code, errOut)
	waitForReview(t, c, "pay-1")
	code, out, errOut := weft(t, queue, "review", "pay-1", "approve", "--reviewer", "fin")
	require.Equal(t, 0, code, out+errOut)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.Error(t, c.GetWorkflow(ctx, "pay-1", "").Get(ctx, nil), "pay failed")

	code, out, errOut = weft(t, queue, "retry", "pay-1", "--id", "pay-1-same", "--detach")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "reused: approval", "nothing after the review changed: its decision stands")

	code, out, errOut = weft(t, queue, "retry", "pay-1", "--file", changed, "--id", "pay-1-changed", "--detach")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "runs:   approval, pay", "the corrected payment is approved again")
	waitForReview(t, c, "pay-1-changed")
}
