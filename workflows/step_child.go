package workflows

import (
	"encoding/json"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// MaxNesting is how deep workflows may call workflows.
const MaxNesting = 8

// child runs a workflow step: another workflow as a child workflow.
func (r *run) child(ctx workflow.Context, sr *stepRun, inputs map[string]any, env map[string]any) (any, error) {
	name, _ := inputs["workflow"].(string)
	args, _ := inputs["inputs"].(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	key := stepKey(sr, env)
	return r.runChild(ctx, sr, name, args, r.childWorkflowID(ctx, key))
}

// childWorkflowID is the id of a child run: the parent's id, "/", the step's key.
func (r *run) childWorkflowID(ctx workflow.Context, key string) string {
	return workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + key
}

// calledDefinition returns the definition of a workflow this run calls, as the client resolved
// it when the run started.
func (r *run) calledDefinition(name string) (*dsl.Definition, error) {
	text, err := r.calledText(name)
	if err != nil {
		return nil, err
	}
	// The child checks its definition itself (and records the verdict); the parent only needs
	// its inputs and output, so it does not check the tool schemas again on replay.
	w, err := dsl.LoadAcceptedCached(toolspec.WorkflowToolPrefix+name, text)
	if err != nil {
		return nil, fmt.Errorf("workflow %q: %w", name, err)
	}
	return w.Def, nil
}

// calledText is the text of a called workflow as the client resolved it.
func (r *run) calledText(name string) ([]byte, error) {
	if t, ok := r.files[name]; ok {
		return []byte(t), nil
	}
	s, ok := r.workflows[name]
	if !ok {
		return nil, fmt.Errorf("workflow %q was not resolved when the run started: name a built-in template or a file next to the calling workflow, literally (not through a template)", name)
	}
	b, err := json.Marshal(s.AsMap())
	if err != nil {
		return nil, fmt.Errorf("workflow %q: %w", name, err)
	}
	return b, nil
}

// runChild runs the named workflow as a child with args as its inputs and returns its output.
// Cancelling the parent cancels the child; the child's reviews are decided on the child (the
// client lists them under the parent).
func (r *run) runChild(ctx workflow.Context, sr *stepRun, name string, args map[string]any, id string) (any, error) {
	if strings.Count(id, "/") > MaxNesting {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("workflows nested deeper than %d (%s): a workflow that calls itself needs a condition that stops it", MaxNesting, id), toolspec.ErrInvalidInput, nil)
	}
	text, err := r.calledText(name)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), toolspec.ErrInvalidInput, nil)
	}
	in, err := structpb.NewStruct(toJSONValue(args).(map[string]any))
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("inputs of workflow %q: %v", name, err), toolspec.ErrInvalidInput, nil)
	}
	req := &weftv1.RunRequest{DefinitionJson: string(text), Inputs: in, Source: toolspec.WorkflowToolPrefix + name,
		Workflows: r.workflows, WorkflowFiles: r.files, Origin: r.origin, StartedBy: r.startedBy}
	if n := proto.Size(req); refuses(ctx, n) {
		return nil, tooLarge(fmt.Sprintf("the request of workflow %q (its definitions and inputs)", name), n,
			"pass large values whole ({{ step.output.field }}), which a tool's stored outputs travel as references, or make the inputs smaller")
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:          id,
		ParentClosePolicy:   enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation: true,
		Memo:                map[string]any{runwire.MemoWorkflow: name, runwire.MemoParent: workflow.GetInfo(ctx).WorkflowExecution.ID},
		StaticSummary:       sr.cs.Title() + " → " + name,
	})
	sr.childID = id
	r.publish(sr)
	r.record(ctx, events.Event{Type: events.ChildStarted, Step: sr.cs.ID, Child: id})
	var res weftv1.RunResult
	if err := workflow.ExecuteChildWorkflow(cctx, runwire.WorkflowType, req).Get(ctx, &res); err != nil {
		return nil, err
	}
	r.addChildUsage(sr, res.GetUsage())
	if res.GetUsage() != nil {
		r.recordUsage(ctx, sr)
	}
	if res.Output == nil {
		return nil, nil
	}
	return res.Output.AsInterface(), nil
}

func init() { registerKind(toolspec.KindChild, runMethod((*run).child)) }
