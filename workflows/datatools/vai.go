package datatools

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
)

// vaiSemantics says whether cs is a merge or transform step of a file in vai's dialect, which
// computes what vai's executeMerge and executeTransform compute (dsl.VaiSemantics).
func vaiSemantics(cs *dsl.CompiledStep) bool {
	v, _ := cs.Lazy[dsl.VaiSemantics].(bool)
	return v
}

// vaiMergeKey is the key vai's merge dedups item by (a Set of item[field], or of the item itself
// when it is not an object): equal keys are equal JavaScript primitives. An object or array is
// a key equal to no other (distinct objects in a Set); ok is false then. A missing field is
// undefined, one key for all the items without it.
func vaiMergeKey(item any, field string) (key string, ok bool) {
	v := item
	switch x := item.(type) {
	case map[string]any:
		f, has := x[field]
		if !has {
			return "u", true
		}
		v = f
	case []any:
		// an array's own properties: its indexes and length
		if n, err := strconv.Atoi(field); err == nil && n >= 0 && n < len(x) && strconv.Itoa(n) == field {
			v = x[n]
		} else if field == "length" {
			v = float64(len(x))
		} else {
			return "u", true
		}
	}
	switch x := v.(type) {
	case nil:
		return "n", true
	case bool:
		return "b" + strconv.FormatBool(x), true
	case string:
		return "s" + x, true
	case float64:
		if x == 0 {
			x = 0 // -0 and +0 are one key (SameValueZero)
		}
		return "f" + strconv.FormatFloat(x, 'g', -1, 64), true
	case int:
		return "f" + strconv.FormatFloat(float64(x), 'g', -1, 64), true
	case int64:
		return "f" + strconv.FormatFloat(float64(x), 'g', -1, 64), true
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return vaiMergeKey(f, "")
		}
		return "s" + x.String(), true
	}
	return "", false
}

// vaiMerge is vai's executeMerge: arrays concatenated (an entry that is not an array skipped),
// duplicates by dedup_field dropped only when dedup and dedup_field are both set.
func vaiMerge(cs *dsl.CompiledStep, in map[string]any) (any, error) {
	arrays, ok := in["arrays"].([]any)
	if !ok {
		return nil, &InputError{Step: cs.ID, Msg: fmt.Sprintf("inputs.arrays must be a list of arrays, got %s", describe(in["arrays"]))}
	}
	field, _ := in["dedup_field"].(string)
	dedup := expr.Truthy(in["dedup"]) && field != ""
	var out []any
	seen := map[string]bool{}
	for _, a := range arrays {
		items, _ := a.([]any) // vai skips what is not an array (a step output object too)
		for _, it := range items {
			if dedup {
				if key, ok := vaiMergeKey(it, field); ok {
					if seen[key] {
						continue
					}
					seen[key] = true
				}
			}
			out = append(out, it)
		}
	}
	return list(out), nil
}

// vaiTransform is vai's executeTransform (a weft template, which vai does not have, still
// renders each item: the caller does that): with fields, each object item keeps those of its own
// keys (mapping is ignored); else with mapping, each new key is the item's value of the old key,
// or the mapping's value itself when the item has no such key; an item that is not an object is
// kept as it is.
func vaiTransform(items []any, set toolspec.TransformIn) []any {
	hasFields, hasMapping := set.Fields != nil, set.Mapping != nil
	if !hasFields && !hasMapping {
		return items
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		m, isObj := it.(map[string]any)
		if !isObj {
			out = append(out, it)
			continue
		}
		obj := map[string]any{}
		if hasFields {
			for _, k := range set.Fields {
				if v, has := m[k]; has {
					obj[k] = v
				}
			}
		} else {
			//workflowcheck:ignore the result does not depend on map order (each key written once)
			for newKey, oldKey := range set.Mapping {
				if v, has := m[oldKey]; has {
					obj[newKey] = v
				} else {
					obj[newKey] = oldKey
				}
			}
		}
		out = append(out, obj)
	}
	return out
}
