package toolspec

// BlobKey marks a reference to a value kept in the knowledge store instead of workflow history
// (claim check): {"$weftBlob": id, "size": bytes, "preview": "..."}.
const BlobKey = "$weftBlob"

// IsBlob reports whether v is a reference to a stored value.
func IsBlob(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[BlobKey].(string)
	return ok
}

// HoldsBlob reports whether v is or contains a reference to a stored value.
func HoldsBlob(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if IsBlob(x) {
			return true
		}
		//workflowcheck:ignore the result does not depend on map order (any element decides)
		for _, e := range x {
			if HoldsBlob(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if HoldsBlob(e) {
				return true
			}
		}
	}
	return false
}

// ActivityEvaluate evaluates templates and expressions that look inside stored values: the
// interpreter cannot (the values are not in history), so it sends the template's text and the
// part of its environment the template reads; the activity resolves the references, evaluates
// with the interpreter's own engine and stores large results again. It is not a step tool.
const ActivityEvaluate = "weft.evaluate"

// Kinds of EvalJob.
const (
	// EvalTemplate renders Source as a template (text with {{ }}; exactly one keeps its type).
	EvalTemplate = "template"
	// EvalBool evaluates Source as an expression and returns its truthiness (a condition).
	EvalBool = "bool"
	// EvalItems evaluates Source as an expression whose value is a list (forEach, loop items):
	// the result stays a list, with large items stored one by one.
	EvalItems = "items"
	// EvalInline runs an inline data step (merge, filter, transform, template, conditional).
	EvalInline = "step"
)

// EvalJob is one thing to evaluate.
type EvalJob struct {
	Kind   string    `json:"kind"`
	Source string    `json:"source,omitempty"`
	Step   *EvalStep `json:"step,omitempty"`
}

// EvalStep is an inline data step as the interpreter compiled it, in source form.
type EvalStep struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Inputs are the inputs the interpreter resolves, as written (templates as text).
	Inputs any `json:"inputs"`
	// Lazy are the inputs the tool evaluates itself, as written.
	Lazy map[string]any `json:"lazy,omitempty"`
	// Expr is the compiled condition (filter, conditional), as an expression.
	Expr string `json:"expr,omitempty"`
	// Then and Else are a conditional's branches (step ids).
	Then []any `json:"then,omitempty"`
	Else []any `json:"else,omitempty"`
}

// EvalRequest is ActivityEvaluate's input: the jobs and the environment they read (its roots:
// inputs, defaults, step ids, item, ...; references unresolved).
type EvalRequest struct {
	Jobs []EvalJob      `json:"jobs"`
	Env  map[string]any `json:"env"`
}

// EvalResult holds one value per job, in order; large values are references again.
type EvalResult struct {
	Values []any `json:"values"`
}
