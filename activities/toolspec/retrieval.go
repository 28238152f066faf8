package toolspec

// resultsOutput is the shape of every tool that returns ranked documents.
const resultsOutput = `{"type":"object","properties":{
  "query":{"type":"string"},
  "results":{"type":"array","items":{"type":"object","properties":{
    "source":{"type":"string"},"content":{"type":"string"},"score":{"type":"number"},
    "rerankedScore":{"type":"number"},"metadata":{"type":"object"}}}},
  "metadata":{"type":"object"}}}`

func init() {
	register(&Spec{
		Name: "query", Domain: "retrieval", Kind: KindActivity,
		Title:       "Query a knowledge collection",
		Description: "Full two-stage retrieval: embed the question, vector-search a collection, then rerank the candidates. Use it to answer a question from a knowledge base; use search for speed without reranking.",
		Input: `{"type":"object","required":["query"],"additionalProperties":false,"properties":{
		  "query":{"type":"string","minLength":1,"maxLength":5000,"description":"The question or search query in natural language"},
		  "db":{"type":"string","description":"Database name; defaults.db or the configured database when omitted"},
		  "collection":{"type":"string","description":"Collection with embedded documents; defaults.collection when omitted"},
		  "limit":{"type":"integer","minimum":1,"maximum":50,"default":5,"description":"Maximum number of results"},
		  "model":{"type":"string","description":"Embedding model"},
		  "rerank":{"type":"boolean","default":true,"description":"Rerank the candidates"},
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
		Description: "Raw vector similarity search without reranking: faster than query, less precise ordering.",
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
		Description: "Reorder candidate documents by relevance to a query. Documents may be strings, result objects (their content or text is ranked) or a step output holding results.",
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
