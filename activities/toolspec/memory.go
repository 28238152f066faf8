package toolspec

// ScopePattern is what a memory scope may look like: an agent, a user, or both ("support:ana").
const ScopePattern = `^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$`

// Remember stores a fact in long-term memory.
var Remember = Declare[RememberIn, RememberOut](&Spec{
	Name: "remember", Domain: "memory", Kind: KindActivity,
	Title:       "Remember a fact",
	Description: "Store a fact in long-term memory under a scope (an agent, a user: \"support:ana\"). The same text in the same scope is stored once. Remember only what the user asks you to remember.",
	Annotations: Annotations{Idempotent: true},
	Calls:       func(map[string]any) Calls { return Calls{Embed: 1, DatabaseWrite: 1} },
})

// RememberIn is remember's input.
type RememberIn struct {
	Scope    string         `json:"scope" pattern:"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$" jsonschema:"letters, digits and . _ : @ / - (up to 200), e.g. support:ana"`
	Text     string         `json:"text" weft:"content,minLength=1,maxLength=20000"`
	DB       string         `json:"db,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// RememberOut is remember's output.
type RememberOut struct {
	ID        string `json:"id"`
	Scope     string `json:"scope"`
	Stored    bool   `json:"stored"`
	Duplicate bool   `json:"duplicate"`
}

// Recall searches long-term memory.
var Recall = Declare[RecallIn, RecallOut](&Spec{
	Name: "recall", Domain: "memory", Kind: KindActivity,
	Title:       "Recall facts",
	Description: "Search long-term memory within a scope by meaning; the best matches first, the newest first among equals.",
	Annotations: readOnlyClosed,
	Calls:       func(map[string]any) Calls { return Calls{Embed: 1, VectorSearch: 1} },
})

// RecallIn is recall's input.
type RecallIn struct {
	Scope string `json:"scope" pattern:"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$"`
	Query string `json:"query" weft:"content,minLength=1,maxLength=5000"`
	Limit int    `json:"limit,omitempty" weft:"min=1,max=50,default=5"`
	DB    string `json:"db,omitempty"`
}

// RecallOut is recall's output.
type RecallOut struct {
	Scope   string   `json:"scope"`
	Results []Memory `json:"results" weft:"content"`
}

// Memory is one remembered fact.
type Memory struct {
	ID           string  `json:"id"`
	Text         string  `json:"text"`
	Score        float64 `json:"score"`
	RememberedAt string  `json:"rememberedAt"`
}
