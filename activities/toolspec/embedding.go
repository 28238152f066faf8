package toolspec

// Embed returns a text's embedding vector.
var Embed = Declare[EmbedIn, EmbedOut](&Spec{
	MCP:  true,
	Name: "embed", Domain: "embedding", Kind: KindActivity,
	Title:       "Embed text",
	Description: "Return the embedding vector of a text, for custom similarity logic or storage elsewhere.",
	Annotations: readOnlyOpen,
	Calls:       func(map[string]any) Calls { return Calls{Embed: 1} },
	// Voyage takes up to 1,000 inputs and 120k tokens a request, OpenAI 2,048 and 300k: 128
	// items and 100k tokens fit both. Larger vectors than a result carries go to the store.
	Batch: &Batch{MaxItems: 128, MaxTokens: 100_000, Tokens: func(in map[string]any) int {
		s, _ := in["text"].(string)
		return len(s)/3 + 1 // ~3-4 bytes a token: overestimate rather than exceed the limit
	}},
})

// EmbedIn is embed's input.
type EmbedIn struct {
	Text       string `json:"text" weft:"content,minLength=1,maxLength=32000"`
	Model      string `json:"model,omitempty"`
	InputType  string `json:"inputType,omitempty" weft:"enum=document|query,default=query"`
	Dimensions int    `json:"dimensions,omitempty" weft:"enum=256|512|1024|2048"`
}

// EmbedOut is embed's output.
type EmbedOut struct {
	Text       string    `json:"text"`
	Model      string    `json:"model"`
	Vector     []float32 `json:"vector" weft:"content"`
	Dimensions int       `json:"dimensions"`
	InputType  string    `json:"inputType"`
}

// Similarity compares two texts by meaning.
var Similarity = Declare[SimilarityIn, SimilarityOut](&Spec{
	MCP:  true,
	Name: "similarity", Domain: "embedding", Kind: KindActivity,
	Title:       "Compare two texts",
	Description: "Cosine similarity of two texts' embeddings (one batched embedding call).",
	Annotations: readOnlyOpen,
	Calls:       func(map[string]any) Calls { return Calls{Embed: 1} },
	// Two texts an item: 64 items are 128 inputs a request, as embed's 128.
	Batch: &Batch{MaxItems: 64, MaxTokens: 100_000, Tokens: func(in map[string]any) int {
		a, _ := in["text1"].(string)
		b, _ := in["text2"].(string)
		return (len(a)+len(b))/3 + 1
	}},
})

// SimilarityIn is similarity's input.
type SimilarityIn struct {
	Text1 string `json:"text1" weft:"content,minLength=1,maxLength=32000"`
	Text2 string `json:"text2" weft:"content,minLength=1,maxLength=32000"`
	Model string `json:"model,omitempty"`
}

// SimilarityOut is similarity's output.
type SimilarityOut struct {
	Text1      string  `json:"text1"`
	Text2      string  `json:"text2"`
	Similarity float64 `json:"similarity" weft:"content"`
	Model      string  `json:"model"`
}
