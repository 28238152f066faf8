package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows"
)

// TestHelperRunsAreNotEverybodys: weft's own helper workflows (a notification delivery, a
// forEach's batch) record no starter; the read rule must not take them for runs the operator
// started, which any key may read.
func TestHelperRunsAreNotEverybodys(t *testing.T) {
	c := dial(t)
	wc := weftclient.New(c, "no-workers-here")
	for _, typ := range []string{workflows.NotifyWorkflowType, workflows.BatchWorkflowType} {
		id := fmt.Sprintf("helper-%s-%d", typ, time.Now().UnixNano())
		// no worker polls this queue: the start event is all there is, and all the rule reads
		_, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: "no-workers-here"}, typ, map[string]any{"anything": 1})
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), id, "", "test over") })
		mallory := &auth.Identity{Name: "mallory", Roles: []string{auth.RoleReader}}
		err = wc.CheckRead(context.Background(), "execution "+id, id, mallory)
		var refused *weftclient.RefusedError
		require.ErrorAs(t, err, &refused, typ)
		require.Contains(t, err.Error(), "is not a run or chat session")
		require.NoError(t, wc.CheckRead(context.Background(), "execution "+id, id, nil), "the operator reads anything")
	}
}
