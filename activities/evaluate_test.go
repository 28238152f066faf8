package activities

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities/toolspec"
)

func storedRef(t *testing.T, blobs memBlobs, v any) map[string]any {
	data, err := json.Marshal(v)
	require.NoError(t, err)
	id, err := blobs.PutBlob(context.Background(), data)
	require.NoError(t, err)
	return blobRef(id, data)
}

// echoEnv is an Evaluator that returns, per job, the environment root its source names.
func echoEnv(jobs []toolspec.EvalJob, env map[string]any) ([]any, error) {
	out := make([]any, len(jobs))
	for i, j := range jobs {
		if j.Source == "fail" {
			return nil, errors.New(`expression "fail": no`)
		}
		out[i] = env[j.Source]
	}
	return out, nil
}

func TestEvaluateReadsStoredValuesAndStoresLargeResults(t *testing.T) {
	blobs := memBlobs{}
	ctx := context.Background()
	text := strings.Repeat("t", 5000)
	inner := storedRef(t, blobs, text)
	outer := storedRef(t, blobs, map[string]any{"text": inner, "n": 1}) // a stored value holding a reference
	rows := []any{strings.Repeat("a", 600), "small", strings.Repeat("c", 600)}
	eval := Evaluate(echoEnv, ClaimCheck{Blobs: blobs, Above: 1024})
	res, err := eval(ctx, toolspec.EvalRequest{
		Jobs: []toolspec.EvalJob{{Kind: toolspec.EvalTemplate, Source: "doc"}, {Kind: toolspec.EvalItems, Source: "rows"},
			{Kind: toolspec.EvalBool, Source: "flag"}, {Kind: toolspec.EvalTemplate, Source: "small"}},
		Env: map[string]any{"doc": outer, "rows": storedRef(t, blobs, rows), "flag": true, "small": map[string]any{"n": inner}},
	})
	require.NoError(t, err)
	require.Len(t, res.Values, 4)

	doc := res.Values[0].(map[string]any)
	require.EqualValues(t, 1, doc["n"], "small fields stay readable")
	stored := doc["text"].(map[string]any)
	data, _ := blobs.GetBlob(ctx, stored[BlobKey].(string))
	require.Equal(t, `"`+text+`"`, string(data), "references inside stored values are read too; a large result is stored again")

	items := res.Values[1].([]any)
	require.Len(t, items, 3, "a list stays a list")
	require.Equal(t, "small", items[1])
	require.Contains(t, items[0], BlobKey, "its large items are stored one by one")
	require.Len(t, []rune(items[2].(map[string]any)["preview"].(string)), 41)

	require.Equal(t, true, res.Values[2])
	require.Contains(t, res.Values[3].(map[string]any)["n"], BlobKey, "a large value read whole is stored again")
}

func TestEvaluateErrors(t *testing.T) {
	blobs := memBlobs{}
	ref := storedRef(t, blobs, strings.Repeat("t", 100))
	_, err := Evaluate(echoEnv, ClaimCheck{Blobs: blobs, Above: 1024})(context.Background(), toolspec.EvalRequest{
		Jobs: []toolspec.EvalJob{{Kind: toolspec.EvalTemplate, Source: "fail"}}, Env: map[string]any{"x": ref}})
	var ae *temporal.ApplicationError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, toolspec.ErrInvalidInput, ae.Type(), "a wrong template is not retried")
	require.Equal(t, `expression "fail": no`, ae.Message(), "with the interpreter's own message")

	_, err = Evaluate(echoEnv, ClaimCheck{})(context.Background(), toolspec.EvalRequest{
		Jobs: []toolspec.EvalJob{{Kind: toolspec.EvalTemplate, Source: "x"}}, Env: map[string]any{"x": ref}})
	require.ErrorAs(t, err, &ae)
	require.Equal(t, toolspec.ErrMissingConfig, ae.Type())
	require.Contains(t, ae.Message(), "set MONGODB_URI on the worker")

	res, err := Evaluate(echoEnv, ClaimCheck{})(context.Background(), toolspec.EvalRequest{
		Jobs: []toolspec.EvalJob{{Kind: toolspec.EvalTemplate, Source: "x"}}, Env: map[string]any{"x": "plain"}})
	require.NoError(t, err, "without references no store is needed")
	require.Equal(t, []any{"plain"}, res.Values)
}
