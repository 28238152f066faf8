package toolspec

// Explain is weft's own explainers.
var Explain = Declare[ExplainIn, ExplainOut](&Spec{
	MCP:  true,
	Name: "explain", Domain: "utility", Kind: KindActivity, Pure: true,
	Title:       "Explain a concept",
	Description: "weft's own explainers: embeddings, rerank, two-stage retrieval, quantization, rag, workflows, review, mcp, durability and more.",
	Annotations: readOnlyClosed,
})

// ExplainIn is explain's input.
type ExplainIn struct {
	Topic string `json:"topic" weft:"minLength=1,maxLength=100"`
}

// ExplainOut is explain's output.
type ExplainOut struct {
	Topic   string `json:"topic"`
	Title   string `json:"title"`
	Content string `json:"content" weft:"content"`
}

// Estimate compares embedding costs.
var Estimate = Declare[EstimateIn, EstimateOut](&Spec{
	MCP:  true,
	Name: "estimate", Domain: "utility", Kind: KindActivity, Pure: true,
	Title:       "Estimate costs",
	Description: "Embedding and query cost per model for a corpus size, query volume and horizon, including asymmetric-retrieval savings.",
	Annotations: readOnlyClosed,
})

// EstimateIn is estimate's input.
type EstimateIn struct {
	Docs      int    `json:"docs,omitempty" jsonschema:"documents to embed (vai's default: 1000)" weft:"min=1,default=1000"`
	Queries   int    `json:"queries,omitempty" weft:"min=0,default=0"`
	Months    int    `json:"months,omitempty" weft:"min=1,max=60,default=12"`
	AvgTokens int    `json:"avgTokens,omitempty" weft:"min=1,max=100000,default=500"`
	Model     string `json:"model,omitempty" jsonschema:"estimate for this model only (default: every embedding model, compared)" weft:"minLength=1"`
}

// EstimateOut is estimate's output.
type EstimateOut struct {
	Docs           int             `json:"docs"`
	Queries        int             `json:"queries"`
	Months         int             `json:"months"`
	AvgTokens      int             `json:"avgTokens"`
	DocumentTokens float64         `json:"documentTokens"`
	QueryTokens    float64         `json:"queryTokens"`
	Estimates      []ModelEstimate `json:"estimates" weft:"content"`
	PricesAsOf     string          `json:"pricesAsOf"`
}

// ModelEstimate is one model's cost in an estimate, in USD.
type ModelEstimate struct {
	Model        string  `json:"model"`
	DocumentCost float64 `json:"documentCost"`
	QueryCost    float64 `json:"queryCost"`
	Total        float64 `json:"total"`
	// The asymmetric figures are set for models that share an embedding space with a lite model.
	AsymmetricTotal   *float64 `json:"asymmetricTotal,omitempty" jsonschema:"documents with this model, queries with the lite model of its family"`
	AsymmetricSavings *float64 `json:"asymmetricSavings,omitempty"`
	Note              string   `json:"note,omitempty"`
}

// Chunk splits a text.
var Chunk = Declare[ChunkIn, ChunkOut](&Spec{
	Name: "chunk", Domain: "utility", Kind: KindActivity, Pure: true,
	Title:       "Chunk text",
	Description: "Split a text with the ingest strategies without storing anything.",
	Aliases:     map[string]string{"size": "chunkSize", "chunk_size": "chunkSize", "chunkOverlap": "overlap", "chunk_overlap": "overlap"},
	Annotations: readOnlyClosed,
})

// ChunkIn is chunk's input.
type ChunkIn struct {
	Text      string `json:"text" weft:"content,minLength=1,maxLength=10000000"`
	Strategy  string `json:"strategy,omitempty" weft:"enum=fixed|sentence|paragraph|recursive|markdown,default=recursive"`
	ChunkSize int    `json:"chunkSize,omitempty" weft:"min=100,max=8000,default=512"`
	Overlap   int    `json:"overlap,omitempty" weft:"min=0,max=4000,default=50"`
}

// ChunkOut is chunk's output.
type ChunkOut struct {
	Chunks []string `json:"chunks" weft:"content"`
	Count  int      `json:"count"`
}

