package workflows

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

// NewRequest builds the RunRequest that starts a run of def (client side: CLI, gateway, tests).
// inputs should already be resolved with dsl.ResolveInputs; defaults override the file's.
func NewRequest(def *dsl.Definition, source string, inputs, defaults map[string]any) (*weftv1.RunRequest, error) {
	b, err := json.Marshal(def)
	if err != nil {
		return nil, fmt.Errorf("definition %q: %w", def.Name, err)
	}
	d := &structpb.Struct{}
	if err := protojson.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("definition %q: %w", def.Name, err)
	}
	in, err := structpb.NewStruct(inputs)
	if err != nil {
		return nil, fmt.Errorf("inputs: %w", err)
	}
	ov, err := structpb.NewStruct(defaults)
	if err != nil {
		return nil, fmt.Errorf("defaults: %w", err)
	}
	return &weftv1.RunRequest{Definition: d, Inputs: in, Defaults: ov, Source: source}, nil
}
