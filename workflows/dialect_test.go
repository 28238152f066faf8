package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/workflows"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestTemplatesInsideExpressions: vai files write templates inside conditions; the template is a
// value, so a string input cannot inject expression syntax.
func TestTemplatesInsideExpressions(t *testing.T) {
	const def = `{"name":"d","inputs":{"min":{"type":"number","default":0.5},"who":{"type":"string","default":"ana"}},"steps":[
	  {"id":"items","tool":"template","inputs":{"text":"x"}},
	  {"id":"kept","tool":"filter","inputs":{"array":"{{ [{'score':0.9,'by':'ana'},{'score':0.2,'by':'ana'},{'score':0.7,'by':'bo'}] }}",
	    "condition":"item.score >= {{ inputs.min }} && item.by == '{{ inputs.who }}'"}},
	  {"id":"branch","tool":"conditional","inputs":{"condition":"{{ kept.output.resultCount }} > 0","then":["yes"],"else":["no"]}},
	  {"id":"yes","tool":"template","inputs":{"text":"kept {{ kept.output.resultCount }}"}},
	  {"id":"no","tool":"template","inputs":{"text":"none"}},
	  {"id":"guarded","tool":"template","condition":"{{ inputs.min }} < 1","inputs":{"text":"ran"}}
	],"output":{"kept":"{{ kept.output.resultCount }}","branch":"{{ yes.output.text || no.output.text }}","guarded":"{{ guarded.output.text }}"}}`
	h := newHarness(t)
	res, err := h.run(t, def, nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"kept":1,"branch":"kept 1","guarded":"ran"}`, outputJSON(t, res.Output))

	// A string value is compared as a string: "x' || 'x" is not code.
	h = newHarness(t)
	res, err = h.run(t, def, map[string]any{"who": "x' || 'x"})
	require.NoError(t, err)
	require.JSONEq(t, `{"kept":0,"branch":"none","guarded":"ran"}`, outputJSON(t, res.Output))
}

// TestVaiDurationsAndAliases: durations in milliseconds and vai's input names are accepted and
// become weft's own forms.
func TestVaiDurationsAndAliases(t *testing.T) {
	w, err := dsl.Load("vai.json", []byte(`{"name":"v","steps":[
	  {"id":"c","tool":"chunk","timeout":5000,"retry":{"initialInterval":250},"inputs":{"text":"some text","size":200,"chunk_overlap":10}},
	  {"id":"h","tool":"http","inputs":{"url":"https://example.com","timeout":1500}},
	  {"id":"e","tool":"estimate","inputs":{"docs":10,"model":"voyage-4-lite"}}]}`))
	require.NoError(t, err)
	require.Empty(t, w.Warnings)
	c := w.Steps[0]
	require.Equal(t, "5000ms", c.Timeout)
	require.Equal(t, "250ms", c.Retry.InitialInterval)
	require.Equal(t, map[string]any{"text": "some text", "chunkSize": float64(200), "overlap": float64(10)}, c.Inputs)

	_, err = dsl.Load("bad.json", []byte(`{"name":"v","steps":[{"id":"c","tool":"chunk","timeout":"soon","inputs":{"text":"x"}}]}`))
	require.ErrorContains(t, err, `"soon" is not a duration`)
	w, err = dsl.Load("both.json", []byte(`{"name":"v","steps":[{"id":"c","tool":"chunk","inputs":{"text":"x","size":200,"chunkSize":300}}]}`))
	require.NoError(t, err)
	require.Len(t, w.Warnings, 1)
	require.Contains(t, w.Warnings[0].String(), "size is another name for chunkSize")
	require.Equal(t, float64(300), w.Steps[0].Inputs["chunkSize"])
}

// TestVaiDataToolsSinceTheirChange: a vai-dialect merge computes vai's answer (dedup alone keeps
// every item), and a run recorded before ChangeVaiDataTools replays with weft's (dedup alone drops
// duplicates), so its history still replays.
func TestVaiDataToolsSinceTheirChange(t *testing.T) {
	def := `{"$schema": "https://vai.example/workflow.schema.json", "name": "m", "steps": [
	  {"id": "m", "tool": "merge", "inputs": {"arrays": [[{"id": 1}, {"id": 1}], [{"id": 2}]], "dedup": true}}],
	  "output": {"n": "{{ m.output.resultCount }}"}}`
	for _, tt := range []struct {
		name     string
		recorded bool
		want     float64
	}{
		{"a new run: vai's answer", false, 3},
		{"a run recorded before: weft's answer", true, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.recorded {
				h.env.OnGetVersion(workflows.ChangeVaiDataTools, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			res, err := h.run(t, def, nil)
			require.NoError(t, err)
			require.Equal(t, tt.want, res.Output.GetStructValue().AsMap()["n"])
		})
	}
}