// Aggregate runs a read-only aggregation pipeline.
var Aggregate = Declare[AggregateIn, ListOut](&Spec{
	Name: "aggregate", Domain: "utility", Kind: KindActivity, NeedsCollection: true,
	Title:       "Aggregate (read-only)",
	Description: "Run a read-only MongoDB aggregation pipeline on a collection. Write stages ($out, $merge) are refused.",
	RawInput: map[string]string{"pipeline": `{"type":"array","maxItems":50,"items":{"type":"object","minProperties":1,"maxProperties":1,
	  "not":{"anyOf":[{"required":["$out"]},{"required":["$merge"]}]}}}`},
	Annotations: readOnlyClosed,
	Calls:       func(map[string]any) Calls { return Calls{DatabaseRead: 1} },
})

// AggregateIn is aggregate's input.
type AggregateIn struct {
	DB         string `json:"db,omitempty"`
	Collection string `json:"collection,omitempty"`
	Pipeline   []any  `json:"pipeline"`
	Limit      int    `json:"limit,omitempty" weft:"min=1,max=10000,default=100"`
}

// ListOut is the output of tools that return a list of documents.
type ListOut struct {
	Results []any `json:"results" weft:"content,itemType=object"`
	Count   int   `json:"count"`
}

// HTTP makes one bounded request.
var HTTP = Declare[HTTPIn, HTTPOut](&Spec{
	Name: "http", Domain: "utility", Kind: KindActivity,
	Title:       "HTTP request",
	Description: "A bounded request (GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS, in any case) with a timeout and a response size cap; the body is sent with POST, PUT and PATCH only, as in vai. Private, loopback and link-local addresses are refused unless allowed in config.",
	RawInput: map[string]string{"timeout": `{"type":["string","number"],"pattern":"^[0-9]+(ms|s|m)$","minimum":1,"default":"30s","description":"30s, 500ms; or a number of milliseconds"}`,
		"body": `{}`},
	Annotations: Annotations{OpenWorld: true},
	Calls:       func(map[string]any) Calls { return Calls{HTTP: 1} },
})

// HTTPIn is http's input.
type HTTPIn struct {
	URL      string            `json:"url" pattern:"^https?://" weft:"maxLength=4096"`
	Method   string            `json:"method,omitempty" pattern:"^([Gg][Ee][Tt]|[Pp][Oo][Ss][Tt]|[Pp][Uu][Tt]|[Pp][Aa][Tt][Cc][Hh]|[Dd][Ee][Ll][Ee][Tt][Ee]|[Hh][Ee][Aa][Dd]|[Oo][Pp][Tt][Ii][Oo][Nn][Ss])$" jsonschema:"GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS, in any case" weft:"default=GET"`
	Headers  map[string]string `json:"headers,omitempty"`
	Body     any               `json:"body,omitempty" weft:"content"`
	Timeout  any               `json:"timeout,omitempty"`
	MaxBytes int64             `json:"maxBytes,omitempty" weft:"min=1,max=10485760,default=1048576"`
	// Extract and ResponseType are vai's: they decide output.body as vai's http does.
	Extract      string `json:"extract,omitempty" jsonschema:"text: strip the HTML tags (script and style dropped, block elements a line break) from a body that is not parsed as JSON, as vai does; any other value does nothing"`
	ResponseType string `json:"responseType,omitempty" jsonschema:"json (the default, text when extract is text): body is the response parsed as JSON, or its text when it does not parse; anything else: body is the text"`
}

// HTTPOut is http's output. body is what vai's http gives: the response parsed as JSON when
// responseType is json (the default) and it parses, else its text (tags stripped with extract
// "text"). text is the body's text when the Content-Type does not say JSON (weft's own field).
type HTTPOut struct {
	Status     int               `json:"status"`
	StatusText string            `json:"statusText"`
	Headers    map[string]string `json:"headers" jsonschema:"every response header, by its lower-case name (repeated ones joined with a comma)"`
	Truncated  bool              `json:"truncated"`
	Body       any               `json:"body,omitempty" weft:"content"`
	Text       *string           `json:"text,omitempty" weft:"content"`
	DurationMs int64             `json:"durationMs"`
}
