package toolspec

// Dedupe drops results whose text is the same as a better-ranked one's.
var Dedupe = Declare[DedupeIn, DedupeOut](&Spec{
	Name: "dedupe", Domain: "control", Kind: KindInline,
	Title: "Drop duplicate results",
	Description: "Keep the first of results whose text is the same once case, punctuation and spacing are ignored " +
		"(the same passage ingested twice, under two sources or from two collections). Results stay in their order, so the best-ranked copy is kept.",
	Annotations: readOnlyClosed,
})

// DedupeIn is dedupe's input.
type DedupeIn struct {
	Results any    `json:"results" jsonschema:"an array, or a step output holding results" weft:"content,type=array|object|null"`
	By      string `json:"by,omitempty" jsonschema:"the field whose text decides (a dotted path; a string item is its own text)" weft:"minLength=1,default=content"`
}

// DedupeOut is dedupe's output.
type DedupeOut struct {
	Results     []any `json:"results" weft:"content"`
	ResultCount int   `json:"resultCount"`
	Removed     int   `json:"removed" jsonschema:"how many duplicates were dropped"`
}
