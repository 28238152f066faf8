package activities_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/templates"
)

// demoQuestions are natural questions over the sample corpus `weft dev` ingests, each with the
// document that answers it; the first is the question the demo itself asks.
var demoQuestions = []struct{ question, collection, first string }{
	{"what happens when we hit the rate limit", "api_docs", "api/rate-limits.md"},
	{"how long are old API versions supported", "api_docs", "api/versioning.md"},
	{"what happens when a webhook delivery fails", "api_docs", "api/webhook-retries.md"},
	{"how do I fetch the next page of a list", "api_docs", "api/pagination.md"},
	{"what does a 401 error mean", "api_docs", "api/errors.md"},
	{"are provider errors retried", "architecture", "arch/retries.md"},
	{"what stops a bad release", "architecture", "arch/deployments.md"},
	{"how are documents split into chunks", "architecture", "arch/chunking.md"},
}

// TestDemoQuestionsRankTheAnswerFirst runs the real tools (local embedder, embedded store) on
// the sample corpus: search of the right collection, and the demo's own pipeline
// (multi-collection-search: query both collections without rerank, merge without duplicate
// sources, rerank the union) put the answering document first, with scores in [0,1] that fall
// as the rank does.
func TestDemoQuestionsRankTheAnswerFirst(t *testing.T) {
	tools := activities.NewTools(activities.Config{MongoDBURI: storeURI}).Handlers()
	ctx := context.Background()
	const db = "demo_rank"
	for _, coll := range []string{"api_docs", "architecture"} {
		for _, d := range templates.Corpus()[coll] {
			_, _, err := tools["ingest"](ctx, map[string]any{"text": d.Text, "source": d.Source, "collection": coll, "db": db})
			require.NoError(t, err)
		}
	}
	for _, q := range demoQuestions {
		t.Run(q.question, func(t *testing.T) {
			out, _, err := tools["search"](ctx, map[string]any{"query": q.question, "collection": q.collection, "db": db, "limit": 5.0})
			require.NoError(t, err)
			hits := out.(map[string]any)["results"].([]any)
			t.Logf("search %s: %s", q.collection, describe(hits, "score"))
			ranked := demoPipeline(t, tools, q.question, db)
			t.Logf("multi-collection-search: %s", describe(ranked, "rerankedScore"))

			require.Equal(t, q.first, field(hits[0], "source"), "search %s", q.collection)
			requireComparable(t, hits, "score")
			require.Equal(t, q.first, field(ranked[0], "source"), "multi-collection-search")
			requireComparable(t, ranked, "rerankedScore")
		})
	}
}

// demoPipeline is the multi-collection-search template's steps, called directly.
func demoPipeline(t *testing.T, tools map[string]activities.Handler, question, db string) []any {
	ctx := context.Background()
	var union []any
	seen := map[string]bool{}
	for _, coll := range []string{"api_docs", "architecture"} {
		out, _, err := tools["query"](ctx, map[string]any{"query": question, "collection": coll, "db": db, "limit": 5.0, "rerank": false})
		require.NoError(t, err)
		for _, h := range out.(map[string]any)["results"].([]any) {
			if s := field(h, "source").(string); !seen[s] {
				seen[s] = true
				union = append(union, h)
			}
		}
	}
	out, _, err := tools["rerank"](ctx, map[string]any{"query": question, "documents": union})
	require.NoError(t, err)
	return out.(map[string]any)["results"].([]any)
}

func field(hit any, k string) any { return hit.(map[string]any)[k] }

// requireComparable: every score is in [0,1] and the scores fall as the rank does.
func requireComparable(t *testing.T, hits []any, key string) {
	t.Helper()
	prev := 1.0
	for i, h := range hits {
		s, ok := field(h, key).(float64)
		require.True(t, ok, "result %d has no %s", i, key)
		require.GreaterOrEqual(t, s, 0.0, "result %d", i)
		require.LessOrEqual(t, s, prev, "result %d scores above the one before it", i)
		prev = s
	}
	require.Greater(t, field(hits[0], key).(float64), 0.1, "the best hit's score says it is relevant")
}

func describe(hits []any, key string) string {
	var b strings.Builder
	for i, h := range hits {
		fmt.Fprintf(&b, " [%d] %s %.3f", i+1, field(h, "source"), field(h, key))
	}
	return b.String()
}
