package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// ExportWorkflow turns the tool calls of a chat's last turn (every turn with all) into a workflow
// file that makes the same calls: the question becomes an input (defaulting to the question
// asked), and an argument that repeats the question or a value an earlier call returned becomes a
// reference to it, so the file shows how the calls depend on each other. Calls that failed or
// were refused are left out. The definition is validated before it is returned.
func ExportWorkflow(s *runwire.ChatSession, all bool, name string) (*dsl.Definition, error) {
	if len(s.Turns) == 0 {
		return nil, errors.New("nothing to export yet: ask something first, then /export-workflow")
	}
	turns := s.Turns[len(s.Turns)-1:]
	if all {
		turns = s.Turns
	}
	if name == "" {
		name = "chat-export"
	}
	def := &dsl.Definition{Name: name, Version: "1.0.0", Inputs: map[string]dsl.Input{}}
	def.Description = "Replays the tool calls weft chat made for: " + shortQuestion(turns[0].Question)
	if len(turns) > 1 {
		def.Description = fmt.Sprintf("Replays the tool calls weft chat made in %d turns", len(turns))
	}
	if s.DB != "" || s.Collection != "" {
		def.Defaults = map[string]any{}
		if s.DB != "" {
			def.Defaults["db"] = s.DB
		}
		if s.Collection != "" {
			def.Defaults["collection"] = s.Collection
		}
	}
	type done struct {
		id     string
		result any
	}
	var prev []done
	used := map[string]int{}
	var skipped []string
	// known are values the calls were given rather than found: the session's db and collection
	// and every earlier argument. An earlier result that repeats one of them (a search's output
	// naming its db) did not produce it, so it is written as a literal, not a dependency.
	known := map[string]bool{}
	for _, v := range []string{s.DB, s.Collection} {
		if v != "" {
			known[v] = true
		}
	}
	approve := map[string]bool{}
	for _, a := range s.Approve {
		approve[a] = true
	}
	gates := map[string]bool{}
	for ti, t := range turns {
		input := "question"
		if len(turns) > 1 {
			input = fmt.Sprintf("question_%d", ti+1)
		}
		def.Inputs[input] = dsl.Input{Type: "string", Description: "The question asked in the chat", Default: t.Question}
		for _, raw := range t.ToolCalls {
			call, _ := raw.(map[string]any)
			tool, _ := call["tool"].(string)
			status, _ := call["status"].(string)
			if status != "" && status != runwire.StatusCompleted {
				skipped = append(skipped, fmt.Sprintf("%s (%s)", tool, status))
				continue
			}
			args, _ := call["arguments"].(map[string]any)
			refArgs := reference(args, t.Question, input, func(v string) string {
				if known[v] {
					return ""
				}
				for i := len(prev) - 1; i >= 0; i-- {
					if p := findPath(prev[i].result, v, "output"); p != "" {
						return prev[i].id + "." + p
					}
				}
				return ""
			}).(map[string]any)
			base := strings.ReplaceAll(strings.TrimPrefix(tool, toolspec.WorkflowToolPrefix), "-", "_")
			base = regexp.MustCompile(`[^a-z0-9_]`).ReplaceAllString(strings.ToLower(base), "_")
			if base == "" || base[0] < 'a' || base[0] > 'z' {
				base = "call_" + base
			}
			addKnown(known, args)
			used[base]++
			id := fmt.Sprintf("%s_%d", base, used[base])
			var dependsOn []string
			if _, decided := call["decision"]; decided || approve[tool] || approve["*"] {
				// the chat asked a person before this call: so does the file, and a reviewer's
				// edit is what the call gets
				gate := dsl.Step{ID: "approve_" + id, Tool: "review", Name: fmt.Sprintf("Allow %s? (turn %d)", tool, t.N),
					Inputs: map[string]any{"title": "Allow " + tool + " with these arguments?", "data": refArgs}}
				def.Steps = append(def.Steps, gate)
				gates[gate.ID] = true
				refArgs, dependsOn = reviewed(gate.ID, refArgs)
			}
			step := dsl.Step{ID: id, Tool: tool, Inputs: refArgs, Name: fmt.Sprintf("%s (turn %d)", tool, t.N), DependsOn: dependsOn}
			if wf, ok := strings.CutPrefix(tool, toolspec.WorkflowToolPrefix); ok {
				step.Tool = "workflow"
				step.Inputs = map[string]any{"workflow": wf, "inputs": refArgs}
			}
			def.Steps = append(def.Steps, step)
			var result any
			if s, ok := call["result"].(string); ok {
				_ = json.Unmarshal([]byte(s), &result)
			}
			prev = append(prev, done{id: id, result: result})
		}
	}
	if len(def.Steps) == 0 {
		msg := "the turn made no tool calls that completed, so there is nothing to replay"
		if len(skipped) > 0 {
			msg += " (left out: " + strings.Join(skipped, ", ") + ")"
		}
		return nil, errors.New(msg)
	}
	if len(skipped) > 0 {
		def.Description += "; left out: " + strings.Join(skipped, ", ")
	}
	out := map[string]any{}
	for _, st := range def.Steps {
		if !gates[st.ID] {
			out[st.ID] = "{{ " + st.ID + ".output }}"
		}
	}
	def.Output = out
	if _, err := dsl.FromDefinition(def); err != nil {
		return nil, fmt.Errorf("internal: the exported workflow does not validate: %w", err)
	}
	return def, nil
}

// reviewed makes a gated call's arguments the reviewed data ({{ GATE.output.data.KEY }}), so an
// edit reaches the call; arguments whose names are not identifiers stay literal after the gate.
func reviewed(gate string, args map[string]any) (map[string]any, []string) {
	if len(args) == 0 {
		return args, []string{gate}
	}
	out := make(map[string]any, len(args))
	for k := range args {
		if !identifier.MatchString(k) {
			return args, []string{gate}
		}
		out[k] = "{{ " + gate + ".output.data." + k + " }}"
	}
	return out, nil
}

// addKnown adds the string leaves of v to known.
func addKnown(known map[string]bool, v any) {
	switch x := v.(type) {
	case string:
		known[x] = true
	case map[string]any:
		for _, e := range x {
			addKnown(known, e)
		}
	case []any:
		for _, e := range x {
			addKnown(known, e)
		}
	}
}

func shortQuestion(q string) string {
	if r := []rune(q); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return q
}

// reference rewrites argument values: the question becomes {{ inputs.NAME }}, a value an
// earlier call returned becomes a reference to it.
func reference(v any, question, input string, find func(string) string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = reference(e, question, input, find)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = reference(e, question, input, find)
		}
		return out
	case string:
		if x == question {
			return "{{ inputs." + input + " }}"
		}
		if len(x) >= 4 {
			if p := find(x); p != "" {
				return "{{ " + p + " }}"
			}
		}
		if strings.Contains(x, "{{") || strings.Contains(x, "}}") {
			return strings.NewReplacer("{{", "{{ '{{' }}", "}}", "{{ '}}' }}").Replace(x)
		}
		return x
	}
	return v
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// findPath returns the template path of the first string leaf equal to want ("output.results[0].source").
func findPath(v any, want, path string) string {
	switch x := v.(type) {
	case string:
		if x == want {
			return path
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !identifier.MatchString(k) {
				continue
			}
			if p := findPath(x[k], want, path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range x {
			if p := findPath(e, want, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}
