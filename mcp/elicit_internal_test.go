package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

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

// TestAskState: a requestState opens only in the gateway that sealed it, for the key and tool
// it was issued to, before it expires.
func TestAskState(t *testing.T) {
	g := New(Options{Version: "test", Address: "127.0.0.1:1", Namespace: "default"})
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
