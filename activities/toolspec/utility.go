package toolspec

func init() {
	register(&Spec{
		Name: "explain", Domain: "utility", Kind: KindActivity,
		Title:       "Explain a concept",
		Description: "weft's own explainers: embeddings, rerank, two-stage retrieval, quantization, rag, workflows, review, mcp, durability and more.",
		Input:       `{"type":"object","required":["topic"],"additionalProperties":false,"properties":{"topic":{"type":"string","minLength":1,"maxLength":100}}}`,
		Output:      `{"type":"object","properties":{"topic":{"type":"string"},"title":{"type":"string"},"content":{"type":"string"}}}`,
		Annotations: readOnlyClosed,
	})
	register(&Spec{
		Name: "estimate", Domain: "utility", Kind: KindActivity,
		Title:       "Estimate costs",
		Description: "Embedding and query cost per model for a corpus size, query volume and horizon, including asymmetric-retrieval savings.",
		Input: `{"type":"object","required":["docs"],"additionalProperties":false,"properties":{
		  "docs":{"type":"integer","minimum":1},
		  "queries":{"type":"integer","minimum":0,"default":0},
		  "months":{"type":"integer","minimum":1,"maximum":60,"default":12},
		  "avgTokens":{"type":"integer","minimum":1,"maximum":100000},
		  "model":{"type":"string","minLength":1,"description":"estimate for this model only (default: every embedding model, compared)"}}}`,
		Output:      `{"type":"object","properties":{"estimates":{"type":"array","items":{"type":"object"}}}}`,
		Annotations: readOnlyClosed,
	})
	register(&Spec{
		Name: "chunk", Domain: "utility", Kind: KindActivity,
		Title:       "Chunk text",
		Description: "Split a text with the ingest strategies without storing anything.",
		Input: `{"type":"object","required":["text"],"additionalProperties":false,"properties":{
		  "text":{"type":"string","minLength":1,"maxLength":10000000},
		  "strategy":{"type":"string","enum":["fixed","sentence","paragraph","recursive","markdown"],"default":"recursive"},
		  "chunkSize":{"type":"integer","minimum":100,"maximum":8000,"default":512},
		  "overlap":{"type":"integer","minimum":0,"maximum":4000,"default":50}}}`,
		Aliases:     map[string]string{"size": "chunkSize", "chunk_size": "chunkSize", "chunkOverlap": "overlap", "chunk_overlap": "overlap"},
		Output:      `{"type":"object","properties":{"chunks":{"type":"array","items":{"type":"string"}},"count":{"type":"integer"}}}`,
		Annotations: readOnlyClosed,
	})
	register(&Spec{
		Name: "aggregate", Domain: "utility", Kind: KindActivity,
		Title:       "Aggregate (read-only)",
		Description: "Run a read-only MongoDB aggregation pipeline on a collection. Write stages ($out, $merge) are refused.",
		Input: `{"type":"object","required":["pipeline"],"additionalProperties":false,"properties":{
		  "db":{"type":"string"},"collection":{"type":"string"},
		  "pipeline":{"type":"array","maxItems":50,"items":{"type":"object","minProperties":1,"maxProperties":1,
		    "not":{"anyOf":[{"required":["$out"]},{"required":["$merge"]}]}}},
		  "limit":{"type":"integer","minimum":1,"maximum":10000,"default":100}}}`,
		Output:      `{"type":"object","properties":{"results":{"type":"array","items":{"type":"object"}},"count":{"type":"integer"}}}`,
		Annotations: readOnlyClosed,
		Calls:       func(map[string]any) Calls { return Calls{DatabaseRead: 1} },
	})
	register(&Spec{
		Name: "http", Domain: "utility", Kind: KindActivity,
		Title:       "HTTP request",
		Description: "A bounded GET or POST with a timeout and a response size cap. Private, loopback and link-local addresses are refused unless allowed in config.",
		Input: `{"type":"object","required":["url"],"additionalProperties":false,"properties":{
		  "url":{"type":"string","pattern":"^https?://","maxLength":4096},
		  "method":{"type":"string","enum":["GET","POST"],"default":"GET"},
		  "headers":{"type":"object","additionalProperties":{"type":"string"}},
		  "body":{},
		  "timeout":{"type":["string","number"],"pattern":"^[0-9]+(ms|s|m)$","minimum":1,"default":"30s","description":"30s, 500ms; or a number of milliseconds"},
		  "maxBytes":{"type":"integer","minimum":1,"maximum":10485760,"default":1048576}}}`,
		Output:      `{"type":"object","properties":{"status":{"type":"integer"},"headers":{"type":"object"},"body":{},"text":{"type":"string"}}}`,
		Annotations: Annotations{OpenWorld: true},
		Calls:       func(map[string]any) Calls { return Calls{HTTP: 1} },
	})
}
