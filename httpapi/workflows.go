package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows/dsl"
)

// The operator's workflows (the catalog: the workflows directory and the built-ins, as for
// /mcp), and checking or planning a definition of the caller's own, as weft validate and weft
// plan do (weftclient.Validate, weftclient.Plan).

// WorkflowSummary is one of the operator's workflows.
type WorkflowSummary struct {
	Name        string               `json:"name" jsonschema:"its name in the catalog: start it with POST /v1/runs and this as workflow"`
	Title       string               `json:"title" jsonschema:"the definition's own name"`
	Description string               `json:"description,omitempty"`
	Inputs      map[string]dsl.Input `json:"inputs" jsonschema:"the inputs it takes, by name"`
	Steps       int                  `json:"steps"`
	BuiltIn     bool                 `json:"builtIn" jsonschema:"a built-in template, not a file of the workflows directory"`
}

// WorkflowList is the operator's workflows.
type WorkflowList struct {
	Workflows []WorkflowSummary `json:"workflows"`
	Problems  []string          `json:"problems" jsonschema:"workflow files that do not load, each with what is wrong (GET /v1/workflows/{name} gives its diagnostics)"`
}

func summary(e weftclient.CatalogEntry) WorkflowSummary {
	s := WorkflowSummary{Name: e.Name, BuiltIn: e.Path == "", Inputs: map[string]dsl.Input{}}
	if w := e.Workflow; w != nil {
		s.Title, s.Description, s.Steps = w.Def.Name, w.Def.Description, len(w.Steps)
		if w.Def.Inputs != nil {
			s.Inputs = w.Def.Inputs
		}
	}
	return s
}

func listWorkflows(c *call, _ struct{}) (WorkflowList, error) {
	out := WorkflowList{Workflows: []WorkflowSummary{}, Problems: []string{}}
	for _, e := range weftclient.Catalog(c.api.o.WorkflowsDir, !c.api.o.NoBuiltins) {
		if e.Err != nil {
			out.Problems = append(out.Problems, e.Err.Error())
			continue
		}
		out.Workflows = append(out.Workflows, summary(e))
	}
	return out, nil
}

// workflowIn names a catalog workflow.
type workflowIn struct {
	Name string `path:"name" json:"-" jsonschema:"the workflow's name in the catalog (GET /v1/workflows)"`
}

// WorkflowView is one of the operator's workflows with its definition.
type WorkflowView struct {
	WorkflowSummary
	Definition map[string]any `json:"definition" jsonschema:"the definition as its file is written"`
	// Valid is false for a file that does not load; Diagnostics say why.
	Valid       bool            `json:"valid"`
	Diagnostics dsl.Diagnostics `json:"diagnostics" jsonschema:"a file that does not load: its errors, with line and column; else its warnings"`
}

// entry is the catalog workflow named in, or a 404 naming it.
func (c *call) entry(name string) (weftclient.CatalogEntry, error) {
	for _, e := range weftclient.Catalog(c.api.o.WorkflowsDir, !c.api.o.NoBuiltins) {
		if e.Name == name {
			return e, nil
		}
	}
	return weftclient.CatalogEntry{}, kindNotFound.problem(fmt.Sprintf("no workflow %q in the operator's catalog: GET /v1/workflows lists them", name))
}

func getWorkflow(c *call, in workflowIn) (WorkflowView, error) {
	e, err := c.entry(in.Name)
	if err != nil {
		return WorkflowView{}, err
	}
	v := WorkflowView{WorkflowSummary: summary(e), Definition: map[string]any{}}
	_ = json.Unmarshal(e.Data, &v.Definition) // a file that is not JSON: its diagnostics say so
	check := weftclient.ValidateEntry(e, weftclient.FileResolver(c.api.o.WorkflowsDir))
	v.Valid, v.Diagnostics = check.Valid, check.Diagnostics
	return v, nil
}

// ValidateIn is a definition of the caller's own to check.
type ValidateIn struct {
	Definition map[string]any `json:"definition" jsonschema:"the workflow definition (a JSON object, as a workflow file holds it)"`
}

// PlanIn is a definition of the caller's own to plan, and the inputs a run would get.
type PlanIn struct {
	Definition map[string]any `json:"definition" jsonschema:"the workflow definition (a JSON object, as a workflow file holds it)"`
	Inputs     map[string]any `json:"inputs,omitempty" jsonschema:"the inputs a run would get, by name (required ones not given get placeholders)"`
}

// definitionData is a body's definition as a file's bytes, or a problem naming /definition.
func definitionData(def map[string]any) ([]byte, error) {
	if def == nil {
		return nil, invalid("/definition", "send definition: the workflow as a JSON object")
	}
	data, err := json.MarshalIndent(def, "", "  ")
	if err != nil {
		return nil, invalid("/definition", "the definition does not encode as JSON: "+err.Error())
	}
	return data, nil
}

