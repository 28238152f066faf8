package workflows_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows"
)

// memBlobs is the knowledge store's blob part in memory.
type memBlobs struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (b *memBlobs) PutBlob(_ context.Context, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	id := hex.EncodeToString(sum[:8])
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[id] = append([]byte(nil), data...)
	return id, nil
}

func (b *memBlobs) GetBlob(_ context.Context, id string) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[id], nil
}

// ref stores v as a tool's claim check would and returns its reference.
func (b *memBlobs) ref(t *testing.T, v any) map[string]any {
	data, err := json.Marshal(v)
	require.NoError(t, err)
	id, err := b.PutBlob(context.Background(), data)
	require.NoError(t, err)
	return map[string]any{toolspec.BlobKey: id, "size": len(data), "preview": string(data[:20])}
}

func (b *memBlobs) value(t *testing.T, ref any) any {
	m, ok := ref.(map[string]any)
	require.True(t, ok, "a reference: %v", ref)
	data, err := b.GetBlob(context.Background(), m[toolspec.BlobKey].(string))
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(data, &v))
	return v
}

// storedHarness is the harness with the evaluate activity on a store in memory (outputs over
// 1 KiB are stored), and an http tool whose page (5,000 characters) and JSON body are stored,
// as the worker's claim check keeps a large response.
type storedHarness struct {
	*harness
	blobs     *memBlobs
	page      string
	evaluated int
	mu        sync.Mutex
	seen      map[string][]any // the texts embed received, by model
}

func newStoredHarness(t *testing.T) *storedHarness {
	h := &storedHarness{harness: newHarness(t), blobs: &memBlobs{m: map[string][]byte{}}, seen: map[string][]any{}}
	h.page = strings.Repeat("stored page ", 5000/12+1)[:5000]
	eval := activities.Evaluate(workflows.Evaluate, activities.ClaimCheck{Blobs: h.blobs, Above: 1 << 10})
	h.env.RegisterActivityWithOptions(func(ctx context.Context, req toolspec.EvalRequest) (toolspec.EvalResult, error) {
		h.mu.Lock()
		h.evaluated++
		h.mu.Unlock()
		return eval(ctx, req)
	}, activity.RegisterOptions{Name: toolspec.ActivityEvaluate})
	h.tools.scripts["http"] = func(in map[string]any) (any, *toolspec.Usage, error) {
		body := map[string]any{"title": "Rate limits", "items": []any{1, 2, 3}, "padding": strings.Repeat("p", 2000)}
		if in["url"] == "https://example.com/rows" { // a list stored whole, as the body
			rows := []any{strings.Repeat("a", 600), strings.Repeat("b", 600), strings.Repeat("c", 600)}
			return map[string]any{"status": 200, "body": h.blobs.ref(t, rows)}, nil, nil
		}
		return map[string]any{"status": 200, "text": h.blobs.ref(t, h.page), "body": h.blobs.ref(t, body)}, nil, nil
	}
	h.tools.scripts["embed"] = func(in map[string]any) (any, *toolspec.Usage, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.seen[in["model"].(string)] = append(h.seen[in["model"].(string)], in["text"])
		return map[string]any{"dimensions": 1}, nil, nil
	}
	return h
}

const storedDef = `{"name":"stored","steps":[
  {"id":"get","tool":"http","inputs":{"url":"https://example.com/page"}},
  {"id":"size","tool":"template","inputs":{"text":"{{ len(get.output.text) }} chars"}},
  {"id":"long","tool":"template","condition":"{{ get.output.text.length > 1000 }}","inputs":{"text":"long"}},
  {"id":"short","tool":"template","condition":"get.output.text.length <= 1000","inputs":{"text":"short"}},
  {"id":"each","tool":"template","forEach":"{{ get.output.body.items }}","inputs":{"text":"item {{ item }} of {{ get.output.body.title }}"}},
  {"id":"big","tool":"filter","inputs":{"array":"{{ get.output.body.items }}","condition":"item > 1"}},
  {"id":"whole","tool":"embed","inputs":{"model":"whole","text":"{{ get.output.text }}"}},
  {"id":"mixed","tool":"embed","inputs":{"model":"mixed","text":"Page: {{ get.output.text }}"}},
  {"id":"list","tool":"http","inputs":{"url":"https://example.com/rows"}},
  {"id":"rows","tool":"embed","forEach":"{{ list.output.body }}","inputs":{"model":"row","text":"{{ item }}"}},
  {"id":"per","tool":"loop","inputs":{"items":"{{ list.output.body }}","as":"row","step":{"tool":"embed","inputs":{"model":"per","text":"{{ row }}"}}}}
],"output":{"length":"{{ len(get.output.text) }}","title":"{{ get.output.body.title }}","head":"{{ get.output.text[0:11] }}",
  "size":"{{ size.output.text }}","long":"{{ long.status }}","short":"{{ short.status }}",
  "each":"{{ each.output.results[2].text }}","big":"{{ big.output.resultCount }}","status":"{{ get.output.status }}",
  "rows":"{{ rows.output.count }}","per":"{{ per.output.iterations }}"}}`

