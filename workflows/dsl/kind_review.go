package dsl

import "github.com/weftworks/weft/activities/toolspec"

// review: its settings, with their declaration's defaults, are decoded when written out, else
// when the run has resolved them; its step waits for a person's decision.
func init() {
	kinds[toolspec.Review.Spec] = stepKind{mayWait: true, compile: func(c *compiler, cs *CompiledStep, inPtr string) {
		if in := decodeWritten(cs, ReviewInput, reviewSettings...); in != nil {
			cs.Input = in
		}
	}}
}

// reviewSettings are the inputs of a review step that say how it asks; its data, schema,
// timeout and reviewers are read as the run resolved them.
var reviewSettings = []string{"title", "instructions", "onTimeout", "rejectFails"}

// ReviewInput decodes a review step's settings with the declaration's defaults.
func ReviewInput(inputs map[string]any) (toolspec.ReviewIn, error) {
	return toolspec.Review.DecodeFields(inputs, reviewSettings...)
}
