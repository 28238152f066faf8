// Package workflows is weft's interpreter: ONE Temporal workflow function, Run, that executes
// any workflow definition. Tool steps become activities named after the tool (their Summary is
// the step's name, so the Temporal UI reads like the file); pure data steps run inline with no
// history events; review steps wait for a decision sent as the `review` Update or Signal; the
// `state` query reports progress.
//
// Everything here is deterministic: no I/O, no time.Now, no rand, no goroutines but
// workflow.Go, no unsorted map iteration. Steps start as soon as their own dependencies are done.
// The language (workflows/dsl, workflows/expr, workflows/datatools) is pure and safe to call here.
//
// Files: names.go (type, query, update, signal and search-attribute names), run.go (the
// scheduler), state.go (the state query), step.go (dispatch and activities), step_foreach.go,
// step_loop.go, step_review.go.
package workflows
