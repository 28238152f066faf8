package workflows_test

import (
	"fmt"
	"testing"
	"time"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

func controlChain(n int) string {
	b := dsl.New("chain")
	prev := "'start'"
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("s%d", i)
		b.Step(id, "template", dsl.In{"text": "{{ " + prev + " }}"})
		prev = id + ".output.text"
	}
	b.Output("{{ " + prev + " }}")
	data, _ := b.ToJSON()
	return string(data)
}

// BenchmarkControlSteps runs a chain of 1 and of 21 template steps in Temporal's test
// environment and reports the cost of one inline control step: (t21 - t1) / 20. The request
// carries the definition as text (as weft starts runs) or as a struct (as runs started before
// definition_json did), side by side.
func BenchmarkControlSteps(b *testing.B) {
	for _, form := range []struct {
		name string
		req  func(t *testing.T, def string, in map[string]any) *weftv1.RunRequest
	}{{"request=text", request}, {"request=struct", legacyRequest}} {
		b.Run(form.name, func(b *testing.B) {
			one, many := controlChain(1), controlChain(21)
			t := &testing.T{}
			var t1, t21 time.Duration
			for b.Loop() {
				for _, c := range []struct {
					def string
					d   *time.Duration
				}{{one, &t1}, {many, &t21}} {
					h := newHarness(t)
					req := form.req(t, c.def, nil)
					start := time.Now()
					h.env.ExecuteWorkflow("weft", req)
					*c.d += time.Since(start)
					if err := h.env.GetWorkflowError(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64((t21-t1).Microseconds())/float64(20*b.N), "µs/control-step")
		})
	}
}
