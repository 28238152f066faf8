package toolspec

import "time"

// ChunkStrategies are the text splitting strategies of ingest and chunk.
var ChunkStrategies = []string{"fixed", "sentence", "paragraph", "recursive", "markdown"}

// Collections lists a database's collections.
var Collections = Declare[CollectionsIn, CollectionsOut](&Spec{
	MCP:  true,
	Name: "collections", Domain: "management", Kind: KindActivity,
	Title:       "List collections",
	Description: "List the database's collections with document counts and vector index details.",
	Annotations: readOnlyClosed,
	Calls:       func(map[string]any) Calls { return Calls{DatabaseRead: 1} },
})

// CollectionsIn is collections' input.
type CollectionsIn struct {
	DB string `json:"db,omitempty"`
}

// CollectionsOut is collections' output.
type CollectionsOut struct {
	Database    string           `json:"database"`
	Collections []CollectionInfo `json:"collections" weft:"content"`
}

// CollectionInfo is one collection (weft's own are not listed).
type CollectionInfo struct {
	Name           string `json:"name"`
	DocumentCount  int64  `json:"documentCount"`
	HasVectorIndex bool   `json:"hasVectorIndex"`
	EmbeddingField string `json:"embeddingField"`
	Dimensions     int    `json:"dimensions"`
	Model          string `json:"model" jsonschema:"The embedding model its documents were embedded with (empty when it holds none)"`
}

// Models lists the model catalog.
var Models = Declare[ModelsIn, ModelsOut](&Spec{
	MCP:  true,
	Name: "models", Domain: "management", Kind: KindActivity, Pure: true,
	Title:       "List models",
	Description: "The model catalog: dimensions, context length, price per token and category.",
	Annotations: readOnlyClosed,
})

// ModelsIn is models' input.
type ModelsIn struct {
	Category string `json:"category,omitempty" weft:"enum=embedding|rerank|generation|all,default=all"`
}

// ModelsOut is models' output.
type ModelsOut struct {
	Models     []CatalogModel `json:"models" weft:"content"`
	PricesAsOf string         `json:"pricesAsOf" jsonschema:"When the prices were taken (YYYY-MM)"`
}

// CatalogModel is one model of the catalog.
type CatalogModel struct {
	Name       string  `json:"name"`
	Provider   string  `json:"provider"`
	Category   string  `json:"category" jsonschema:"embedding, rerank or generation"`
	Dimensions []int   `json:"dimensions" weft:"nullable" jsonschema:"The embedding sizes it offers, the default first (null for other models)"`
	Context    int     `json:"contextTokens"`
	PricePerM  float64 `json:"pricePerMillionTokens" jsonschema:"List price in USD per million tokens"`
	// Description says what the model is for.
	Description string `json:"description"`
}

// Ingest chunks, embeds and upserts a text.
var Ingest = Declare[IngestIn, IngestOut](&Spec{
	MCP:  true,
	Name: "ingest", Domain: "management", Kind: KindActivity, NeedsCollection: true,
	Title:       "Ingest a document",
	Description: "Chunk a text, embed the chunks and upsert them into a collection. Chunk ids derive from (collection, source, chunk index, content hash), so a retried ingest never duplicates data.",
	Aliases:     map[string]string{"chunk_strategy": "chunkStrategy", "strategy": "chunkStrategy", "chunk_size": "chunkSize", "size": "chunkSize", "chunk_overlap": "chunkOverlap", "overlap": "chunkOverlap"},
	Timeout:     10 * time.Minute,
	Heartbeat:   15 * time.Second,
	Annotations: Annotations{OpenWorld: true},
	Calls:       func(map[string]any) Calls { return Calls{Embed: 1, DatabaseWrite: 1} },
	// A batch of documents is embedded 64 chunks a request and upserted together: up to 64
	// documents and ~300 KB of text a call, about 10 requests (a larger document goes alone).
	Batch: &Batch{MaxItems: 64, MaxTokens: 100_000, Tokens: func(in map[string]any) int { return TextTokens(in["text"]) }},
})

// IngestIn is ingest's input.
type IngestIn struct {
	Text          string         `json:"text" weft:"content,minLength=1,maxLength=10000000"`
	DB            string         `json:"db,omitempty"`
	Collection    string         `json:"collection,omitempty"`
	Source        string         `json:"source,omitempty" jsonschema:"Source identifier (file name, URL) used for citations"`
	Metadata      map[string]any `json:"metadata,omitempty"`
	ChunkStrategy string         `json:"chunkStrategy,omitempty" weft:"enum=fixed|sentence|paragraph|recursive|markdown,default=recursive"`
	ChunkSize     int            `json:"chunkSize,omitempty" weft:"min=100,max=8000,default=512"`
	ChunkOverlap  int            `json:"chunkOverlap,omitempty" weft:"min=0,max=4000,default=50"`
	Model         string         `json:"model,omitempty"`
	Replace       bool           `json:"replace,omitempty" jsonschema:"Remove the chunks stored under source that this ingest did not write: a changed document's old chunks (a chunk's id holds its content), so the source holds this text alone"`
}

// IngestOut is ingest's output.
type IngestOut struct {
	Source        string         `json:"source" jsonschema:"The source the chunks were stored under (inline:HASH for a text without one)"`
	ChunksCreated int            `json:"chunksCreated" jsonschema:"Chunks written (created or, for a retried ingest, overwritten)"`
	Collection    string         `json:"collection"`
	DB            string         `json:"db"`
	Model         string         `json:"model"`
	Metadata      map[string]any `json:"metadata" jsonschema:"The metadata stored on every chunk (null when none)"`
}
