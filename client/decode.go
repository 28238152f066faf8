package client

import (
	"encoding/json"
	"errors"
	"fmt"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// Output is a finished run's output as Go values (map[string]any, []any, string, float64, bool,
// nil), not protobuf: what the workflow's "output" says, or the last step's output.
func Output(res *weftv1.RunResult) any { return res.GetOutput().AsInterface() }

// DecodeOutput reads a finished run's output into out (a pointer), as Decode does.
func DecodeOutput(res *weftv1.RunResult, out any) error { return Decode(Output(res), out) }

// Decode reads a run's output v into out (a pointer): a string takes a model answer's text
// ({"text": ...}) as well as a string, anything else is decoded as JSON.
func Decode(v any, out any) error {
	if s, ok := out.(*string); ok {
		switch x := v.(type) {
		case string:
			*s = x
			return nil
		case map[string]any:
			if t, ok := x["text"].(string); ok {
				*s = t
				return nil
			}
		case nil:
			*s = ""
			return nil
		}
	}
	if p, ok := out.(*any); ok {
		*p = v
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return fmt.Errorf("the output does not fit %T: %w (set the workflow's Output, or decode into any)", out, err)
		}
		return err
	}
	return nil
}
