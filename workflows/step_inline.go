package workflows

import (
	"maps"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/datatools"
	"github.com/weftworks/weft/workflows/dsl"
)

func init() { registerKind(toolspec.KindInline, runMethod((*run).inline)) }

// ChangeVaiDataTools (workflow.GetVersion): a merge or transform step of a file in vai's dialect
// computes vai's answer (dsl.VaiSemantics); runs recorded before it computed weft's, and replay
// computes what they did.
const ChangeVaiDataTools = "vai-datatools"

// vaiSemanticsSince is cs, without vai's semantics in a run recorded before ChangeVaiDataTools.
// The compiled step is shared: the copy is the step's own.
func vaiSemanticsSince(ctx workflow.Context, cs *dsl.CompiledStep) *dsl.CompiledStep {
	if v, _ := cs.Lazy[dsl.VaiSemantics].(bool); !v || workflow.GetVersion(ctx, ChangeVaiDataTools, workflow.DefaultVersion, 1) >= 1 {
		return cs
	}
	weft := *cs
	weft.Lazy = maps.Clone(cs.Lazy)
	delete(weft.Lazy, dsl.VaiSemantics)
	return &weft
}

// inline runs a data tool's step in workflow code (workflows/datatools): no activity, no
// history event.
func (r *run) inline(ctx workflow.Context, sr *stepRun, inputs, env map[string]any) (any, error) {
	cs := sr.cs
	sr.attempts = max(sr.attempts, 1)
	out, err := datatools.Run(vaiSemanticsSince(ctx, cs), inputs, env)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(inlineErrorText(err), toolspec.ErrInvalidInput, nil)
	}
	addWarnings(&sr.warnings, datatools.Warnings(cs, inputs, out))
	if err := gateOutput(ctx, cs.Tool, out); err != nil {
		return nil, err
	}
	return out, nil
}
