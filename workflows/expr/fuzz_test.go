package expr

import "testing"

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"{{ inputs.query }}", "a {{ b.output.c[0] }} d", "{{ x > 1 && !y || z ? 'a' : \"b\" }}", "}}", "{{", "{{ '}}' }}", "{{ 1..100 }}", "{{ len(inputs.tags) }}"} {
		f.Add(s)
	}
	e := env(f)
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseTemplate(s)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		_, _ = tm.Render(e) // must not panic
	})
}

func FuzzExpression(f *testing.F) {
	for _, s := range []string{"item.score > 0.8", "!a || b.c < 0.85", "a ? b : c", "x === 'y'", "len(a) + 1", "a[0].b.length"} {
		f.Add(s)
	}
	e := env(f)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Compile(s)
		if err != nil {
			return
		}
		_, _ = p.Eval(e)
		_, _ = p.EvalBool(e)
	})
}