func validateWorkflow(c *call, in ValidateIn) (weftclient.Validation, error) {
	data, err := definitionData(in.Definition)
	if err != nil {
		return weftclient.Validation{}, err
	}
	return weftclient.Validate("definition.json", data, weftclient.FileResolver(c.api.o.WorkflowsDir)), nil
}

func planWorkflow(c *call, in PlanIn) (*dsl.Plan, error) {
	data, err := definitionData(in.Definition)
	if err != nil {
		return nil, err
	}
	v := weftclient.Validate("definition.json", data, weftclient.FileResolver(c.api.o.WorkflowsDir))
	if !v.Valid {
		p := kindInvalid.problem(fmt.Sprintf("the definition is not valid (%d errors): fix what each error says (POST /v1/workflows/validate lists them too)", v.Errors))
		for _, d := range v.Diagnostics.Errors() {
			p.Errors = append(p.Errors, FieldError{Pointer: "/definition", Detail: d.String()})
		}
		return nil, p
	}
	plan, err := weftclient.Plan(v.Workflow, in.Inputs)
	if err != nil {
		return nil, invalid("/inputs", err.Error())
	}
	return plan, nil
}

// MCPTool is an MCP tool definition as tools/list gives it.
type MCPTool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	InputSchema  map[string]any `json:"inputSchema" jsonschema:"the JSON Schema of its arguments: the workflow's inputs"`
	OutputSchema map[string]any `json:"outputSchema,omitempty"`
	Annotations  map[string]any `json:"annotations,omitempty" jsonschema:"title and hints (readOnlyHint, openWorldHint, ...)"`
}

// WorkflowTools is what a workflow offers MCP clients.
type WorkflowTools struct {
	Workflow string    `json:"workflow"`
	Tools    []MCPTool `json:"tools" jsonschema:"empty when the workflow is not offered as a tool: a file is offered when it sets mcp.expose, and not when another workflow's name gives the same tool"`
}

func workflowTools(c *call, in workflowIn) (WorkflowTools, error) {
	if _, err := c.entry(in.Name); err != nil {
		return WorkflowTools{}, err
	}
	if c.api.o.WorkflowTools == nil {
		return WorkflowTools{}, kindUnavailable.problem("this server serves no MCP gateway: start weft mcp --transport http")
	}
	raw, found := c.api.o.WorkflowTools(in.Name)
	if !found {
		return WorkflowTools{}, kindNotFound.problem(fmt.Sprintf("no workflow %q in the operator's catalog: GET /v1/workflows lists them", in.Name))
	}
	out := WorkflowTools{Workflow: in.Name, Tools: []MCPTool{}}
	if err := json.Unmarshal(raw, &out.Tools); err != nil {
		return WorkflowTools{}, fmt.Errorf("reading the gateway's tool definitions of %q: %w", in.Name, err)
	}
	return out, nil
}

// workflowRoutes are the routes of the operator's workflows.
func workflowRoutes() []route {
	nf := http.StatusNotFound
	return []route{
		op(http.MethodGet, "/v1/workflows", auth.RoleReader, "listWorkflows", "workflows", "List the operator's workflows",
			"The workflows that may be started by name (POST /v1/runs with workflow): the workflows directory's files and the built-in templates, with their inputs, as MCP's weft_workflows lists them; files that do not load are listed in problems.",
			nil, listWorkflows),
		op(http.MethodPost, "/v1/workflows/validate", auth.RoleReader, "validateWorkflow", "workflows", "Validate a definition",
			"Checks a definition of the caller's own as `weft validate --json` checks a file: JSON, schema, step ids, tools and their inputs, references, cycles, expressions, the output, and what it gives the workflows it calls. An invalid definition is an answer (200, valid false), its diagnostics with line and column; nothing runs.",
			[]int{http.StatusBadRequest}, validateWorkflow),
		op(http.MethodPost, "/v1/workflows/plan", auth.RoleReader, "planWorkflow", "workflows", "Plan a definition",
			"What a run of a definition of the caller's own would do, as `weft plan --json` says: its steps, stages (what runs in parallel), resolved inputs, output and estimated external calls. Nothing runs. An invalid definition is refused (400), each error naming /definition.",
			[]int{http.StatusBadRequest}, planWorkflow),
		op(http.MethodGet, "/v1/workflows/{name}", auth.RoleReader, "getWorkflow", "workflows", "Read one of the operator's workflows",
			"The workflow's definition as its file is written, its inputs, and whether it loads (its diagnostics when not).",
			[]int{nf}, getWorkflow),
		op(http.MethodGet, "/v1/workflows/{name}/tools", auth.RoleReader, "workflowTools", "workflows", "The MCP tools a workflow offers",
			"The MCP tool definitions (name, description, input and output schema, annotations) the gateway's /mcp offers for the workflow, as tools/list gives them: a wf_ tool that runs it, or none when it is not offered.",
			[]int{nf}, workflowTools),
	}
}
