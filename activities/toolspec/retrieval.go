package toolspec

import (
	"encoding/json"
	"maps"
)

// Query is two-stage retrieval: search, then rerank.
var Query = Declare[QueryIn, Results](&Spec{
	MCP:  true,
	Name: "query", Domain: "retrieval", Kind: KindActivity, NeedsCollection: true,
	Title:       "Query a knowledge collection",
	Description: "Full two-stage retrieval: search (vector search blended with BM25 keyword matching) then, with a Voyage key, rerank the candidates with Voyage's reranker. Use it to answer a question from a knowledge base. Each result's score is its relevance in [0,1] (half cosine similarity, half keyword match, with both parts as similarity and keywordScore) and results come best first; rerankedScore is the reranker's relevance in [0,1] (offline it equals score: the offline reranker is the same fusion).",
	Annotations: readOnlyOpen,
	Calls: func(in map[string]any) Calls {
		c := Calls{Embed: 1, VectorSearch: 1}
		if boolInput(in, "rerank", true) {
			c.Rerank = 1
		}
		return c
	},
})

// QueryIn is query's input.
type QueryIn struct {
	Query       string         `json:"query" weft:"content,minLength=1,maxLength=5000" jsonschema:"The question or search query in natural language"`
	DB          string         `json:"db,omitempty" jsonschema:"Database name; defaults.db or the configured database when omitted"`
	Collection  string         `json:"collection,omitempty" jsonschema:"Collection with embedded documents; defaults.collection when omitted"`
	Limit       int            `json:"limit,omitempty" weft:"min=1,max=50,default=5" jsonschema:"Maximum number of results"`
	Model       string         `json:"model,omitempty" jsonschema:"Embedding model"`
	Rerank      bool           `json:"rerank,omitempty" weft:"default=true" jsonschema:"Rerank the candidates with Voyage's reranker when a key is configured (offline, results come in search's order either way)"`
	RerankModel string         `json:"rerankModel,omitempty" weft:"minLength=1" jsonschema:"Voyage's reranker model (default rerank-2.5, as vai's); offline the local reranker ranks"`
	Filter      map[string]any `json:"filter,omitempty" jsonschema:"Metadata pre-filter, e.g. {\"metadata.type\": \"api-doc\"}"`
}

// Search is hybrid search without a reranker.
var Search = Declare[SearchIn, Results](&Spec{
	MCP:  true,
	Name: "search", Domain: "retrieval", Kind: KindActivity, NeedsCollection: true,
	Title:       "Vector search",
	Description: "Hybrid search without a reranker: vector-search a collection for candidates, then order them by relevance, a blend of cosine similarity and BM25 keyword matching over the candidates' texts and source names. Each result's score is that relevance in [0,1], comparable across results and queries; similarity (cosine, in [0,1]) and keywordScore (in [0,1]) are its two halves. Faster than query with a Voyage key; offline the two rank alike.",
	Annotations: readOnlyOpen,
	Calls:       func(map[string]any) Calls { return Calls{Embed: 1, VectorSearch: 1} },
})

// SearchIn is search's input.
type SearchIn struct {
	Query      string         `json:"query" weft:"content,minLength=1,maxLength=5000" jsonschema:"Search query text"`
	DB         string         `json:"db,omitempty"`
	Collection string         `json:"collection,omitempty"`
	Limit      int            `json:"limit,omitempty" weft:"min=1,max=100,default=10"`
	Model      string         `json:"model,omitempty"`
	Filter     map[string]any `json:"filter,omitempty"`
}

// Rerank reorders documents by relevance to a query.
var Rerank = Declare[RerankIn, Results](&Spec{
	MCP:  true,
	Name: "rerank", Domain: "retrieval", Kind: KindActivity,
	Title:       "Rerank documents",
	Description: "Reorder candidate documents by relevance to a query, adding rerankedScore in [0,1]. Documents may be strings, result objects (their content or text is ranked) or a step output holding results. With a Voyage key Voyage's reranker ranks them; without one the fusion search uses does (local-embedder cosine blended with BM25 over the documents and their source names, statistics from these documents).",
	RawInput: map[string]string{"documents": `{"type":["array","object"],"minItems":1,"maxItems":1000,
	  "items":{"type":["string","object"]},"description":"Texts or result objects to rerank (at most 1000)"}`},
	Annotations: readOnlyOpen,
	Calls:       func(map[string]any) Calls { return Calls{Rerank: 1} },
})

