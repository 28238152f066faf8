package client

import (
	"google.golang.org/protobuf/proto"

	"github.com/weftworks/weft/internal/wirejson"
)

// ProtoJSON is the one JSON encoding of weft's wire messages (a run's state, its steps, reviews,
// results) that every surface writes: `weft status --json`, the HTTP API, MCP and the console.
// It is the proto JSON mapping (lowerCamelCase names, well-known types as their JSON forms),
// except that 64-bit integers (durations, token counts) are JSON numbers, not strings: weft's
// values are far below 2^53, so no JavaScript or float reader loses a digit, and a number reads
// the same on every surface as the run's usage totals beside it. protojson.Unmarshal accepts
// numbers for those fields, so the output reads back into the message. Only the message's own
// fields are rewritten, found by its descriptor: a key of the same name inside a step's output
// (a google.protobuf.Value) keeps the value it has. The output is compact.
func ProtoJSON(m proto.Message) ([]byte, error) { return wirejson.Marshal(m) }
