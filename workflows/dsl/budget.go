package dsl

import (
	"fmt"
	"strconv"

	"github.com/weftworks/weft/activities/toolspec"
)

// budgetFrom reads a "budget" object; values of the wrong type are left at zero (the schema
// reported them), and a field written as 0 or less stays as written for checkBudget to refuse.
func budgetFrom(v any) *Budget {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	b := &Budget{}
	if f, ok := m["maxTokens"].(float64); ok {
		b.MaxTokens = int64(f)
	}
	b.MaxCostUSD, _ = m["maxCostUsd"].(float64)
	return b
}

// checkBudgets checks the file's budget and each step's: a limit is more than zero, and a step's
// budget is on a step that calls a model (agent or llm).
func (c *compiler) checkBudgets() {
	root, _ := c.src.Root.(map[string]any)
	c.checkBudget("/budget", root["budget"])
	steps, _ := root["steps"].([]any)
	for i := range c.def.Steps {
		st := &c.def.Steps[i]
		if st.Budget == nil {
			continue
		}
		ptr := "/steps/" + strconv.Itoa(i) + "/budget"
		if st.Tool != toolspec.Agent.Name && st.Tool != toolspec.LLM && !c.isBad("/steps/"+strconv.Itoa(i)+"/tool") {
			c.errAt(ptr, fmt.Sprintf("budget is for steps that call a model (agent, llm), not %s", st.Tool),
				"remove it, or put it at the file's top level to bound the whole run")
			continue
		}
		if i < len(steps) {
			m, _ := steps[i].(map[string]any)
			c.checkBudget(ptr, m["budget"])
		}
	}
}

// checkBudget checks the budget object v written at ptr.
func (c *compiler) checkBudget(ptr string, v any) {
	m, ok := v.(map[string]any)
	if !ok || c.isBad(ptr) {
		return
	}
	if len(m) == 0 {
		c.errAt(ptr, "budget sets no limit", `give maxTokens (tokens in all), maxCostUsd (US dollars in all) or both, e.g. {"maxTokens": 50000}`)
		return
	}
	for _, name := range []string{"maxTokens", "maxCostUsd"} {
		raw, set := m[name].(float64)
		if !set || c.isBad(ptr+"/"+name) {
			continue
		}
		if raw <= 0 {
			c.errAt(ptr+"/"+name, fmt.Sprintf("%s must be more than 0 (it is %s)", name, strconv.FormatFloat(raw, 'f', -1, 64)),
				"write the most the model calls may use, or remove the field to set no limit")
		}
	}
}
