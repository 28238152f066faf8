package workflows

import (
	"encoding/json"

	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
)

// typedInput is step cs's typed input as its kind decoded it when compiling, or decode of its
// resolved inputs (dsl.TypedInput), with the defaults the tool's declaration gives (its weft
// tags) for the settings the step leaves out or sets to null: a step kind reads its settings
// from its declaration, so `weft tools`, MCP, the builder and the interpreter see one default.
// A mistake in them is the step's, not retried.
func typedInput[In any](cs *dsl.CompiledStep, inputs map[string]any, decode func(map[string]any) (In, error)) (In, error) {
	in, err := dsl.TypedInput(cs, inputs, decode)
	if err != nil {
		return in, temporal.NewNonRetryableApplicationError(err.Error()+": write the values the tool's input schema describes (weft tools "+cs.Tool+")", toolspec.ErrInvalidInput, nil)
	}
	return in, nil
}

// declaredMaximum is the maximum the declaration of spec gives the input field (0: none).
func declaredMaximum(spec *toolspec.Spec, field string) int {
	var doc struct {
		Properties map[string]struct {
			Maximum float64 `json:"maximum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(spec.InputJSON()), &doc); err != nil {
		panic("toolspec: the input schema of " + spec.Name + " is not JSON: " + err.Error()) // a declaration's bug
	}
	return int(doc.Properties[field].Maximum)
}