// TestTemplatesSeeStoredValues: templates, conditions, forEach items, inline data steps and the
// workflow output that look inside a stored value see the value (its length, a field, a slice),
// not the reference; a value passed whole to a tool stays a reference (the tool resolves it)
// and costs no evaluation.
func TestTemplatesSeeStoredValues(t *testing.T) {
	h := newStoredHarness(t)
	res, err := h.run(t, storedDef, nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"length":5000,"title":"Rate limits","head":"stored page","size":"5000 chars","long":"completed",
	  "short":"skipped","each":"item 3 of Rate limits","big":2,"status":200,"rows":3,"per":3}`, outputJSON(t, res.Output))
	whole := h.seen["whole"][0].(map[string]any)
	require.Equal(t, map[string]any{toolspec.BlobKey: whole[toolspec.BlobKey], "size": float64(5002), "preview": `"stored page stored `},
		whole, "a value passed whole is handed on as its reference")
	require.Equal(t, "Page: "+h.page, h.blobs.value(t, h.seen["mixed"][0]), "text around a stored value: rendered, and stored again (over 1 KiB)")
	rows := []any{strings.Repeat("a", 600), strings.Repeat("b", 600), strings.Repeat("c", 600)}
	for _, model := range []string{"row", "per"} {
		var got []any
		for _, ref := range h.seen[model] {
			got = append(got, h.blobs.value(t, ref))
		}
		require.ElementsMatch(t, rows, got, "%s: a forEach or loop over a stored list gets its items, stored one by one", model)
	}
	// size, long, short, each (items, then 3 items' text), big, mixed, rows' items, per's items,
	// the output.
	require.Equal(t, 12, h.evaluated)
}

// TestTemplatesSeeReferencesInOldRuns: a run that met a stored value before ChangeStoredValues
// replays as it ran: its templates saw the reference (here len(ref) is its 3 keys).
func TestTemplatesSeeReferencesInOldRuns(t *testing.T) {
	h := newStoredHarness(t)
	h.env.OnGetVersion(workflows.ChangeStoredValues, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	res, err := h.run(t, `{"name":"old","steps":[{"id":"get","tool":"http","inputs":{"url":"https://example.com/page"}}],
	  "output":{"length":"{{ len(get.output.text) }}"}}`, nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"length":3}`, outputJSON(t, res.Output))
	require.Zero(t, h.evaluated)
}

// TestStoredValueErrorsReadAsLocalOnes: a template that fails over a stored value fails the step
// with the message evaluating it here gives.
func TestStoredValueErrorsReadAsLocalOnes(t *testing.T) {
	h := newStoredHarness(t)
	_, err := h.run(t, `{"name":"bad","steps":[{"id":"get","tool":"http","inputs":{"url":"https://example.com/page"}},
	  {"id":"m","tool":"template","inputs":{"text":"{{ get.output.text * 2 }}"}}]}`, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), `step "m": inputs: expression "get.output.text * 2"`)
	require.Equal(t, 1, h.evaluated)
}

// TestNoStoredValueNoEvaluation: runs without stored values never call the activity (nor record
// a version marker).
func TestNoStoredValueNoEvaluation(t *testing.T) {
	h := newStoredHarness(t)
	res, err := h.run(t, multiCollection, map[string]any{"query": "auth"})
	require.NoError(t, err)
	require.JSONEq(t, `{"count": 3, "top": "api/a.md"}`, outputJSON(t, res.Output))
	require.Zero(t, h.evaluated)
}
