package dsl

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// CoerceValue checks v against a declared input type, converting what can be converted without
// losing meaning (an integral float for a number stays a float; a JSON string is not an array).
func CoerceValue(typ string, v any) (any, error) {
	switch typ {
	case "string":
		if s, ok := v.(string); ok {
			return s, nil
		}
	case "number":
		switch x := v.(type) {
		case float64:
			return x, nil
		case int:
			return float64(x), nil
		case json.Number:
			return x.Float64()
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case "array":
		if a, ok := v.([]any); ok {
			return a, nil
		}
	case "object":
		if m, ok := v.(map[string]any); ok {
			return m, nil
		}
	default:
		return nil, fmt.Errorf("unknown input type %q", typ)
	}
	return nil, fmt.Errorf("expected %s, got %s", typ, jsonType(v))
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, int, json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// ParseInputFlag converts one --input value written on a command line to the declared type.
func ParseInputFlag(typ, raw string) (any, error) {
	switch typ {
	case "string":
		return raw, nil
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%q is not a number", raw)
		}
		return f, nil
	case "boolean":
		switch strings.ToLower(strings.TrimSpace(raw)) {
		case "true", "yes", "1", "on":
			return true, nil
		case "false", "no", "0", "off":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a boolean (use true or false)", raw)
	case "array", "object":
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, fmt.Errorf("%q is not JSON: %v", raw, err)
		}
		return CoerceValue(typ, v)
	}
	return nil, fmt.Errorf("unknown input type %q", typ)
}

// InputError lists every problem with the inputs given to a run.
type InputError struct{ Problems []string }

func (e *InputError) Error() string {
	return "invalid inputs:\n  " + strings.Join(e.Problems, "\n  ")
}

// ResolveInputs combines --input style raw strings and already-typed values with the declared
// defaults. Unknown names, wrong types and missing required inputs are all reported at once.
func ResolveInputs(def *Definition, raw map[string]string, typed map[string]any) (map[string]any, error) {
	return resolveInputs(def, raw, typed, false)
}

// PlanInputs is ResolveInputs for showing a plan before a run: a required input that is not
// given becomes the placeholder "<name>" instead of an error, so a person can see what a
// workflow does before deciding to run it.
func PlanInputs(def *Definition, raw map[string]string, typed map[string]any) (map[string]any, error) {
	return resolveInputs(def, raw, typed, true)
}

func resolveInputs(def *Definition, raw map[string]string, typed map[string]any, placeholders bool) (map[string]any, error) {
	out := map[string]any{}
	var problems []string
	bad := map[string]bool{} // given, but wrong: not also "missing"
	for _, name := range sortedKeys(raw) {
		in, ok := def.Inputs[name]
		if !ok {
			problems = append(problems, unknownInput(def, name))
			continue
		}
		v, err := ParseInputFlag(in.Type, raw[name])
		if err != nil {
			problems = append(problems, fmt.Sprintf("input %q: %v", name, err))
			bad[name] = true
			continue
		}
		out[name] = v
	}
	for _, name := range sortedKeys(typed) {
		if _, given := raw[name]; given {
			continue // --input flags win over --input-file
		}
		in, ok := def.Inputs[name]
		if !ok {
			problems = append(problems, unknownInput(def, name))
			continue
		}
		v, err := CoerceValue(in.Type, typed[name])
		if err != nil {
			problems = append(problems, fmt.Sprintf("input %q: %v", name, err))
			bad[name] = true
			continue
		}
		out[name] = v
	}
	for _, name := range sortedKeys(def.Inputs) {
		if _, ok := out[name]; ok || bad[name] {
			continue
		}
		in := def.Inputs[name]
		switch {
		case in.Default != nil:
			out[name] = in.Default
		case in.Required && placeholders:
			out[name] = "<" + name + ">"
		case in.Required:
			desc := ""
			if in.Description != "" {
				desc = " (" + in.Description + ")"
			}
			// every surface reads this: the CLI's flag and the others' inputs object, not one of them
			problems = append(problems, fmt.Sprintf("missing required input %q%s: give it a %s value (weft run: --input %s=VALUE; MCP, the console and Go: inputs {%q: ...})", name, desc, in.Type, name, name))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, &InputError{Problems: problems}
	}
	return out, nil
}

func unknownInput(def *Definition, name string) string {
	names := sortedKeys(def.Inputs)
	msg := fmt.Sprintf("unknown input %q", name)
	if h := didYouMean(name, names); h != "" {
		return msg + " (" + h + ")"
	}
	if len(names) == 0 {
		return msg + " (this workflow declares no inputs)"
	}
	return msg + " (declared inputs: " + strings.Join(names, ", ") + ")"
}

// ParseAssignments splits k=v flags into a map; a flag without = is an error.
func ParseAssignments(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--input %q: write name=value", f)
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}
