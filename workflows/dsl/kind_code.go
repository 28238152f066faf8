package dsl

import "github.com/weftworks/weft/activities/toolspec"

// code_index: a step reads a directory on the worker (path) or clones a Git repository (repo,
// optionally at ref), exactly one of them. Neither field is required alone, so the input schema
// cannot say so; this does, before the run rather than when the tool is called.
func init() {
	kinds[toolspec.CodeIndex.Spec] = func(c *compiler, cs *CompiledStep, inPtr string) {
		_, path := cs.Inputs["path"]
		_, repo := cs.Inputs["repo"]
		_, ref := cs.Inputs["ref"]
		switch {
		case path && repo:
			c.errAt(inPtr+"/repo", `code_index takes "path" or "repo", not both`, "remove one: path is a directory on the worker, repo a Git repository's URL")
		case !path && !repo:
			c.errAt(inPtr, `code_index needs "path" (a directory on the worker) or "repo" (a Git repository's https URL)`, "add one of them")
		case ref && !repo:
			c.errAt(inPtr+"/ref", `"ref" is a branch or tag of "repo", and the step gives no repo`, "remove ref, or index a repository with repo")
		}
	}
}
