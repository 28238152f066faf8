package dsl

import "github.com/weftworks/weft/activities/toolspec"

// review: its inputs are the schema's; its step waits for a person's decision.
func init() { kinds[toolspec.Review.Spec] = stepKind{mayWait: true} }
