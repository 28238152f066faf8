package mongostore

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// Matches applies a MongoDB-style filter to a document the way the exact search path needs:
// dotted paths, equality, and $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, plus $and / $or.
// ValidateFilter reports anything else.
func Matches(filter map[string]any, doc map[string]any) bool {
	keys := make([]string, 0, len(filter))
	for k := range filter {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cond := filter[k]
		switch k {
		case "$and", "$or":
			subs, _ := cond.([]any)
			matched := false
			for _, s := range subs {
				m, _ := s.(map[string]any)
				ok := Matches(m, doc)
				if k == "$and" && !ok {
					return false
				}
				matched = matched || ok
			}
			if k == "$or" && !matched {
				return false
			}
			continue
		}
		if !matchValue(lookup(doc, k), cond) {
			return false
		}
	}
	return true
}

func lookup(doc map[string]any, path string) any {
	var v any = doc
	for _, p := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func matchValue(v, cond any) bool {
	ops, ok := cond.(map[string]any)
	if !ok || !hasOperator(ops) {
		return equal(v, cond)
	}
	for op, arg := range ops {
		switch op {
		case "$eq":
			if !equal(v, arg) {
				return false
			}
		case "$ne":
			if equal(v, arg) {
				return false
			}
		case "$in", "$nin":
			list, _ := arg.([]any)
			found := false
			for _, x := range list {
				found = found || equal(v, x)
			}
			if found != (op == "$in") {
				return false
			}
		case "$gt", "$gte", "$lt", "$lte":
			c, ok := compare(v, arg)
			if !ok {
				return false
			}
			if (op == "$gt" && c <= 0) || (op == "$gte" && c < 0) || (op == "$lt" && c >= 0) || (op == "$lte" && c > 0) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func hasOperator(m map[string]any) bool {
	for k := range m {
		if strings.HasPrefix(k, "$") {
			return true
		}
	}
	return false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func equal(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		return ok && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func compare(a, b any) (int, bool) {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		if !ok {
			return 0, false
		}
		switch {
		case fa < fb:
			return -1, true
		case fa > fb:
			return 1, true
		}
		return 0, true
	}
	sa, ok1 := a.(string)
	sb, ok2 := b.(string)
	if !ok1 || !ok2 {
		return 0, false
	}
	return strings.Compare(sa, sb), true
}

// ValidateFilter rejects operators the exact path does not implement, with the path of the
// offending key.
func ValidateFilter(filter map[string]any) error {
	for k, v := range filter {
		if k == "$and" || k == "$or" {
			subs, ok := v.([]any)
			if !ok {
				return fmt.Errorf("filter.%s must be an array of filters", k)
			}
			for _, s := range subs {
				m, ok := s.(map[string]any)
				if !ok {
					return fmt.Errorf("filter.%s holds a non-object", k)
				}
				if err := ValidateFilter(m); err != nil {
					return err
				}
			}
			continue
		}
		if strings.HasPrefix(k, "$") {
			return fmt.Errorf("filter operator %s is not supported at the top level (use field conditions, $and, $or)", k)
		}
		if ops, ok := v.(map[string]any); ok && hasOperator(ops) {
			for op := range ops {
				switch op {
				case "$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte":
				default:
					return fmt.Errorf("filter.%s: operator %s is not supported (use $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte)", k, op)
				}
			}
		}
	}
	return nil
}
