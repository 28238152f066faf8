package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/runwire"
)

// ChangeMemoryScopeOwned: an agent's memory tools take the scope of the session or the file,
// never the model's (runs started before it let the model choose).
const ChangeMemoryScopeOwned = "memory-scope-owned"

// memoryScoped reports whether a tool reads or writes long-term memory by scope.
func memoryScoped(spec *toolspec.Spec) bool { return spec.HasInput("scope") }

// checkScope refuses a memory scope that does not belong to whoever started a run from a
// definition of their own (docs/security.md): a client's definition names the memory of its own
// identity — the scope is its name ("ana") or ends with it ("support:ana": the last segment is
// the owner, so a key named "support" does not own "support:ana") — never another's. The
// operator's files may name any scope.
func (r *run) checkScope(tool string, inputs map[string]any) error {
	if r.origin == "" || r.startedBy == "" {
		return nil
	}
	spec, ok := toolspec.Lookup(tool)
	if !ok || !memoryScoped(spec) {
		return nil
	}
	scope, _ := inputs["scope"].(string)
	if runwire.ScopeOwner(scope) == r.startedBy {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
		"%s: memory scope %q does not belong to %s, who started this run from a definition of their own: use a scope that ends with their name (%q, or \"NAME:%s\"); an operator's workflow file in the workflows directory may use any scope",
		tool, scope, r.startedBy, r.startedBy, r.startedBy), toolspec.ErrInvalidInput, nil)
}

// ChangeClientSystemNamespaces: a client's definition may not name MongoDB's own databases or
// system.* collections (runs started before it reached them). Asked only when a step would be
// refused, so a run that names none records no marker.
const ChangeClientSystemNamespaces = "client-system-namespaces"

// checkNamespace refuses a database or collection that is MongoDB's own (admin, local, config,
// system.*) in a run started from a client's definition (toolspec.SystemNamespace); the
// operator's files may name them. inputs are the step's after defaults, so a name rendered from
// a template or taken from defaults is judged as the tool would receive it.
func (r *run) checkNamespace(ctx workflow.Context, tool string, spec *toolspec.Spec, inputs map[string]any) error {
	if r.origin == "" || spec == nil || !(spec.HasInput("db") || spec.HasInput("collection")) {
		return nil
	}
	db, _ := inputs["db"].(string)
	coll, _ := inputs["collection"].(string)
	err := toolspec.SystemNamespace(tool, db, coll)
	if err == nil || workflow.GetVersion(ctx, ChangeClientSystemNamespaces, workflow.DefaultVersion, 1) < 1 {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), toolspec.ErrInvalidInput, nil)
}

// sessionScope is the memory scope an agent's memory tools use: the session's (weft chat
// --memory) or the file's defaults.scope. The model never chooses it.
func (r *run) sessionScope(ctx workflow.Context, tool string) (string, error) {
	if workflow.GetVersion(ctx, ChangeMemoryScopeOwned, workflow.DefaultVersion, 1) < 1 {
		return "", nil
	}
	defaults, _ := r.env["defaults"].(map[string]any)
	if s, _ := defaults["scope"].(string); s != "" {
		return s, nil
	}
	return "", fmt.Errorf(`tools: %s needs a memory scope, and the model may not choose one: set "defaults": {"scope": "support:ana"} in the workflow (weft chat: --memory SCOPE)`, tool)
}
