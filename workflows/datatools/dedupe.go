package datatools

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
)

func init() { tools[toolspec.Dedupe.Spec] = dedupe }

// dedupe keeps the first item of each text; items without the field are kept as they are.
func dedupe(cs *dsl.CompiledStep, inputs, _ map[string]any) (any, error) {
	in, err := toolspec.Dedupe.Decode(inputs)
	if err != nil {
		return nil, &InputError{Step: cs.ID, Msg: err.Error()}
	}
	items, ok := Items(in.Results)
	if !ok {
		return nil, &InputError{Step: cs.ID, Msg: fmt.Sprintf("inputs.results is %s, not an array or a step output with results", describe(in.Results))}
	}
	out := toolspec.DedupeOut{Results: []any{}}
	seen := map[string]bool{}
	for _, it := range items {
		v := it
		if _, isText := it.(string); !isText {
			v = expr.Get(it, in.By)
		}
		if v == nil {
			out.Results = append(out.Results, it)
			continue
		}
		key := sameText(expr.Text(v))
		if seen[key] {
			out.Removed++
			continue
		}
		seen[key] = true
		out.Results = append(out.Results, it)
	}
	out.ResultCount = len(out.Results)
	return map[string]any{"results": out.Results, "resultCount": out.ResultCount, "removed": out.Removed}, nil
}

// sameText is what two texts share when they differ only in case, punctuation and spacing.
func sameText(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}
