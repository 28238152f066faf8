package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/webhook"
	"github.com/weftworks/weft/workflows/dsl"
)

const notifySteps = `"steps": [{"id": "a", "tool": "template", "inputs": {"text": "x"}}]`

func TestNotifyEntries(t *testing.T) {
	for _, tc := range []struct{ notify, err string }{
		{`["ops", {"to": "https://hooks.example.com/weft", "events": ["review.requested", "run.failed"], "slack": true}]`, ""},
		{`[{"to": "ops", "events": ["run.completed"]}]`, ""},
		{`["ftp://x.example/y"]`, `webhook url "ftp://x.example/…": want an absolute http:// or https:// URL`},
		{`["not a name"]`, `webhook name "not a name": start with a letter`},
		{`[{"to": "ops", "slack": true}]`, `slack is set by the operator for webhook "ops"`},
		{`[{"to": "ops", "events": ["run.exploded"]}]`, `notify`},
		{`[{"url": "https://x.example"}]`, `notify`},
	} {
		t.Run(tc.notify, func(t *testing.T) {
			w, err := dsl.Load("n.json", []byte(`{"name": "n", "notify": `+tc.notify+`, `+notifySteps+`}`))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, w.Def.Notify)
		})
	}
	w, err := dsl.Load("n.json", []byte(`{"name": "n", "notify": ["ops", {"to": "https://a.example", "events": ["run.failed"]}], `+notifySteps+`}`))
	require.NoError(t, err)
	require.Equal(t, []webhook.Entry{{To: "ops"}, {To: "https://a.example", Events: []string{"run.failed"}}}, w.Def.Notify)
	b, err := dsl.FromDefinition(w.Def)
	require.NoError(t, err)
	require.Equal(t, w.Def.Notify, b.Def.Notify)
}

// TestClientNotifyNamesOnly: a definition sent by a client may name the operator's webhooks but
// not send the run's events to an address of its choosing.
func TestClientNotifyNamesOnly(t *testing.T) {
	load := func(notify string) *dsl.Definition {
		w, err := dsl.Load("c.json", []byte(`{"name": "c", "notify": `+notify+`, `+notifySteps+`}`))
		require.NoError(t, err)
		return w.Def
	}
	require.NoError(t, dsl.CheckClientNotify(load(`["ops", {"to": "audit", "events": ["run.failed"]}]`)))
	err := dsl.CheckClientNotify(load(`["ops", {"to": "https://evil.example/collect?k=1"}]`))
	require.EqualError(t, err, `notify[1] (https://evil.example/…) gives a URL: a definition sent by a client may only name the webhooks the operator declared on the worker, as "notify": ["NAME"]; an operator allows an address on purpose by declaring it in the worker's WEFT_WEBHOOKS file, or by putting this workflow in the workflows directory`)
}
