package workflows

import (
	"errors"

	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/workflows/dsl"
)

// ChangeCheckedOnce: what depends on the worker's tool registry (a definition's tool input
// schemas, an agent's tool-call arguments) is checked once, when the run first meets it, and the
// verdict is recorded in history (a SideEffect marker). A replay, on whatever binary, reads the
// verdict instead of checking again, so tightening a tool's schema in a new release cannot make
// an in-flight run take another path. Runs started before this change check as they always did.
const ChangeCheckedOnce = "registry-checks-recorded"

// checkedOnce reports whether the run records registry checks (ChangeCheckedOnce).
func checkedOnce(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, ChangeCheckedOnce, workflow.DefaultVersion, 1) >= 1
}

// recordedCheck runs check once and records its verdict ("" passes; otherwise the message); on
// replay the recorded verdict is returned and check is not run.
func recordedCheck(ctx workflow.Context, check func() error) (string, error) {
	var verdict string
	err := workflow.SideEffect(ctx, func(workflow.Context) any {
		if err := check(); err != nil {
			return err.Error()
		}
		return ""
	}).Get(&verdict)
	return verdict, err
}

// loadDefinition compiles the run's definition. With recorded checks the strict compile
// (dsl.Load's verdict against this worker's tools) happens once and is recorded; the run then
// executes the accepted compile, which does not look at tool schemas again.
func loadDefinition(ctx workflow.Context, recorded bool, name string, data []byte) (*dsl.Workflow, error) {
	if !recorded {
		return dsl.LoadCached(name, data)
	}
	verdict, err := recordedCheck(ctx, func() error {
		_, err := dsl.LoadCached(name, data)
		return err
	})
	if err != nil {
		return nil, err
	}
	if verdict != "" {
		return nil, errors.New(verdict)
	}
	return dsl.LoadAcceptedCached(name, data)
}

// checkToolArgs checks a model's (or a reviewer's edited) arguments for an agent's tool. The
// registry's tools are checked once and the verdict recorded (their schemas are the worker's);
// the others' schemas come from the run itself (a called workflow's inputs, an MCP server's
// listing recorded by its activity), so checking them again on replay gives the same answer.
func (r *run) checkToolArgs(ctx workflow.Context, tool agentTool, args map[string]any) error {
	if _, fromRegistry := tool.(registryTool); !fromRegistry || !r.checkedOnce {
		return tool.Check(args)
	}
	verdict, err := recordedCheck(ctx, func() error { return tool.Check(args) })
	if err != nil {
		return err
	}
	if verdict != "" {
		return errors.New(verdict)
	}
	return nil
}
