package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"

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
	// Version is the latest saved version of its file: the base a save from this definition
	// sends (PUT /v1/workflows/{name}).
	Version int `json:"version" jsonschema:"the latest saved version of its file (0: never saved through weft, or a built-in): send it as base when saving what this gave"`
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
	if e.Path != "" {
		if latest, err := weftclient.NewWorkflowFiles(c.api.o.WorkflowsDir).CurrentVersion(filepath.Base(e.Path)); err == nil {
			v.Version = latest.ID
		}
	}
	return v, nil
}

// ValidateIn is a definition of the caller's own to check.
type ValidateIn struct {
	Definition map[string]any `json:"definition,omitempty" jsonschema:"the workflow definition (a JSON object, as a workflow file holds it)"`
	// Source: an editor's text, whose diagnostics point into it.
	Source string `json:"source,omitempty" jsonschema:"the definition as the text of a file, instead of definition: the diagnostics' lines and columns are in this text (an editor's), and text that is not JSON is an answer too"`
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
	if in.Source != "" {
		if in.Definition != nil {
			return weftclient.Validation{}, invalid("/source", "send definition (an object) or source (a file's text), not both")
		}
		return weftclient.Validate("definition.json", []byte(in.Source), weftclient.FileResolver(c.api.o.WorkflowsDir)), nil
	}
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

// Saved versions of the operator's workflow files: one operation of the client package
// (weftclient.WorkflowFiles), which the CLI (weft workflows save, versions, diff, restore) and
// the console's builder call too.

// files is the workflows folder's files with their versions, or a 503 when the gateway has no
// folder.
func (c *call) files() (*weftclient.WorkflowFiles, error) {
	if c.api.o.WorkflowsDir == "" {
		return nil, kindUnavailable.problem(weftclient.ErrNoWorkflowsDir.Error())
	}
	return weftclient.NewWorkflowFiles(c.api.o.WorkflowsDir), nil
}

// author is who a save is recorded as: the key's (or login's) name; the operator when nobody
// authenticated.
func (c *call) author() string {
	if !c.authed || c.who.Name == "" {
		return "operator"
	}
	return c.who.Name
}

// SaveWorkflowIn is a save of one of the operator's workflow files.
type SaveWorkflowIn struct {
	Name    string  `path:"name" json:"-" jsonschema:"the workflow's name in the catalog (its file is NAME.json in the workflows folder)"`
	Content *string `json:"content" jsonschema:"the file's text as it is to be written (its formatting and key order are kept)"`
	Base    *int    `json:"base" jsonschema:"the version the content was made from: GET /v1/workflows/{name} gives it as version (0 for a file with no saved version); a save from another version is refused (409) naming the current one"`
	Message string  `json:"message,omitempty" jsonschema:"what changed, in a few words (at most 1000 bytes)"`
}

// WorkflowVersions is a workflow's saved versions.
type WorkflowVersions struct {
	Name     string                           `json:"name"`
	Versions []weftclient.WorkflowVersionInfo `json:"versions" jsonschema:"newest first; empty when the file has never been saved through weft"`
}

// versionIn names a version of a workflow.
type versionIn struct {
	Name    string `path:"name" json:"-" jsonschema:"the workflow's name in the catalog"`
	Version string `path:"version" json:"-" jsonschema:"the version's number (GET /v1/workflows/{name}/versions)"`
}

// WorkflowVersionView is one saved version with its content.
type WorkflowVersionView struct {
	Name    string                         `json:"name"`
	Version weftclient.WorkflowVersionInfo `json:"version"`
	Content string                         `json:"content" jsonschema:"the file's text as that version saved it"`
}

// diffIn names the versions to compare.
type diffIn struct {
	Name string `path:"name" json:"-" jsonschema:"the workflow's name in the catalog"`
	From int    `query:"from" json:"-" jsonschema:"the older version (default: the one to was saved over)"`
	To   int    `query:"to" json:"-" jsonschema:"the newer version (default: the latest)"`
}

// WorkflowDiff is what changed between two versions.
type WorkflowDiff struct {
	Name string `json:"name"`
	From int    `json:"from"`
	To   int    `json:"to"`
	Diff string `json:"diff" jsonschema:"a unified diff (3 lines of context) from version from to version to; empty when their contents are the same"`
}

func saveWorkflow(c *call, in SaveWorkflowIn) (weftclient.SaveResult, error) {
	files, err := c.files()
	if err != nil {
		return weftclient.SaveResult{}, err
	}
	if in.Content == nil {
		return weftclient.SaveResult{}, invalid("/content", "send content: the workflow file's text (a string)")
	}
	if in.Base == nil || *in.Base < 0 {
		return weftclient.SaveResult{}, invalid("/base", "send base: the version the content was made from (GET /v1/workflows/{name} gives it as version; 0 for a file with no saved version)")
	}
	out, err := files.SaveWorkflow(c.ctx, in.Name, []byte(*in.Content), *in.Base, c.author(), in.Message)
	if err != nil {
		return out, err
	}
	c.status = http.StatusOK
	if out.Created {
		c.status = http.StatusCreated
	}
	return out, nil
}

func listWorkflowVersions(c *call, in workflowIn) (WorkflowVersions, error) {
	files, err := c.files()
	if err != nil {
		return WorkflowVersions{}, err
	}
	vs, err := files.WorkflowVersions(in.Name)
	if err != nil {
		return WorkflowVersions{}, err
	}
	return WorkflowVersions{Name: in.Name, Versions: vs}, nil
}

// versionNumber is a {version} parameter as a number, or a 400 naming it.
func versionNumber(pointer, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, invalid(pointer, fmt.Sprintf("version %q: send a version's number (1, 2, ...: GET /v1/workflows/{name}/versions lists them)", s))
	}
	return n, nil
}

