package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftworks/weft/auth"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

func gateOf(t *testing.T, data, schema any) *weftv1.ReviewRequest {
	t.Helper()
	g := &weftv1.ReviewRequest{Id: "approval", Step: "approval", Title: "Publish?"}
	if data != nil {
		v, err := structpb.NewValue(data)
		require.NoError(t, err)
		g.Data = v
	}
	if schema != nil {
		v, err := structpb.NewValue(schema)
		require.NoError(t, err)
		g.Schema = v
	}
	return g
}

// TestReviewForm: the review's data maps onto flat form fields (primitives typed from the
// schema, anything nested as JSON), and the form's answer maps back, nested fields parsed.
func TestReviewForm(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"headline": map[string]any{"type": "string", "maxLength": 80.0, "description": "the title"},
		"count":    map[string]any{"type": "integer", "minimum": 0.0},
		"level":    map[string]any{"type": "string", "enum": []any{"low", "high"}},
		"items":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"meta":     map[string]any{"type": "object"},
	}}
	data := map[string]any{"headline": "Release 1", "count": 2.0, "level": "low", "items": []any{"a"}, "meta": map[string]any{"k": "v"}, "extra": true}
	gate := gateOf(t, data, schema)

	fields := map[string]formField{}
	for _, f := range formFields(gate) {
		fields[f.name] = f
	}
	require.Len(t, fields, 6, "schema properties and data fields")
	require.Equal(t, map[string]any{"type": "string", "title": "headline", "maxLength": 80.0, "description": "the title", "default": "Release 1"}, fields["data.headline"].schema)
	require.Equal(t, map[string]any{"type": "integer", "title": "count", "minimum": 0.0, "default": 2.0}, fields["data.count"].schema)
	require.Equal(t, []any{"low", "high"}, fields["data.level"].schema["enum"])
	require.Equal(t, "boolean", fields["data.extra"].schema["type"], "a field the schema does not name: typed from its value")
	require.True(t, fields["data.items"].asJSON)
	require.Equal(t, `["a"]`, fields["data.items"].schema["default"])
	require.True(t, fields["data.meta"].asJSON)

	p, err := elicitation(context.Background(), "run-1", gate, "")
	require.NoError(t, err)
	require.Contains(t, p.Message, "Publish?")
	require.Contains(t, p.Message, `"headline": "Release 1"`)
	require.Contains(t, p.Message, "decided by the operator")

	cases := []struct {
		name string
		form map[string]any
		want any
		err  string
	}{
		{"unchanged", map[string]any{"decision": "edit"}, data, ""},
		{"edited", map[string]any{"data.headline": "Release 2", "data.items": `["a","b"]`, "data.count": 3.0},
			map[string]any{"headline": "Release 2", "count": 3.0, "level": "low", "items": []any{"a", "b"}, "meta": map[string]any{"k": "v"}, "extra": true}, ""},
		{"invalid JSON", map[string]any{"data.meta": `{"k":`}, nil, "data.meta is not valid JSON"},
		{"not a whole number", map[string]any{"data.count": 2.5}, nil, "data.count must be a whole number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := editedData(gate, c.form)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}

	// data that is not an object: one JSON field for the whole value
	list := gateOf(t, []any{"x"}, nil)
	f := formFields(list)
	require.Len(t, f, 1)
	require.Equal(t, "data", f[0].name)
	got, err := editedData(list, map[string]any{"data": `["y"]`})
	require.NoError(t, err)
	require.Equal(t, []any{"y"}, got)
	got, err = editedData(list, map[string]any{})
	require.NoError(t, err)
	require.Equal(t, []any{"x"}, got, "left out: unchanged")
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// selectsGate is a review whose schema has titled single-selects and multi-selects, and fields
// that look like them but are not (they stay what they were: a string field, JSON fields).
func selectsGate(t *testing.T) *weftv1.ReviewRequest {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"tone": map[string]any{"type": "string", "title": "Tone", "oneOf": []any{
			map[string]any{"const": "formal", "title": "Formal"}, map[string]any{"const": "casual"}}},
		"level": map[string]any{"enum": []any{"low", "high"}}, // choices of strings: a string
		"state": map[string]any{"type": "string", "enum": []any{"open", "done"}, "enumNames": []any{"Open", "Done"}},
		"tags":  map[string]any{"type": "array", "minItems": 1.0, "items": map[string]any{"type": "string", "enum": []any{"bug", "feature", "docs"}}},
		"channels": map[string]any{"type": "array", "description": "where to announce", "maxItems": 1.0, "items": map[string]any{"anyOf": []any{
			map[string]any{"const": "blog", "title": "Blog"}, map[string]any{"const": "mail", "title": "Mailing list"}}}},
		"notes":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},                                           // no choices: JSON
		"pattern": map[string]any{"type": "string", "oneOf": []any{map[string]any{"pattern": "^a"}, map[string]any{"format": "email"}}}, // alternatives: a string
		"sizes":   map[string]any{"type": "array", "items": map[string]any{"enum": []any{1.0, 2.0}}},                                    // not strings: JSON
	}}
	data := map[string]any{"tone": "formal", "level": "low", "state": "open", "tags": []any{"bug"}, "channels": []any{"blog", "mail"},
		"notes": []any{"x"}, "pattern": "abc", "sizes": []any{1.0}}
	return gateOf(t, data, schema)
}