// RerankIn is rerank's input.
type RerankIn struct {
	Query string `json:"query" weft:"content,minLength=1,maxLength=5000"`
	// Documents is a list of texts or objects, or an object holding them as results.
	Documents any    `json:"documents" weft:"content"`
	Model     string `json:"model,omitempty" weft:"enum=rerank-2.5|rerank-2.5-lite,default=rerank-2.5"`
	Limit     int    `json:"limit,omitempty" weft:"min=1,max=1000"`
}

// Results is the output of every tool that returns ranked documents (query, search, rerank).
type Results struct {
	Query    string          `json:"query"`
	Results  []Document      `json:"results" jsonschema:"Best first" weft:"content"`
	Metadata ResultsMetadata `json:"metadata"`
	Warnings []string        `json:"warnings,omitempty" jsonschema:"Why a search may have found nothing (an empty collection); lifted into the step's warnings"`
}

// ResultsMetadata says how results were found. Search and query set the search's fields;
// rerank only model and resultCount.
type ResultsMetadata struct {
	DB              string `json:"db,omitempty"`
	Collection      string `json:"collection,omitempty"`
	Model           string `json:"model" jsonschema:"The query's embedding model (search, query) or the reranker (rerank)"`
	SearchPath      string `json:"searchPath,omitempty" jsonschema:"$vectorSearch (an Atlas vector index) or exact"`
	Ranking         string `json:"ranking,omitempty" jsonschema:"How the candidates were ranked"`
	RetrievalTimeMs *int64 `json:"retrievalTimeMs,omitempty"`
	ResultCount     int    `json:"resultCount"`
	Reranked        *bool  `json:"reranked,omitempty" jsonschema:"query: whether a reranker ordered the results"`
	RerankModel     string `json:"rerankModel,omitempty"`
}

// Document is one ranked result: a passage search found, or a document reranked.
type Document struct {
	Source        string         `json:"source"`
	Content       string         `json:"content"`
	Score         float64        `json:"score" jsonschema:"Relevance in [0,1], by which search orders results: half vector similarity, half keyword match (keywordScore)"`
	Similarity    float64        `json:"similarity" jsonschema:"Cosine similarity of the query and the passage (negative shown as 0), the same on Atlas $vectorSearch and the exact search"`
	KeywordScore  float64        `json:"keywordScore" jsonschema:"BM25 of the query over the candidates' texts and source names, b/(b+1): 0 when no query word occurs"`
	RerankedScore *float64       `json:"rerankedScore,omitempty" jsonschema:"The reranker's relevance in [0,1]: Voyage's with a key, otherwise the same fusion as score, over the documents reranked"`
	Index         *int           `json:"index,omitempty" jsonschema:"The document's position in what was reranked"`
	Metadata      map[string]any `json:"metadata"`
	// Fields, when set, is a reranked document as the step gave it (rerank takes any objects,
	// or texts, which become {"content": text}): the document is then these fields with index and
	// rerankedScore, and the fields above are not written.
	Fields map[string]any `json:"-"`
}

// MarshalJSON writes a reranked document's own fields when it has them (Fields).
func (d Document) MarshalJSON() ([]byte, error) {
	if d.Fields == nil {
		type plain Document
		return json.Marshal(plain(d))
	}
	m := make(map[string]any, len(d.Fields)+2)
	maps.Copy(m, d.Fields)
	if d.Index != nil {
		m["index"] = *d.Index
	}
	if d.RerankedScore != nil {
		m["rerankedScore"] = *d.RerankedScore
	}
	return json.Marshal(m)
}
