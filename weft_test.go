package weft

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

type lookupIn struct {
	City  string `json:"city" weft:"minLength=1"`
	Limit int    `json:"limit,omitempty" weft:"min=1,max=10,default=3"`
}

type lookupOut struct {
	City  string `json:"city"`
	Limit int    `json:"limit"`
}

var lookup = Tool("weft_test_lookup", "Looks a city up", func(_ context.Context, in lookupIn) (lookupOut, error) {
	return lookupOut(in), nil
})

func TestBuilder(t *testing.T) {
	tests := []struct {
		name    string
		wf      *Workflow
		wantErr string
		check   func(t *testing.T, def map[string]any)
	}{
		{name: "agent with a Go tool, then a review", wf: New("a").Input("q", String).
			Agent("ask", "{{ inputs.q }}", Tools(lookup, ToolName("search")), Approve(lookup), MaxIterations(3)).
			Review("ok", "Fine?", Data("{{ ask.output.text }}")),
			check: func(t *testing.T, def map[string]any) {
				steps := def["steps"].([]any)
				ask := steps[0].(map[string]any)["inputs"].(map[string]any)
				require.Equal(t, []any{"weft_test_lookup", "search"}, ask["tools"])
				require.Equal(t, []any{"weft_test_lookup"}, ask["approve"])
				require.NotContains(t, ask, "context", "the first step has nothing before it")
				ok := steps[1].(map[string]any)
				require.Equal(t, []any{"ask"}, ok["dependsOn"])
				require.Equal(t, "{{ ok.output }}", def["output"])
			}},
		{name: "forEach over an input, json answer", wf: New("b").Input("xs", Array).
			ForEach("{{ inputs.xs }}", 2, LLM("each", "About {{ item }}", ResponseJSON())).
			LLM("sum", "Sum up", ResponseJSON()),
			check: func(t *testing.T, def map[string]any) {
				each := def["steps"].([]any)[0].(map[string]any)
				require.Equal(t, "{{ inputs.xs }}", each["forEach"])
				require.EqualValues(t, 2, each["concurrency"])
				require.Equal(t, "{{ sum.output.json }}", def["output"])
			}},
		{name: "typed tool inputs", wf: New("c").Step("find", "weft_test_lookup", lookupIn{City: "Oslo"}),
			check: func(t *testing.T, def map[string]any) {
				in := def["steps"].([]any)[0].(map[string]any)["inputs"].(map[string]any)
				require.Equal(t, map[string]any{"city": "Oslo"}, in)
			}},
		{name: "parallel last: an object by id", wf: New("d").Parallel(LLM("x", "x"), LLM("y", "y", Detached())),
			check: func(t *testing.T, def map[string]any) {
				require.Equal(t, map[string]any{"x": "{{ x.output.text }}", "y": "{{ y.output.text }}"}, def["output"])
			}},
		{name: "an option that does not fit", wf: New("e").Review("r", "t", Model("fast")), wantErr: "Model do not apply to a review step"},
		{name: "duplicate id", wf: New("f").LLM("a", "x").LLM("a", "y"), wantErr: `step id "a" is used twice`},
		{name: "unknown tool", wf: New("g").Agent("a", "x", Tools(ToolName("nope"))), wantErr: `unknown tool "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.wf.Compile()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			data, err := tc.wf.Export()
			require.NoError(t, err)
			var def map[string]any
			require.NoError(t, json.Unmarshal(data, &def))
			tc.check(t, def)
		})
	}
}

func TestToolHandlerDecodesWithDefaults(t *testing.T) {
	h := handlers()["weft_test_lookup"]
	require.NotNil(t, h)
	out, _, err := h(context.Background(), map[string]any{"city": "Oslo"})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"city": "Oslo", "limit": float64(3)}, out, "the declared default reaches the function")
	require.Contains(t, lookup.Spec().InputJSON(), `"default":3`)
	require.Panics(t, func() {
		Tool("weft_test_lookup", "again", func(context.Context, lookupIn) (int, error) { return 0, nil })
	})
	require.Panics(t, func() {
		Tool("weft_test_scalar", "no struct", func(context.Context, int) (int, error) { return 0, nil })
	})
}

func TestDecode(t *testing.T) {
	var s string
	require.NoError(t, Decode(map[string]any{"text": "hi", "model": "m"}, &s))
	require.Equal(t, "hi", s)
	var v struct{ A int }
	require.NoError(t, Decode(map[string]any{"A": 2.0}, &v))
	require.Equal(t, 2, v.A)
	var n int
	require.ErrorContains(t, Decode("x", &n), "does not fit")
}
