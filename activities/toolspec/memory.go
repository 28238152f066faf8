package toolspec

// ScopePattern is what a memory scope may look like: an agent, a user, or both ("support:ana").
const ScopePattern = `^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$`

func init() {
	register(&Spec{
		Name: "remember", Domain: "memory", Kind: KindActivity,
		Title:       "Remember a fact",
		Description: "Store a fact in long-term memory under a scope (an agent, a user: \"support:ana\"). The same text in the same scope is stored once. Remember only what the user asks you to remember.",
		Input: `{"type":"object","required":["scope","text"],"additionalProperties":false,"properties":{
		  "scope":{"type":"string","pattern":"` + ScopePattern + `","description":"letters, digits and . _ : @ / - (up to 200), e.g. support:ana"},
		  "text":{"type":"string","minLength":1,"maxLength":20000},
		  "db":{"type":"string"},
		  "metadata":{"type":"object"}}}`,
		Output:      `{"type":"object","properties":{"id":{"type":"string"},"scope":{"type":"string"},"stored":{"type":"boolean"},"duplicate":{"type":"boolean"}}}`,
		Annotations: Annotations{Idempotent: true},
		Calls:       func(map[string]any) Calls { return Calls{Embed: 1, DatabaseWrite: 1} },
	})
	register(&Spec{
		Name: "recall", Domain: "memory", Kind: KindActivity,
		Title:       "Recall facts",
		Description: "Search long-term memory within a scope by meaning; the best matches first, the newest first among equals.",
		Input: `{"type":"object","required":["scope","query"],"additionalProperties":false,"properties":{
		  "scope":{"type":"string","pattern":"` + ScopePattern + `"},
		  "query":{"type":"string","minLength":1,"maxLength":5000},
		  "limit":{"type":"integer","minimum":1,"maximum":50,"default":5},
		  "db":{"type":"string"}}}`,
		Output:      `{"type":"object","properties":{"results":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"text":{"type":"string"},"score":{"type":"number"},"rememberedAt":{"type":"string"}}}}}}`,
		Annotations: readOnlyClosed,
		Calls:       func(map[string]any) Calls { return Calls{Embed: 1, VectorSearch: 1} },
	})
}
