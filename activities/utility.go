package activities

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/weftworks/weft/activities/chunk"
	"github.com/weftworks/weft/activities/toolspec"
)

func init() {
	bind(toolspec.Chunk, (*Tools).chunk)
	bind(toolspec.Estimate, (*Tools).estimate)
	bind(toolspec.Explain, (*Tools).explain)
	bind(toolspec.Aggregate, (*Tools).aggregate)
}

func (t *Tools) chunk(ctx context.Context, in toolspec.ChunkIn) (toolspec.ChunkOut, *toolspec.Usage, error) {
	chunks, err := chunk.Split(in.Text, in.Strategy, in.ChunkSize, in.Overlap)
	if err != nil {
		return toolspec.ChunkOut{}, nil, &InputError{Msg: err.Error()}
	}
	if chunks == nil {
		chunks = []string{}
	}
	return toolspec.ChunkOut{Chunks: chunks, Count: len(chunks)}, nil, nil
}

// queryTokens is the assumed size of one query.
const queryTokens = 30

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func (t *Tools) estimate(ctx context.Context, in toolspec.EstimateIn) (toolspec.EstimateOut, *toolspec.Usage, error) {
	docs, queries, months, avg := in.Docs, in.Queries, in.Months, in.AvgTokens
	docTokens := float64(docs) * float64(avg)
	queryTok := float64(queries) * float64(months) * queryTokens
	out := []toolspec.ModelEstimate{}
	var lite float64
	for _, m := range Catalog {
		if m.Category == "embedding" && m.Name == "voyage-4-lite" {
			lite = m.PricePerM
		}
	}
	only := in.Model
	var names []string
	for _, m := range Catalog {
		if m.Category != "embedding" {
			continue
		}
		names = append(names, m.Name)
		if only != "" && m.Name != only {
			continue
		}
		embed := docTokens / 1e6 * m.PricePerM
		query := queryTok / 1e6 * m.PricePerM
		e := toolspec.ModelEstimate{Model: m.Name, DocumentCost: round2(embed), QueryCost: round2(query), Total: round2(embed + query)}
		if strings.HasPrefix(m.Name, "voyage-4") && m.Name != "voyage-4-lite" {
			asym := embed + queryTok/1e6*lite
			total, savings := round2(asym), round2(embed+query-asym)
			e.AsymmetricTotal, e.AsymmetricSavings = &total, &savings
			e.Note = "documents with " + m.Name + ", queries with voyage-4-lite (shared embedding space)"
		}
		out = append(out, e)
	}
	if only != "" && len(out) == 0 {
		return toolspec.EstimateOut{}, nil, &InputError{Msg: fmt.Sprintf("model %q is not an embedding model weft knows; known: %s", only, strings.Join(names, ", "))}
	}
	return toolspec.EstimateOut{Docs: docs, Queries: queries, Months: months, AvgTokens: avg,
		DocumentTokens: docTokens, QueryTokens: queryTok, Estimates: out, PricesAsOf: CatalogDate}, nil, nil
}

// topics are weft's own explainers.
var topics = map[string][2]string{
	"embeddings":     {"Embeddings", "An embedding turns text into a vector so that texts with similar meaning end up close together. Retrieval embeds the question, then finds the stored chunks whose vectors are nearest (cosine similarity). Query and document embeddings may differ (input_type) so short questions match long passages."},
	"rerank":         {"Reranking", "A reranker reads the question and each candidate together and scores relevance directly. It is slower than vector search, so it runs on the few dozen candidates the search returned, and usually fixes the ordering of the top results."},
	"two-stage":      {"Two-stage retrieval", "Stage one: fast vector search over the whole collection returns candidates. Stage two: a reranker orders those candidates precisely. The query tool does both; search does only stage one."},
	"quantization":   {"Quantization", "Storing vectors with fewer bits (int8, binary) shrinks memory and speeds up search at a small cost in accuracy. weft's local embedder keeps its word vectors as int8 with one scale per word."},
	"rag":            {"Retrieval-augmented generation", "RAG retrieves the passages relevant to a question and gives them to an LLM as context, so the answer is grounded in your documents and can cite them. In weft: a query step, then a generate step whose context is the query's results."},
	"workflows":      {"Workflows", "A weft workflow is a JSON file of steps; each step names a tool and its inputs, which may use {{ }} templates to read inputs and earlier outputs. Steps run as soon as what they reference is ready, so independent searches run in parallel."},
	"review":         {"Human review", "A review step pauses a run until a person approves, edits (sending corrected data) or rejects it: `weft review ID approve`, or the review signal from the Temporal CLI. An optional timeout decides by itself."},
	"mcp":            {"MCP", "The Model Context Protocol lets AI agents call tools. weft's gateway offers its knowledge tools and workflows to MCP clients such as Claude Desktop, Cursor and VS Code."},
	"durability":     {"Durability", "Every run is a Temporal workflow: each finished step is recorded, so after a crash a new worker resumes from the last finished step instead of starting over. Tool steps are retried with backoff; invalid input is not."},
	"chunking":       {"Chunking", "Long documents are split into chunks before embedding: fixed sizes, sentences, paragraphs, recursive splitting at the largest natural boundary, or markdown sections. Overlap keeps context across chunk borders."},
	"models":         {"Choosing models", "Larger embedding models retrieve better and cost more; lite models are cheap enough for queries. With a shared embedding space you can embed documents with a large model and queries with a lite one. Without any key weft uses its offline local embedder."},
	"local-embedder": {"The local embedder", "local-glove-sif-100d averages GloVe word vectors weighted by rarity (SIF), removes the direction all texts share, and spells out unknown words with character trigrams. It needs no network; it is much weaker than trained encoders."},
}

func (t *Tools) explain(ctx context.Context, in toolspec.ExplainIn) (toolspec.ExplainOut, *toolspec.Usage, error) {
	topic := strings.ToLower(strings.TrimSpace(in.Topic))
	if e, ok := topics[topic]; ok {
		return toolspec.ExplainOut{Topic: topic, Title: e[0], Content: e[1]}, nil, nil
	}
	names := make([]string, 0, len(topics))
	for k := range topics {
		names = append(names, k)
	}
	sort.Strings(names)
	return toolspec.ExplainOut{}, nil, &InputError{Msg: fmt.Sprintf("no explainer for %q; topics: %s", topic, strings.Join(names, ", "))}
}

func (t *Tools) aggregate(ctx context.Context, in toolspec.AggregateIn) (toolspec.ListOut, *toolspec.Usage, error) {
	coll, err := t.collectionNamed(in.Collection)
	if err != nil {
		return toolspec.ListOut{}, nil, err
	}
	if err := checkPipeline(in.Pipeline, "pipeline"); err != nil {
		return toolspec.ListOut{}, nil, err
	}
	store, err := t.Store(ctx)
	if err != nil {
		return toolspec.ListOut{}, nil, err
	}
	docs, err := store.Aggregate(ctx, t.databaseNamed(in.DB), coll, in.Pipeline, in.Limit)
	if err != nil {
		return toolspec.ListOut{}, nil, &InputError{Msg: err.Error()}
	}
	if docs == nil {
		docs = []any{}
	}
	return toolspec.ListOut{Results: docs, Count: len(docs)}, nil, nil
}
