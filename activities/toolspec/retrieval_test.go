package toolspec_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
)

// TestDocumentJSON: a search result writes its fields (metadata even when null, index and
// rerankedScore only once reranked); a reranked document the step gave writes its own fields as
// given, with index and rerankedScore set by the reranker.
func TestDocumentJSON(t *testing.T) {
	score, idx := 0.75, 2
	for _, tc := range []struct {
		name string
		doc  toolspec.Document
		want string
	}{
		{"searched", toolspec.Document{Source: "a.md", Content: "text", Score: 0.5, Similarity: 0.25, KeywordScore: 0.125},
			`{"source":"a.md","content":"text","score":0.5,"similarity":0.25,"keywordScore":0.125,"metadata":null}`},
		{"searched and reranked", toolspec.Document{Source: "a.md", Content: "text", Score: 0.5, RerankedScore: &score, Index: &idx, Metadata: map[string]any{"k": "v"}},
			`{"source":"a.md","content":"text","score":0.5,"similarity":0,"keywordScore":0,"rerankedScore":0.75,"index":2,"metadata":{"k":"v"}}`},
		{"a text reranked", toolspec.Document{Fields: map[string]any{"content": "text"}, RerankedScore: &score, Index: &idx},
			`{"content":"text","index":2,"rerankedScore":0.75}`},
		{"an object reranked", toolspec.Document{Fields: map[string]any{"text": "t", "title": "x", "index": 9, "rerankedScore": 0.1}, RerankedScore: &score, Index: &idx},
			`{"index":2,"rerankedScore":0.75,"text":"t","title":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.doc)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(b))
		})
	}
}
