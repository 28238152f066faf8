package dsl

import "strconv"

// definitionFrom builds the typed Definition from the decoded JSON tree, so a file is decoded
// once. The schema has already reported wrong types; here a value of the wrong type is left at
// its zero value, as encoding/json does, and the semantic checks skip what the schema flagged.
func definitionFrom(root map[string]any) *Definition {
	d := &Definition{
		Schema:      str(root, "$schema"),
		Name:        str(root, "name"),
		Description: str(root, "description"),
		Version:     str(root, "version"),
		Output:      root["output"],
	}
	d.Defaults, _ = root["defaults"].(map[string]any)
	d.Branding, _ = root["branding"].(map[string]any)
	d.Formatters, _ = root["formatters"].(map[string]any)
	if sch, ok := root["schedule"].(map[string]any); ok {
		d.Schedule = &Schedule{Cron: str(sch, "cron"), Every: duration(sch, "every"), Overlap: str(sch, "overlap")}
		d.Schedule.Inputs, _ = sch["inputs"].(map[string]any)
	}
	d.Notify = notifyFrom(root["notify"])
	d.Budget = budgetFrom(root["budget"])
	if servers, ok := root["mcpServers"].(map[string]any); ok {
		d.MCPServers = map[string]MCPServer{}
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for name, v := range servers {
			m, _ := v.(map[string]any)
			s := MCPServer{Command: str(m, "command"), URL: str(m, "url"), KeyEnv: str(m, "keyEnv"), Trust: boolean(m, "trust"), Stateful: boolean(m, "stateful")}
			if args, ok := m["args"].([]any); ok {
				for _, a := range args {
					if as, ok := a.(string); ok {
						s.Args = append(s.Args, as)
					}
				}
			}
			if env, ok := m["env"].(map[string]any); ok {
				s.Env = map[string]string{}
				//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
				for k, ev := range env {
					if es, ok := ev.(string); ok {
						s.Env[k] = es
					}
				}
			}
			d.MCPServers[name] = s
		}
	}
	if ins, ok := root["inputs"].(map[string]any); ok {
		d.Inputs = make(map[string]Input, len(ins))
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for name, v := range ins {
			m, _ := v.(map[string]any)
			d.Inputs[name] = Input{Type: str(m, "type"), Description: str(m, "description"), Required: boolean(m, "required"), Default: m["default"]}
		}
	}
	if m, ok := root["mcp"].(map[string]any); ok {
		d.MCP = &MCPOptions{Expose: boolean(m, "expose"), Description: str(m, "description")}
	}
	steps, _ := root["steps"].([]any)
	d.Steps = make([]Step, len(steps))
	for i, v := range steps {
		m, _ := v.(map[string]any)
		st := &d.Steps[i]
		st.ID, st.Name, st.Tool = str(m, "id"), str(m, "name"), str(m, "tool")
		st.Inputs, _ = m["inputs"].(map[string]any)
		st.Condition, st.ForEach, st.Timeout = str(m, "condition"), str(m, "forEach"), duration(m, "timeout")
		st.Concurrency = integer(m, "concurrency")
		st.ContinueOnError = boolean(m, "continueOnError")
		if b, ok := m["batch"].(bool); ok {
			st.Batch = &b
		}
		if deps, ok := m["dependsOn"].([]any); ok {
			for _, dep := range deps {
				if s, ok := dep.(string); ok {
					st.DependsOn = append(st.DependsOn, s)
				}
			}
		}
		if r, ok := m["retry"].(map[string]any); ok {
			st.Retry = &Retry{MaxAttempts: integer(r, "maxAttempts"), InitialInterval: duration(r, "initialInterval"),
				MaxInterval: duration(r, "maxInterval")}
			st.Retry.Backoff, _ = r["backoff"].(float64)
		}
		st.Budget = budgetFrom(m["budget"])
	}
	return d
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func boolean(m map[string]any, k string) bool {
	b, _ := m[k].(bool)
	return b
}

func integer(m map[string]any, k string) int {
	f, _ := m[k].(float64)
	if f != float64(int(f)) {
		return 0
	}
	return int(f)
}

// duration reads a duration written as text ("30s") or, as vai files do, as a number of
// milliseconds (5000), and returns the text form the rest of weft uses.
func duration(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		return v
	case float64:
		if v > 0 {
			return strconv.FormatFloat(v, 'f', -1, 64) + "ms"
		}
	}
	return ""
}
