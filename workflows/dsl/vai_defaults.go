package dsl

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/weftworks/weft/activities/toolspec"
)

// vaiDefaults are the inputs whose default differs between vai's tool and weft's of the same
// name: in vai's dialect a step that does not set one gets vai's (when it is compiled, so the
// plan and the run show it). weft's own files keep weft's defaults.
//   - query limit: vai's executeQuery reads `inputs.limit || 10`; weft's default is 5.
//   - code_search rerank: vai's handleCodeSearch reranks unless `rerank` is false; weft's
//     default is false.
//   - code_index maxFileBytes (vai's maxFileSize): 100000 bytes in vai, 1 MiB in weft.
//   - http maxBytes: vai keeps 5 MB of a response, weft 1 MiB.
var vaiDefaults = map[*toolspec.Spec]map[string]any{
	toolspec.Query.Spec:      {"limit": float64(10)},
	toolspec.CodeSearch.Spec: {"rerank": true},
	// vai's handleCodeIndex skips files over `input.maxFileSize || 100000` bytes; weft's default
	// is 1 MiB.
	toolspec.CodeIndex.Spec: {"maxFileBytes": float64(100000)},
	// vai's executeHttp keeps the first 5 MB of a response; weft's http the first maxBytes, 1 MiB
	// unless set.
	toolspec.HTTP.Spec: {"maxBytes": float64(5 * 1024 * 1024)},
}

// vaiUncapped are the inputs vai's tool sets no maximum for and weft's does. In vai's dialect a
// literal value above weft's maximum is clamped to it, with a warning naming the cap, rather
// than refused: the run gives at most weft's maximum of results where vai would give more. weft
// keeps its cap (it bounds the candidates the reranker is sent, 4 times the limit, and weft's
// own files share the declaration); vai's query cannot return more than 200 either (its
// $vectorSearch asks for min(limit*10, 200) candidates).
var vaiUncapped = map[*toolspec.Spec][]string{
	toolspec.Query.Spec:      {"limit"},
	toolspec.CodeSearch.Spec: {"limit"},
	toolspec.CodeQuery.Spec:  {"limit"},
}

// vaiInputs applies vaiDefaults and vaiUncapped to a step's inputs (at ptr in the file) in vai's
// dialect (not in a file read as vai's only for vaiFields, whose other inputs are weft's).
func (c *compiler) vaiInputs(spec *toolspec.Spec, inputs map[string]any, ptr, tool string) map[string]any {
	if c.dialect != DialectVai || c.byFields {
		return inputs
	}
	defaults, capped := vaiDefaults[spec], vaiUncapped[spec]
	if len(defaults) == 0 && len(capped) == 0 {
		return inputs
	}
	if inputs == nil {
		inputs = map[string]any{}
	}
	for _, k := range sortedKeys(defaults) {
		if v, set := inputs[k]; !set || v == nil {
			inputs[k] = defaults[k]
		}
	}
	for _, k := range capped {
		n, ok := literalNumber(inputs[k])
		if !ok {
			continue
		}
		maxV, ok := inputMaximum(spec, k)
		if !ok || n <= maxV {
			continue
		}
		inputs[k] = maxV
		if !c.accepted {
			c.warnAt(ptr+"/"+escapePointer(k),
				fmt.Sprintf("%s %s is above %s's maximum in weft, %s: it is clamped to %s (vai sets no maximum)", k, fmtNumber(n), tool, fmtNumber(maxV), fmtNumber(maxV)),
				fmt.Sprintf("write a %s of at most %s", k, fmtNumber(maxV)))
		}
	}
	return inputs
}

// literalNumber is v as a number when the file writes one there (not a template).
func literalNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// inputMaximum is the maximum spec's input schema sets for field k.
func inputMaximum(spec *toolspec.Spec, k string) (float64, bool) {
	sch, err := spec.Schema()
	if err != nil || sch == nil {
		return 0, false
	}
	p, ok := sch.Properties[k]
	if !ok || p == nil || p.Maximum == nil {
		return 0, false
	}
	f, _ := p.Maximum.Float64()
	return f, true
}

func fmtNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
