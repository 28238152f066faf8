package expr

import (
	"encoding/json"
	"testing"
)

// BenchmarkResolve resolves a typical step's inputs: a query, a collection, literals and a
// results reference.
func BenchmarkResolve(b *testing.B) {
	var in any
	_ = json.Unmarshal([]byte(`{"query": "{{ inputs.query }}", "collection": "api_docs", "limit": 10, "rerank": false,
	  "documents": "{{ search.output.results }}", "note": "about {{ inputs.query }} in {{ defaults.db }}"}`), &in)
	v, errs := CompileValue(in)
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	e := env(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Resolve(e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCondition evaluates a compiled condition with fallback and comparison.
func BenchmarkCondition(b *testing.B) {
	p, err := Compile("!sim.output || sim.output.similarity < 0.85 && search.output.results.length > 0")
	if err != nil {
		b.Fatal(err)
	}
	e := env(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.EvalBool(e); err != nil {
			b.Fatal(err)
		}
	}
}
