package templates

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed workflows/*.json corpus/*.json
var files embed.FS

// CorpusDoc is one document of the sample corpus.
type CorpusDoc struct {
	Source string `json:"source"`
	Text   string `json:"text"`
}

// Corpus returns the sample corpus `weft dev --demo` ingests: collection name -> documents.
// It was written for weft (a fictional API and its architecture) and comes with labelled
// queries (Queries) for retrieval measurements.
func Corpus() map[string][]CorpusDoc {
	var out map[string][]CorpusDoc
	mustJSON("corpus/corpus.json", &out)
	return out
}

// CorpusInputs is a collection of the sample corpus as batch-ingest's docs input.
func CorpusInputs(collection string) []any {
	docs := Corpus()[collection]
	out := make([]any, len(docs))
	for i, d := range docs {
		out[i] = map[string]any{"text": d.Text, "source": d.Source}
	}
	return out
}

// LabelledQuery is a query and the source of the document that answers it.
type LabelledQuery struct {
	Query  string `json:"query"`
	Source string `json:"source"`
}

// Queries returns the labelled retrieval queries over Corpus.
func Queries() []LabelledQuery {
	var out []LabelledQuery
	mustJSON("corpus/queries.json", &out)
	return out
}

func mustJSON(name string, v any) {
	data, err := files.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time
	}
	if err := json.Unmarshal(data, v); err != nil {
		panic(fmt.Sprintf("%s: %v", name, err))
	}
}

// Template is one built-in workflow.
type Template struct {
	Name        string
	Description string
	Data        []byte
}

// All returns the built-in templates sorted by name.
func All() []Template {
	entries, err := fs.ReadDir(files, "workflows")
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []Template
	for _, e := range entries {
		data, err := files.ReadFile("workflows/" + e.Name())
		if err != nil {
			panic(err)
		}
		var head struct{ Description string }
		_ = json.Unmarshal(data, &head)
		out = append(out, Template{Name: strings.TrimSuffix(e.Name(), ".json"), Description: head.Description, Data: data})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Get returns the named template.
func Get(name string) (Template, error) {
	var names []string
	for _, t := range All() {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return Template{}, fmt.Errorf("no built-in template %q (built-ins: %s)", name, strings.Join(names, ", "))
}
