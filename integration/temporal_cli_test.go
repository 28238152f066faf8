package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTemporalCLIReview decides a review the way the README shows, with the real temporal CLI
// (make temporal puts it in bin/; make test builds it first).
func TestTemporalCLIReview(t *testing.T) {
	bin, err := filepath.Abs("../bin/temporal")
	require.NoError(t, err)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the temporal CLI is missing (%v): run make temporal", err)
	}
	c := dial(t)
	queue := "temporal-cli"
	startWorker(t, c, queue, nil)
	code, _, errOut := weft(t, queue, "run", "approval-demo", "--id", "tcli-1", "--detach")
	require.Equal(t, 3, code, errOut)
	waitForReview(t, c, "tcli-1")
	temporal := func(args ...string) string {
		args = append(args, "--address", server.Address, "--namespace", server.Namespace)
		out, err := exec.Command(bin, args...).CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	state := temporal("workflow", "query", "--workflow-id", "tcli-1", "--type", "state")
	require.Contains(t, state, "awaiting_review")
	temporal("workflow", "signal", "--workflow-id", "tcli-1", "--name", "review", "--input", `{"decision":"approve","reviewer":"ana"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, c.GetWorkflow(ctx, "tcli-1", "").Get(ctx, nil), "the signal decided the review")
}
