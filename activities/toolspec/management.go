package toolspec

import "time"

// ChunkStrategies are the text splitting strategies of ingest and chunk.
var ChunkStrategies = []string{"fixed", "sentence", "paragraph", "recursive", "markdown"}

func init() {
	register(&Spec{
		Name: "collections", Domain: "management", Kind: KindActivity,
		Title:       "List collections",
		Description: "List the database's collections with document counts and vector index details.",
		Input:       `{"type":"object","additionalProperties":false,"properties":{"db":{"type":"string"}}}`,
		Output: `{"type":"object","properties":{"database":{"type":"string"},"collections":{"type":"array","items":{"type":"object",
		  "properties":{"name":{"type":"string"},"documentCount":{"type":"integer"},"hasVectorIndex":{"type":"boolean"},
		  "embeddingField":{"type":"string"},"dimensions":{"type":"integer"}}}}}}`,
		Annotations: readOnlyClosed,
		Calls:       func(map[string]any) Calls { return Calls{DatabaseRead: 1} },
	})
	register(&Spec{
		Name: "models", Domain: "management", Kind: KindActivity,
		Title:       "List models",
		Description: "The model catalog: dimensions, context length, price per token and category.",
		Input: `{"type":"object","additionalProperties":false,"properties":{
		  "category":{"type":"string","enum":["embedding","rerank","generation","all"],"default":"all"}}}`,
		Output:      `{"type":"object","properties":{"models":{"type":"array","items":{"type":"object"}}}}`,
		Annotations: readOnlyClosed,
	})
	register(&Spec{
		Name: "ingest", Domain: "management", Kind: KindActivity,
		Title:       "Ingest a document",
		Description: "Chunk a text, embed the chunks and upsert them into a collection. Chunk ids derive from (collection, source, chunk index, content hash), so a retried ingest never duplicates data.",
		Input: `{"type":"object","required":["text"],"additionalProperties":false,"properties":{
		  "text":{"type":"string","minLength":1,"maxLength":10000000},
		  "db":{"type":"string"},"collection":{"type":"string"},
		  "source":{"type":"string","description":"Source identifier (file name, URL) used for citations"},
		  "metadata":{"type":"object"},
		  "chunkStrategy":{"type":"string","enum":["fixed","sentence","paragraph","recursive","markdown"],"default":"recursive"},
		  "chunkSize":{"type":"integer","minimum":100,"maximum":8000,"default":512},
		  "chunkOverlap":{"type":"integer","minimum":0,"maximum":4000,"default":50},
		  "model":{"type":"string"}}}`,
		Aliases: map[string]string{"chunk_strategy": "chunkStrategy", "strategy": "chunkStrategy", "chunk_size": "chunkSize", "size": "chunkSize", "chunk_overlap": "chunkOverlap", "overlap": "chunkOverlap"},
		Output: `{"type":"object","properties":{"source":{"type":"string"},"chunksCreated":{"type":"integer"},
		  "collection":{"type":"string"},"model":{"type":"string"},"metadata":{"type":"object"}}}`,
		Timeout:   10 * time.Minute,
		Heartbeat: 15 * time.Second, HeartbeatsItself: true,
		Annotations: Annotations{OpenWorld: true},
		Calls:       func(map[string]any) Calls { return Calls{Embed: 1, DatabaseWrite: 1} },
	})
}
