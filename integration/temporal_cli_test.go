package integration

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// temporalCLI is the temporal CLI built by make temporal (make test builds it first).
func temporalCLI(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs("../bin/temporal")
	require.NoError(t, err)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the temporal CLI is missing (%v): run make temporal", err)
	}
	return bin
}

// runTemporal runs the temporal CLI against the test server and returns its output and exit code.
func runTemporal(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	args = append(args, "--address", server.Address, "--namespace", server.Namespace)
	out, err := exec.Command(bin, args...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err, string(out))
	return string(out), 0
}

// TestTemporalCLIReview decides a review the way the README shows, with the real temporal CLI
// (make temporal puts it in bin/; make test builds it first).
func TestTemporalCLIReview(t *testing.T) {
	bin := temporalCLI(t)
	c := dial(t)
	queue := "temporal-cli"
	startWorker(t, c, queue, nil)
	code, _, errOut := weft(t, queue, "run", "approval-demo", "--id", "tcli-1", "--detach")
	require.Equal(t, 0, code, errOut)
	waitForReview(t, c, "tcli-1")
	temporal := func(args ...string) string {
		out, code := runTemporal(t, bin, args...)
		require.Equal(t, 0, code, out)
		return out
	}
	state := temporal("workflow", "query", "--workflow-id", "tcli-1", "--type", "state")
	require.Contains(t, state, "awaiting_review")
	temporal("workflow", "signal", "--workflow-id", "tcli-1", "--name", "review", "--input", `{"decision":"approve","reviewer":"ana"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, c.GetWorkflow(ctx, "tcli-1", "").Get(ctx, nil), "the signal decided the review")
}

// TestTemporalCLIReviewUpdate runs the README's `temporal workflow update execute --name review`
// line: it exits 0 and prints the decision recorded (the Update used to answer a protobuf that
// the CLI cannot decode into an interface: exit 1, "must be a concrete type", although the review
// was applied). A decision the validator refuses exits non-zero with its message, and leaves the
// review pending.
func TestTemporalCLIReviewUpdate(t *testing.T) {
	bin := temporalCLI(t)
	c := dial(t)
	queue := "temporal-cli-update"
	startWorker(t, c, queue, nil)
	code, _, errOut := weft(t, queue, "run", "approval-demo", "--id", "tcli-update-1", "--detach")
	require.Equal(t, 0, code, errOut)
	waitForReview(t, c, "tcli-update-1")

	out, code := runTemporal(t, bin, "workflow", "update", "execute", "--workflow-id", "tcli-update-1", "--name", "review",
		"--input", `{"step":"approval","decision":"maybe"}`)
	require.NotEqual(t, 0, code, out)
	require.Contains(t, out, `maybe`)
	require.Contains(t, out, `is not approve, edit or reject`)
	require.Len(t, waitForReview(t, c, "tcli-update-1").PendingReviews, 1, "the refused decision left the review pending")

	// The README's line, as written.
	out, code = runTemporal(t, bin, "workflow", "update", "execute", "--workflow-id", "tcli-update-1", "--name", "review",
		"--input", `{"step":"approval","decision":"reject","comment":"not yet"}`)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "reject")
	require.Contains(t, out, "not yet")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := c.GetWorkflow(ctx, "tcli-update-1", "").Get(ctx, nil)
	require.ErrorContains(t, err, "not yet", "the update decided the review: the run failed on the reject")
}
