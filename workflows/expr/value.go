package expr

import (
	"encoding/json"
	"math"
	"strconv"
)

// Get returns v[key] with JavaScript-like leniency: a map field, an array index (negative or out of
// range gives nil), "length" of an array or string, or nil for anything else.
func Get(v any, key any) any {
	switch c := v.(type) {
	case map[string]any:
		k, ok := key.(string)
		if !ok {
			k = keyString(key)
		}
		return c[k]
	case []any:
		if i, ok := toIndex(key); ok {
			if i >= 0 && i < len(c) {
				return c[i]
			}
			return nil
		}
		if key == "length" {
			return len(c)
		}
	case string:
		if key == "length" {
			return len([]rune(c))
		}
	}
	return nil
}

func keyString(k any) string {
	switch x := k.(type) {
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

func toIndex(k any) (int, bool) {
	switch x := k.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return int(x), true
		}
	}
	return 0, false
}

// Truthy is JavaScript truthiness: null, false, 0, NaN and "" are false; everything else,
// including empty arrays and objects, is true.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0 && !math.IsNaN(x)
	case float32:
		return x != 0 && !math.IsNaN(float64(x))
	case int:
		return x != 0
	case int64:
		return x != 0
	case int32:
		return x != 0
	case uint:
		return x != 0
	case uint64:
		return x != 0
	}
	return true
}

// toFloat converts a number to float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// Text renders a value the way mixed templates embed it: strings as they are, null as "null",
// everything else as compact JSON with sorted keys.
func Text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	if f, ok := toFloat(v); ok {
		if f == math.Trunc(f) && math.Abs(f) < 1e21 {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}
