package client

import (
	"errors"
	"path/filepath"

	"github.com/weftworks/weft/workflows/dsl"
)

// Validation is what checking a definition finds: weft validate --json, MCP's
// weft_validate_workflow and POST /v1/workflows/validate give it.
type Validation struct {
	Valid bool `json:"valid"`
	// Steps is how many steps a valid definition has.
	Steps    int `json:"steps,omitempty"`
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	// Diagnostics are the errors of an invalid definition and its warnings, each with its file,
	// line and column.
	Diagnostics dsl.Diagnostics `json:"diagnostics"`
	// Workflow is the compiled workflow when it is valid.
	Workflow *dsl.Workflow `json:"-"`
}

// Validate loads data as the definition file (named so in its diagnostics) and checks what it
// gives the workflows it calls, resolved with resolve, as a run checks them when it starts
// (Request). A definition that does not load is not an error: its problems are the answer.
func Validate(file string, data []byte, resolve Resolver) Validation {
	w, err := dsl.Load(file, data)
	if err != nil {
		return invalidValidation(file, err)
	}
	return ValidateWorkflow(file, w, resolve)
}

// ValidateWorkflow is Validate of a workflow already loaded.
func ValidateWorkflow(file string, w *dsl.Workflow, resolve Resolver) Validation {
	called, err := CalledDefinitions(w.Def, resolve)
	if err != nil {
		return invalidValidation(file, err)
	}
	if ds := CheckCalls(w, called); len(ds) > 0 {
		return invalidValidation(file, append(ds, w.Warnings...))
	}
	v := Validation{Valid: true, Steps: len(w.Steps), Diagnostics: dsl.Diagnostics{}, Workflow: w}
	if w.Warnings != nil {
		v.Diagnostics = append(v.Diagnostics, w.Warnings...)
	}
	v.Warnings = len(v.Diagnostics.Warnings())
	return v
}

func invalidValidation(file string, err error) Validation {
	var ds dsl.Diagnostics
	if !errors.As(err, &ds) {
		ds = dsl.Diagnostics{{File: file, Line: 1, Col: 1, Message: err.Error(), Severity: dsl.SeverityError}}
	}
	return Validation{Diagnostics: ds, Errors: len(ds.Errors()), Warnings: len(ds.Warnings())}
}

// Plan is what a run of w with inputs would do (weft plan --json): required inputs not given get
// placeholders. An input that does not fit its declaration is an InvalidError.
func Plan(w *dsl.Workflow, inputs map[string]any) (*dsl.Plan, error) {
	in, err := dsl.PlanInputs(w.Def, nil, inputs)
	if err != nil {
		return nil, &InvalidError{Err: err}
	}
	return dsl.NewPlan(w, in, nil), nil
}

// ValidateEntry is Validate of a catalog workflow: a file that does not load gives its problems.
func ValidateEntry(e CatalogEntry, resolve Resolver) Validation {
	file := e.Name
	if e.Path != "" {
		file = filepath.Base(e.Path)
	}
	if e.Err != nil {
		return invalidValidation(file, e.Err)
	}
	return ValidateWorkflow(file, e.Workflow, resolve)
}