// TestReviewFormSelects: a string field with titled choices is a titled single-select (oneOf
// {const, title}; from oneOf, anyOf, or an enum with enumNames), an array of string choices a multi-select (items enum, or anyOf of {const,
// title}, with minItems and maxItems), as MCP 2025-11-25 elicitation forms have them (the form
// is golden: testdata/review_form_selects.json, -update rewrites it); answers outside the
// choices are refused with the choices, which the client is asked again with.
func TestReviewFormSelects(t *testing.T) {
	gate := selectsGate(t)
	p, err := elicitation(context.Background(), "run-1", gate, "")
	require.NoError(t, err)
	got, err := json.MarshalIndent(p, "", "  ")
	require.NoError(t, err)
	golden := filepath.Join("testdata", "review_form_selects.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, append(got, '\n'), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test -run TestReviewFormSelects -update ./mcp/ to write it")
	require.JSONEq(t, string(want), string(got))

	kinds := map[string]string{}
	for _, f := range formFields(gate) {
		switch {
		case f.asJSON:
			kinds[f.key] = "json"
		case f.multi:
			kinds[f.key] = "multi-select"
		case f.choices != nil:
			kinds[f.key] = "select"
		default:
			kinds[f.key] = f.schema["type"].(string)
		}
	}
	require.Equal(t, map[string]string{"tone": "select", "level": "select", "state": "select", "tags": "multi-select", "channels": "multi-select",
		"notes": "json", "pattern": "string", "sizes": "json"}, kinds)

	data := gate.GetData().AsInterface().(map[string]any)
	with := func(k string, v any) map[string]any {
		out := map[string]any{}
		for dk, dv := range data {
			out[dk] = dv
		}
		out[k] = v
		return out
	}
	cases := []struct {
		name string
		form map[string]any
		want any
		err  string
	}{
		{"unchanged", map[string]any{"decision": "edit"}, data, ""},
		{"titled choice", map[string]any{"data.tone": "casual"}, with("tone", "casual"), ""},
		{"untitled choice", map[string]any{"data.level": "high"}, with("level", "high"), ""},
		{"several choices", map[string]any{"data.tags": []any{"feature", "docs"}}, with("tags", []any{"feature", "docs"}), ""},
		{"titled choices", map[string]any{"data.channels": []any{"mail"}}, with("channels", []any{"mail"}), ""},
		{"a choice titled with enumNames", map[string]any{"data.state": "done"}, with("state", "done"), ""},
		{"not a choice titled with enumNames", map[string]any{"data.state": "Done"}, nil, `data.state must be one of "open" (Open), "done" (Done), not "Done"`},
		{"not a titled choice", map[string]any{"data.tone": "loud"}, nil, `data.tone must be one of "formal" (Formal), "casual", not "loud"`},
		{"not a choice", map[string]any{"data.level": "mid"}, nil, `data.level must be one of "low", "high", not "mid"`},
		{"a choice that is not a string", map[string]any{"data.level": 1.0}, nil, `data.level must be one of "low", "high", not 1`},
		{"one of several not a choice", map[string]any{"data.tags": []any{"bug", "wontfix"}}, nil, `data.tags: "wontfix" is not a choice: choose among "bug", "feature", "docs"`},
		{"several choices not a list", map[string]any{"data.tags": "bug"}, nil, `data.tags must be a list of choices among "bug", "feature", "docs", not "bug"`},
		{"too few", map[string]any{"data.tags": []any{}}, nil, "data.tags: choose at least 1 (got 0)"},
		{"too many", map[string]any{"data.channels": []any{"blog", "mail"}}, nil, "data.channels: choose at most 1 (got 2)"},
		{"titled choices by title", map[string]any{"data.channels": []any{"Blog"}}, nil, `data.channels: "Blog" is not a choice: choose among "blog" (Blog), "mail" (Mailing list)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := editedData(gate, c.form)
			if c.err != "" {
				require.EqualError(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}

	// an answer outside the choices is not recorded, and the question asked again says why
	g := New(Options{Version: "test"})
	note := g.decide(context.Background(), nil, "run-1", gate, map[string]any{"decision": "edit", "data.tags": []any{"wontfix"}})
	require.Equal(t, `data.tags: "wontfix" is not a choice: choose among "bug", "feature", "docs"`, note)
	again, err := elicitation(context.Background(), "run-1", gate, note)
	require.NoError(t, err)
	require.Contains(t, again.Message, "Your last answer was not recorded: "+note)
}

// TestAskState: a requestState opens only in the gateway that sealed it, for the key and tool
// it was issued to, before it expires.
func TestAskState(t *testing.T) {
	g := New(Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", Namespace: "default"})
	ana := auth.WithIdentity(context.Background(), auth.Identity{Name: "ana", Roles: []string{auth.RoleReviewer}})
	bo := auth.WithIdentity(context.Background(), auth.Identity{Name: "bo", Roles: []string{auth.RoleReviewer}})
	sealed := g.sealState(askState{Run: "r1", Gate: "approval", Key: "ana", Tool: "wf_x", Expiry: 1 << 40})
	s, err := g.openState(ana, sealed, "wf_x")
	require.NoError(t, err)
	require.Equal(t, "r1", s.Run)

	_, err = g.openState(bo, sealed, "wf_x")
	require.ErrorContains(t, err, "another key")
	_, err = g.openState(ana, sealed, "wf_y")
	require.ErrorContains(t, err, "belongs to wf_x")
	_, err = New(Options{Version: "test"}).openState(ana, sealed, "wf_x")
	require.ErrorContains(t, err, "not issued by this gateway")
	_, sig, _ := strings.Cut(sealed, ".")
	forged, _ := json.Marshal(askState{Run: "r2", Gate: "approval", Key: "ana", Tool: "wf_x", Expiry: 1 << 40})
	_, err = g.openState(ana, base64.RawURLEncoding.EncodeToString(forged)+"."+sig, "wf_x")
	require.ErrorContains(t, err, "not issued by this gateway", "another run under the first one's signature")
	expired := g.sealState(askState{Run: "r1", Key: "ana", Tool: "wf_x", Expiry: 1})
	_, err = g.openState(ana, expired, "wf_x")
	require.ErrorContains(t, err, "expired")
}

// TestReviewFormSelectsInTheGoSDKClient: the official Go SDK's client accepts the form with its
// selects (it refuses forms MCP does not allow), answers it, and checks the answer against it;
// the answer parses back into the data. Over an in-process stdio pipe pair, protocol 2025-11-25.
func TestReviewFormSelectsInTheGoSDKClient(t *testing.T) {
	gate := selectsGate(t)
	srv := server.NewMCPServer("t", "1")
	srv.AddTool(mcplib.NewTool("ask"), func(ctx context.Context, _ mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
		params, err := elicitation(ctx, "run-1", gate, "")
		if err != nil {
			return nil, err
		}
		answer, err := srv.RequestElicitation(ctx, mcplib.ElicitationRequest{Request: mcplib.Request{Method: string(mcplib.MethodElicitationCreate)}, Params: params})
		if err != nil {
			return mcplib.NewToolResultError(err.Error()), nil
		}
		data, err := editedData(gate, answer.Content.(map[string]any))
		if err != nil {
			return mcplib.NewToolResultError(err.Error()), nil
		}
		b, _ := json.Marshal(data)
		return mcplib.NewToolResultText(string(b)), nil
	})
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { _ = server.NewStdioServer(srv).Listen(ctx, toServer, fromServer) }()

	var answer map[string]any
	client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: answer}, nil
		}})
	s, err := client.Connect(ctx, &sdk.IOTransport{Reader: toClient, Writer: fromClient}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer s.Close()
	call := func(form map[string]any) (string, bool) {
		answer = form
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "ask"})
		require.NoError(t, err)
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return text.String(), res.IsError
	}

	out, failed := call(map[string]any{"decision": "edit", "data.tone": "casual", "data.state": "done", "data.tags": []any{"feature", "docs"}, "data.channels": []any{"mail"}})
	require.False(t, failed, out)
	require.JSONEq(t, `{"tone":"casual","level":"low","state":"done","tags":["feature","docs"],"channels":["mail"],"notes":["x"],"pattern":"abc","sizes":[1]}`, out)

	// the client itself refuses an answer outside the choices (the gateway checks them too, for
	// clients that do not)
	out, failed = call(map[string]any{"decision": "edit", "data.tags": []any{"wontfix"}})
	require.True(t, failed)
	require.Contains(t, out, "does not match requested schema")
}

// TestElicitationOffersAlwaysOnAToolCall: a tool call's form has "for the rest of the run" (a
// boolean), a review step's has not; ticked with edit, the answer is not recorded and the person
// is told why (issue 44, item 5).
func TestElicitationOffersAlwaysOnAToolCall(t *testing.T) {
	call := &weftv1.ReviewRequest{Id: "helper/c1", Step: "helper", Kind: "tool_call", Tool: "ingest"}
	step := &weftv1.ReviewRequest{Id: "check", Step: "check", Kind: "review"}
	for _, tc := range []struct {
		gate   *weftv1.ReviewRequest
		always bool
	}{{call, true}, {step, false}} {
		params, err := elicitation(context.Background(), "run-1", tc.gate, "")
		require.NoError(t, err)
		b, err := json.Marshal(params.RequestedSchema)
		require.NoError(t, err)
		var schema struct {
			Properties map[string]map[string]any `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(b, &schema))
		always, ok := schema.Properties["always"]
		require.Equal(t, tc.always, ok, tc.gate.Id)
		if ok {
			require.Equal(t, "boolean", always["type"])
			require.Contains(t, always["description"], "later calls of ingest")
		}
	}
	note := New(Options{Version: "test"}).decide(context.Background(), nil, "run-1", call, map[string]any{"decision": "edit", "always": true})
	require.Contains(t, note, `"for the rest of the run" is for approve or reject`)
}
