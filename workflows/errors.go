package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// awaitDetached waits for cond even when ctx is cancelled: used to let coroutines that were
// cancelled finish their bookkeeping before a step or the run returns.
func awaitDetached(ctx workflow.Context, cond func() bool) error {
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	return workflow.Await(dctx, cond)
}

func asActivityError(err error, target **temporal.ActivityError) bool { return errors.As(err, target) }
