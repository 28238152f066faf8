package toolspec

func init() {
	register(&Spec{
		Name: "embed", Domain: "embedding", Kind: KindActivity,
		Title:       "Embed text",
		Description: "Return the embedding vector of a text, for custom similarity logic or storage elsewhere.",
		Input: `{"type":"object","required":["text"],"additionalProperties":false,"properties":{
		  "text":{"type":"string","minLength":1,"maxLength":32000},
		  "model":{"type":"string"},
		  "inputType":{"type":"string","enum":["document","query"],"default":"query"},
		  "dimensions":{"type":"integer","enum":[256,512,1024,2048]}}}`,
		Output: `{"type":"object","properties":{"text":{"type":"string"},"model":{"type":"string"},
		  "vector":{"type":"array","items":{"type":"number"}},"dimensions":{"type":"integer"},"inputType":{"type":"string"}}}`,
		Annotations: readOnlyOpen,
		Calls:       func(map[string]any) Calls { return Calls{Embed: 1} },
	})
	register(&Spec{
		Name: "similarity", Domain: "embedding", Kind: KindActivity,
		Title:       "Compare two texts",
		Description: "Cosine similarity of two texts' embeddings (one batched embedding call).",
		Input: `{"type":"object","required":["text1","text2"],"additionalProperties":false,"properties":{
		  "text1":{"type":"string","minLength":1,"maxLength":32000},
		  "text2":{"type":"string","minLength":1,"maxLength":32000},
		  "model":{"type":"string"}}}`,
		Output: `{"type":"object","properties":{"text1":{"type":"string"},"text2":{"type":"string"},
		  "similarity":{"type":"number"},"model":{"type":"string"}}}`,
		Annotations: readOnlyOpen,
		Calls:       func(map[string]any) Calls { return Calls{Embed: 1} },
	})
}
