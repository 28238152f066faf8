package toolspec

// resultsOutput is the shape of every tool that returns ranked documents.
const resultsOutput = `{"type":"object","properties":{
  "query":{"type":"string"},
  "results":{"type":"array","items":{"type":"object","properties":{
    "source":{"type":"string"},"content":{"type":"string"},
    "score":{"type":"number","description":"Relevance in [0,1], by which search orders results: half vector similarity, half keyword match (keywordScore)"},
    "similarity":{"type":"number","description":"Cosine similarity of the query and the passage (negative shown as 0), the same on Atlas $vectorSearch and the exact search"},
    "keywordScore":{"type":"number","description":"BM25 of the query over the candidates' texts and source names, b/(b+1): 0 when no query word occurs"},
    "rerankedScore":{"type":"number","description":"The reranker's relevance in [0,1]: Voyage's with a key, otherwise the same fusion as score, over the documents reranked"},
    "metadata":{"type":"object"}}}},
  "metadata":{"type":"object"}}}`

func init() {
	register(&Spec{
		Name: "query", Domain: "retrieval", Kind: KindActivity,
		Title:       "Query a knowledge collection",
		Description: "Full two-stage retrieval: search (vector search blended with BM25 keyword matching) then, with a Voyage key, rerank the candidates with Voyage's reranker. Use it to answer a question from a knowledge base. Each result's score is its relevance in [0,1] (half cosine similarity, half keyword match, with both parts as similarity and keywordScore) and results come best first; rerankedScore is the reranker's relevance in [0,1] (offline it equals score: the offline reranker is the same fusion).",
		Input: `{"type":"object","required":["query"],"additionalProperties":false,"properties":{
		  "query":{"type":"string","minLength":1,"maxLength":5000,"description":"The question or search query in natural language"},
		  "db":{"type":"string","description":"Database name; defaults.db or the configured database when omitted"},
		  "collection":{"type":"string","description":"Collection with embedded documents; defaults.collection when omitted"},
		  "limit":{"type":"integer","minimum":1,"maximum":50,"default":5,"description":"Maximum number of results"},
		  "model":{"type":"string","description":"Embedding model"},
		  "rerank":{"type":"boolean","default":true,"description":"Rerank the candidates with Voyage's reranker when a key is configured (offline, results come in search's order either way)"},
		  "filter":{"type":"object","description":"Metadata pre-filter, e.g. {\"metadata.type\": \"api-doc\"}"}}}`,
		Output:      resultsOutput,
		Annotations: readOnlyOpen,
		Calls: func(in map[string]any) Calls {
			c := Calls{Embed: 1, VectorSearch: 1}
			if boolInput(in, "rerank", true) {
				c.Rerank = 1
			}
			return c
		},
	})
	register(&Spec{
		Name: "search", Domain: "retrieval", Kind: KindActivity,
		Title:       "Vector search",
		Description: "Hybrid search without a reranker: vector-search a collection for candidates, then order them by relevance, a blend of cosine similarity and BM25 keyword matching over the candidates' texts and source names. Each result's score is that relevance in [0,1], comparable across results and queries; similarity (cosine, in [0,1]) and keywordScore (in [0,1]) are its two halves. Faster than query with a Voyage key; offline the two rank alike.",
		Input: `{"type":"object","required":["query"],"additionalProperties":false,"properties":{
		  "query":{"type":"string","minLength":1,"maxLength":5000,"description":"Search query text"},
		  "db":{"type":"string"},"collection":{"type":"string"},
		  "limit":{"type":"integer","minimum":1,"maximum":100,"default":10},
		  "model":{"type":"string"},"filter":{"type":"object"}}}`,
		Output:      resultsOutput,
		Annotations: readOnlyOpen,
		Calls:       func(map[string]any) Calls { return Calls{Embed: 1, VectorSearch: 1} },
	})
	register(&Spec{
		Name: "rerank", Domain: "retrieval", Kind: KindActivity,
		Title:       "Rerank documents",
		Description: "Reorder candidate documents by relevance to a query, adding rerankedScore in [0,1]. Documents may be strings, result objects (their content or text is ranked) or a step output holding results. With a Voyage key Voyage's reranker ranks them; without one the fusion search uses does (local-embedder cosine blended with BM25 over the documents and their source names, statistics from these documents).",
		Input: `{"type":"object","required":["query","documents"],"additionalProperties":false,"properties":{
		  "query":{"type":"string","minLength":1,"maxLength":5000},
		  "documents":{"type":["array","object"],"minItems":1,"maxItems":1000,
		    "items":{"type":["string","object"]},"description":"Texts or result objects to rerank (at most 1000)"},
		  "model":{"type":"string","enum":["rerank-2.5","rerank-2.5-lite"],"default":"rerank-2.5"},
		  "limit":{"type":"integer","minimum":1,"maximum":1000}}}`,
		Output:      resultsOutput,
		Annotations: readOnlyOpen,
		Calls:       func(map[string]any) Calls { return Calls{Rerank: 1} },
	})
}
