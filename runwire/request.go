package runwire

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

// NewRequest builds the RunRequest that starts a run of w (client side: CLI, gateway, tests).
// inputs should already be resolved with dsl.ResolveInputs; defaults override the file's. The
// request carries w's text as it was loaded, so the worker compiles exactly what the client
// validated and its messages name the user's own lines.
func NewRequest(w *dsl.Workflow, source string, inputs, defaults map[string]any) (*weftv1.RunRequest, error) {
	text, err := workflowText(w)
	if err != nil {
		return nil, err
	}
	in, err := structpb.NewStruct(inputs)
	if err != nil {
		return nil, fmt.Errorf("inputs: %w", err)
	}
	ov, err := structpb.NewStruct(defaults)
	if err != nil {
		return nil, fmt.Errorf("defaults: %w", err)
	}
	return &weftv1.RunRequest{DefinitionJson: text, Inputs: in, Defaults: ov, Source: source}, nil
}

// WorkflowFiles is the workflow_files map of a request: the text of each called workflow.
func WorkflowFiles(called map[string]*dsl.Workflow) (map[string]string, error) {
	out := make(map[string]string, len(called))
	for name, w := range called {
		text, err := workflowText(w)
		if err != nil {
			return nil, fmt.Errorf("workflow %q: %w", name, err)
		}
		out[name] = text
	}
	return out, nil
}

func workflowText(w *dsl.Workflow) (string, error) {
	if len(w.Text) > 0 {
		return string(w.Text), nil
	}
	b, err := json.MarshalIndent(w.Def, "", "  ")
	if err != nil {
		return "", fmt.Errorf("definition %q: %w", w.Def.Name, err)
	}
	return string(b), nil
}

// DefinitionText returns the workflow a request runs, as the text to compile: definition_json,
// or for requests made before it existed (and typed by hand), the `definition` struct as JSON.
// name is what messages about the text call it.
func DefinitionText(req *weftv1.RunRequest) (name string, text []byte, err error) {
	name = req.GetSource()
	if name == "" {
		name = "definition"
	}
	if t := req.GetDefinitionJson(); t != "" {
		return name, []byte(t), nil
	}
	if req.GetDefinition() == nil {
		return "", nil, fmt.Errorf("the run request has no definition: set definition_json to the workflow file's text")
	}
	b, err := json.Marshal(req.GetDefinition().AsMap())
	if err != nil {
		return "", nil, fmt.Errorf("definition: %w", err)
	}
	return name, b, nil
}

// RequestWorkflow compiles the workflow a run was started with (client side: retry, fork, the
// console). The run accepted it already, so it is compiled as replay compiles it
// (dsl.LoadAccepted): checks a newer release added do not lock the run's retry and fork out.
func RequestWorkflow(req *weftv1.RunRequest) (*dsl.Workflow, error) {
	name, text, err := DefinitionText(req)
	if err != nil {
		return nil, err
	}
	return dsl.LoadAccepted(name, text)
}
