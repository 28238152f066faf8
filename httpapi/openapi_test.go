package httpapi

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

var update = flag.Bool("update", false, "rewrite testdata/openapi.json from the routes")

// TestOpenAPIGolden: the document generated from the routes is testdata/openapi.json (a copy for
// review: what is served is generated; go test ./httpapi -run TestOpenAPIGolden -update rewrites
// it), and every route is in it.
func TestOpenAPIGolden(t *testing.T) {
	doc, err := Document(routes(), "1.0.0")
	require.NoError(t, err)
	golden := filepath.Join("testdata", "openapi.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, append(doc, '\n'), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(doc), "the routes changed: go test ./httpapi -run TestOpenAPIGolden -update, and review the diff")
	var d struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(doc, &d))
	for _, rt := range routes() {
		require.Contains(t, d.Paths, rt.Path)
		require.Contains(t, d.Paths[rt.Path], strings.ToLower(rt.Method))
	}
}

// TestShapesMatch: the values that marshal themselves (events.Event, weftclient.PendingReview,
// RunView) send exactly the properties their schemas in the document say, so a generated
// client's types are what arrives.
func TestShapesMatch(t *testing.T) {
	doc, err := Document(routes(), "1.0.0")
	require.NoError(t, err)
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(doc, &d))
	item := 1
	full := map[string]any{
		"Event": events.Event{Type: "x", Run: "r", Seq: 1, After: 1, Time: time.Now(), Step: "s", Key: "k", Item: &item, Iteration: 1, Activity: "a",
			Attempt: 1, Offset: 1, Restarted: true, Decision: "d", Reviewer: "r", Child: "c", Missed: 1, Guardrail: "g", Stage: "s", Reason: "r", Budget: "b", Spent: 1, Limit: 2, From: "f", To: "t",
			Server: "s", RunID: "r", Status: "s", StepState: &weftv1.StepState{Id: "s"}, Review: &weftv1.ReviewRequest{Id: "r"},
			Text: "t", Call: &weftv1.ToolCall{Id: "c"}, Usage: &weftv1.TokenUsage{Calls: 1}, Result: &weftv1.RunResult{Workflow: "w"}, Error: "e", ErrorKind: "k"},
		"PendingReview": weftclient.PendingReview{Chat: true, Review: &weftv1.ReviewRequest{Id: "r"}},
		"RunView":       RunView{Execution: weftclient.Execution{ID: "r", StateErr: "e", Started: time.Now(), Ended: time.Now()}, State: &weftv1.ExecutionState{Workflow: "w"}},
	}
	for name, v := range full {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(v)
			require.NoError(t, err)
			var sent map[string]any
			require.NoError(t, json.Unmarshal(b, &sent))
			props := d.Components.Schemas[name].Properties
			require.NotEmpty(t, props, "the document has %s", name)
			for k := range sent {
				require.Contains(t, props, k, "%s sends %q: its shape must say so", name, k)
			}
			for k := range props {
				require.Contains(t, sent, k, "%s's schema says %q, which is not sent", name, k)
			}
		})
	}
}
