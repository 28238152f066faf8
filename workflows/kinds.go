package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
)

// stepKind is how the interpreter runs one kind of step (toolspec.Kind) once its inputs are
// resolved. Each kind is one value, registered by the file that runs it: step.go (activity
// tools), step_inline.go, step_review.go, step_loop.go, agent_loop.go, step_child.go. How a
// kind compiles and whether it may wait for a person are its dsl kind's (workflows/dsl
// kind_*.go, dsl.CompiledStep.MayWait).
type stepKind interface {
	run(r *run, ctx workflow.Context, sr *stepRun, inputs, env map[string]any) (any, error)
}

// runMethod is a stepKind that is a method of the run, as (*run).review.
type runMethod func(r *run, ctx workflow.Context, sr *stepRun, inputs, env map[string]any) (any, error)

func (f runMethod) run(r *run, ctx workflow.Context, sr *stepRun, inputs, env map[string]any) (any, error) {
	return f(r, ctx, sr, inputs, env)
}

// stepKinds are the kinds the interpreter runs, by toolspec.Kind.
var stepKinds = map[toolspec.Kind]stepKind{}

// registerKind registers the value that runs steps of kind k; a kind registered twice is a
// programmer's error.
func registerKind(k toolspec.Kind, sk stepKind) {
	if _, dup := stepKinds[k]; dup {
		panic("workflows: step kind " + string(k) + " registered twice")
	}
	stepKinds[k] = sk
}
