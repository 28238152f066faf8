package dsl_test

import (
	"fmt"
	"testing"

	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
)

// bigWorkflow builds a 200-step file: fan-outs of searches merged and filtered in groups.
func bigWorkflow(b *testing.B) []byte {
	wb := dsl.New("big").Input("q", "string", dsl.Required())
	for i := 0; i < 50; i++ {
		a, c := fmt.Sprintf("search_%d", i), fmt.Sprintf("query_%d", i)
		wb.Step(a, "search", dsl.In{"query": "{{ inputs.q }}", "limit": 5, "collection": "c"})
		wb.Step(c, "query", dsl.In{"query": "{{ inputs.q }}", "limit": 5})
		m := fmt.Sprintf("merge_%d", i)
		arrays := []any{"{{ " + a + ".output.results }}", "{{ " + c + ".output.results }}"}
		if i > 0 {
			arrays = append(arrays, fmt.Sprintf("{{ filter_%d.output.results }}", i-1))
		}
		wb.Step(m, "merge", dsl.In{"arrays": arrays, "dedup": true, "dedup_field": "source"})
		wb.Step(fmt.Sprintf("filter_%d", i), "filter", dsl.In{"array": "{{ " + m + ".output }}", "condition": "item.score > 0.5 && item.source != ''"},
			dsl.When("{{ "+m+".output.resultCount > 0 }}"))
	}
	data, err := wb.ToJSON()
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkValidate parses, validates and compiles a 200-step workflow file.
func BenchmarkValidate(b *testing.B) {
	data := bigWorkflow(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		w, err := dsl.Load("big.json", data)
		if err != nil {
			b.Fatal(err)
		}
		if len(w.Steps) != 200 {
			b.Fatal(len(w.Steps))
		}
	}
}

// BenchmarkValidateCold is BenchmarkValidate with the expression memo emptied before each run:
// a first validation in a fresh process (the CLI), where every expression is compiled.
func BenchmarkValidateCold(b *testing.B) {
	data := bigWorkflow(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		expr.ClearCache()
		if _, err := dsl.Load("big.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseSource is the JSON decoding and position scan of the same 200-step file.
func BenchmarkParseSource(b *testing.B) {
	data := bigWorkflow(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dsl.ParseSource("big.json", data); err != nil {
			b.Fatal(err)
		}
	}
}