func getWorkflowVersion(c *call, in versionIn) (WorkflowVersionView, error) {
	files, err := c.files()
	if err != nil {
		return WorkflowVersionView{}, err
	}
	id, err := versionNumber("{version}", in.Version)
	if err != nil {
		return WorkflowVersionView{}, err
	}
	v, content, err := files.WorkflowVersion(in.Name, id)
	if err != nil {
		return WorkflowVersionView{}, err
	}
	return WorkflowVersionView{Name: in.Name, Version: v, Content: string(content)}, nil
}

func diffWorkflowVersions(c *call, in diffIn) (WorkflowDiff, error) {
	files, err := c.files()
	if err != nil {
		return WorkflowDiff{}, err
	}
	to, from := in.To, in.From
	if to < 0 || from < 0 {
		return WorkflowDiff{}, invalid("?from", "from and to are versions' numbers (1, 2, ...)")
	}
	if to == 0 {
		latest, err := files.CurrentVersion(in.Name)
		if err != nil {
			return WorkflowDiff{}, err
		}
		if latest.ID == 0 {
			return WorkflowDiff{}, kindNotFound.problem(fmt.Sprintf("workflow %q has no saved version to compare", in.Name))
		}
		to = latest.ID
	}
	if from == 0 {
		v, _, err := files.WorkflowVersion(in.Name, to)
		if err != nil {
			return WorkflowDiff{}, err
		}
		if v.Previous == 0 {
			return WorkflowDiff{}, invalid("?from", fmt.Sprintf("version %d is the first: send from, the version to compare it with", to))
		}
		from = v.Previous
	}
	diff, err := files.DiffWorkflowVersions(in.Name, from, to)
	if err != nil {
		return WorkflowDiff{}, err
	}
	return WorkflowDiff{Name: in.Name, From: from, To: to, Diff: diff}, nil
}

func restoreWorkflow(c *call, in versionIn) (weftclient.SaveResult, error) {
	files, err := c.files()
	if err != nil {
		return weftclient.SaveResult{}, err
	}
	id, err := versionNumber("{version}", in.Version)
	if err != nil {
		return weftclient.SaveResult{}, err
	}
	out, err := files.RestoreWorkflow(c.ctx, in.Name, id, c.author())
	var iw *weftclient.InvalidWorkflowError
	if errors.As(err, &iw) { // the old content no longer validates (a tool it names is gone)
		p := problemOf(err)
		for i := range p.Errors {
			p.Errors[i].Pointer = "{version}"
		}
		return out, p
	}
	if err != nil {
		return out, err
	}
	c.status = http.StatusOK
	if out.Created {
		c.status = http.StatusCreated
	}
	return out, nil
}

// versionRoutes are the routes of the workflow files' saved versions.
func versionRoutes() []route {
	bad, nf, cf, big := http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge
	save := op(http.MethodPut, "/v1/workflows/{name}", auth.RoleAdmin, "saveWorkflow", "workflows", "Save one of the operator's workflow files",
		"Writes `content` as the workflow's file in the workflows folder (what GET /v1/workflows/{name} and a run by name then use) and records it as a new version: who (the key's name), when, its SHA-256 and `message`. `base` is the version the content was made from: a save from another version is refused (409, version-conflict) naming the current one, so no save is lost. A file that does not validate is refused (400), each problem naming /content; nothing is written. The same save again (a retry) answers the version the first made, 200 with `created: false`; a new version is 201. Only an admin key may: a saved file is the operator's, trusted as the operator's own files are.",
		[]int{bad, cf, big}, saveWorkflow)
	restore := op(http.MethodPost, "/v1/workflows/{name}/versions/{version}/restore", auth.RoleAdmin, "restoreWorkflow", "workflows", "Restore a saved version",
		"Saves the version's content as a new version (history is never rewritten), validated as a save is; 201, or 200 with `created: false` when the file holds that content already. Only an admin key may.",
		[]int{bad, nf}, restoreWorkflow)
	save.Status, save.Created, save.Same = http.StatusCreated, "saved: a new version", "the same save again (a retry), or content the current version holds already: that version, nothing written"
	restore.Status, restore.Created, restore.Same = http.StatusCreated, "restored: a new version with the old content", "the file holds that content already: the current version, nothing written"
	return []route{
		save,
		op(http.MethodGet, "/v1/workflows/{name}/versions", auth.RoleReader, "listWorkflowVersions", "workflows", "List a workflow's saved versions",
			"The versions of the workflow's file saved through weft (PUT /v1/workflows/{name}, `weft workflows save`, the console's builder), newest first: id, who, when, SHA-256, message, size. A change made outside weft is recorded as a version by \"(written outside weft)\" at the next save.",
			[]int{bad}, listWorkflowVersions),
		op(http.MethodGet, "/v1/workflows/{name}/versions/{version}", auth.RoleReader, "getWorkflowVersion", "workflows", "Read a saved version",
			"One saved version of the workflow's file with its content as it was saved.",
			[]int{bad, nf}, getWorkflowVersion),
		op(http.MethodGet, "/v1/workflows/{name}/diff", auth.RoleReader, "diffWorkflowVersions", "workflows", "Compare two saved versions",
			"A unified diff of the workflow's file from version `from` to version `to` (default: the latest, and the version it was saved over).",
			[]int{bad, nf}, diffWorkflowVersions),
		restore,
	}
}
