package dsl

import (
	"errors"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
)

// code_index: a step reads a directory on the worker (path) or clones a Git repository (repo,
// optionally at ref), exactly one of them. Neither field is required alone, so the input schema
// cannot say so; this does, before the run rather than when the tool is called. A repo written
// out (not a template) that the worker refuses whatever its settings (not an http or https URL,
// or one with credentials, a query or a fragment) is refused here too, by the check the worker
// makes (toolspec.CodeRepoURL); its host is the worker's to judge (WEFT_CODE_GIT_HOSTS).
func init() {
	kinds[toolspec.CodeIndex.Spec] = stepKind{compile: func(c *compiler, cs *CompiledStep, inPtr string) {
		_, path := cs.Inputs["path"]
		repo, hasRepo := cs.Inputs["repo"]
		_, ref := cs.Inputs["ref"]
		_, source := cs.Inputs["source"] // vai's name: a directory or a repository, told apart when the tool runs
		switch {
		case source && (path || hasRepo):
			c.errAt(inPtr+"/source", `code_index takes "path" or "repo", not both (source is vai's name for either)`, "remove source, or path and repo")
		case source:
		case path && hasRepo:
			c.errAt(inPtr+"/repo", `code_index takes "path" or "repo", not both`, "remove one: path is a directory on the worker, repo a Git repository's URL")
		case !path && !hasRepo:
			c.errAt(inPtr, `code_index needs "path" (a directory on the worker) or "repo" (a Git repository's https URL)`, "add one of them")
		case ref && !hasRepo:
			c.errAt(inPtr+"/ref", `"ref" is a branch or tag of "repo", and the step gives no repo`, "remove ref, or index a repository with repo")
		}
		if s, ok := repo.(string); ok && !strings.Contains(s, "{{") {
			var fe *toolspec.RepoFormError
			if _, err := toolspec.CodeRepoURL(s); errors.As(err, &fe) {
				c.errAt(inPtr+"/repo", "repo "+fe.Why, fe.Fix)
			}
		}
	}}
}
