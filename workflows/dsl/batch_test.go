package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestBatchOption: "batch" is read, and warned about where it does nothing.
func TestBatchOption(t *testing.T) {
	for _, tc := range []struct {
		name, step string
		batch      *bool
		warning    string
	}{
		{"default", `{"id":"e","tool":"embed","forEach":"{{ [1] }}","inputs":{"text":"{{ item }}"}}`, nil, ""},
		{"opt out", `{"id":"e","tool":"embed","forEach":"{{ [1] }}","batch":false,"inputs":{"text":"{{ item }}"}}`, new(bool), ""},
		{"without forEach", `{"id":"e","tool":"embed","batch":false,"inputs":{"text":"x"}}`, new(bool),
			`w.json:1:55: warning: steps[0].batch: batch has no effect without forEach (remove it, or add forEach)`},
		{"a tool that does not batch", `{"id":"e","tool":"chunk","forEach":"{{ ['a'] }}","batch":false,"inputs":{"text":"{{ item }}"}}`, new(bool),
			`w.json:1:79: warning: steps[0].batch: chunk does not batch: its forEach items run one call each (remove batch)`},
		{"a loop over embed", `{"id":"e","tool":"loop","batch":false,"inputs":{"as":"item","items":[1],"step":{"tool":"embed","inputs":{"text":"{{ item }}"}}}}`, new(bool), ""},
		{"a loop over a tool that does not batch", `{"id":"e","tool":"loop","batch":false,"inputs":{"as":"item","items":["a"],"step":{"tool":"chunk","inputs":{"text":"{{ item }}"}}}}`, new(bool),
			`w.json:1:54: warning: steps[0].batch: chunk does not batch: the loop runs one call per item (remove batch)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := dsl.Load("w.json", []byte(`{"name":"x","steps":[`+tc.step+`]}`))
			require.NoError(t, err)
			require.Equal(t, tc.batch, w.Def.Steps[0].Batch)
			var msgs []string
			for _, d := range w.Warnings {
				msgs = append(msgs, d.String())
			}
			if tc.warning == "" {
				require.Empty(t, msgs)
			} else {
				require.Equal(t, []string{tc.warning}, msgs)
			}
		})
	}
}
