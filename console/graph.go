package console

import (
	"sort"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
)

// Graph is a workflow drawn as its author wrote it: steps in the layers of the plan (a step's
// layer is one more than the deepest step it waits for), edges from step references and branches.
type Graph struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Layers      [][]string        `json:"layers"`
	Nodes       []Node            `json:"nodes"`
	Edges       []Edge            `json:"edges"`
	Inputs      map[string]any    `json:"inputs"` // JSON Schema of the inputs, for the run form
	Output      map[string]string `json:"output,omitempty"`
	Calls       toolspec.Calls    `json:"estimatedCalls"`
	PerItem     bool              `json:"perItem,omitempty"`
}

// Node is one step.
type Node struct {
	ID       string `json:"id"`
	Name     string `json:"name,omitempty"`
	Tool     string `json:"tool"`
	Category string `json:"category"`
	// Kind is where the step runs (toolspec.Kind): inline steps are computed inside the workflow
	// and have no activity call to show.
	Kind      string `json:"kind,omitempty"`
	Layer     int    `json:"layer"`
	ForEach   string `json:"forEach,omitempty"`
	Condition string `json:"condition,omitempty"`
	// Loop is set for loop steps (a nested step runs per item).
	Loop bool `json:"loop,omitempty"`
	// Timeout, Retry (a retry policy is written) and Concurrency are the step's own settings,
	// which "Run this step alone" names as not carried over.
	Timeout     string `json:"timeout,omitempty"`
	Retry       bool   `json:"retry,omitempty"`
	Concurrency int    `json:"concurrency,omitempty"`
	// Inputs are the step's inputs as written (templates unresolved).
	Inputs map[string]any `json:"inputs,omitempty"`
	// Branch names the conditional step and branch this step belongs to ("check: then").
	Branch string `json:"branch,omitempty"`
}

// Edge joins a step to one that waits for it. Kind: data (a reference), then or else (a branch of
// a conditional step), dependsOn (an explicit ordering).
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
}

// NewGraph draws w.
func NewGraph(w *dsl.Workflow) *Graph {
	p := dsl.NewPlan(w, map[string]any{}, nil)
	g := &Graph{Name: w.Def.Name, Description: w.Def.Description, Layers: p.Stages, Output: p.Output,
		Calls: p.Calls, PerItem: p.PerItem, Inputs: dsl.InputSchema(w.Def), Nodes: []Node{}, Edges: []Edge{}}
	if g.Layers == nil {
		g.Layers = [][]string{}
	}
	branch := map[[2]string]string{} // (conditional, step) -> then | else
	member := map[string]string{}
	for _, ps := range p.Steps {
		cs, _ := w.Step(ps.ID)
		if cs.Tool != "conditional" {
			continue
		}
		for _, b := range []string{"then", "else"} {
			ids, _ := cs.Step.Inputs[b].([]any)
			for _, id := range ids {
				if s, ok := id.(string); ok {
					branch[[2]string{cs.ID, s}] = b
					member[s] = cs.ID + ": " + b
				}
			}
		}
	}
	for _, ps := range p.Steps {
		cs, _ := w.Step(ps.ID)
		kind := ""
		if cs.Spec != nil {
			kind = string(cs.Spec.Kind)
		}
		g.Nodes = append(g.Nodes, Node{ID: ps.ID, Name: ps.Name, Tool: ps.Tool, Category: cs.Spec.Category(), Kind: kind, Layer: ps.Stage - 1,
			ForEach: ps.ForEach, Condition: ps.Condition, Loop: cs.Tool == "loop", Branch: member[ps.ID], Inputs: cs.Step.Inputs,
			Timeout: cs.Step.Timeout, Retry: cs.Step.Retry != nil, Concurrency: cs.Step.Concurrency})
		after := map[string]bool{}
		for _, a := range cs.Step.DependsOn {
			after[a] = true
		}
		deps := append([]string(nil), cs.Deps...)
		sort.Strings(deps)
		for _, d := range deps {
			kind := "data"
			if b, ok := branch[[2]string{d, ps.ID}]; ok {
				kind = b
			} else if after[d] {
				kind = "dependsOn"
			}
			g.Edges = append(g.Edges, Edge{From: d, To: ps.ID, Kind: kind})
		}
	}
	return g
}
