package dsl

import (
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
)

// workflow: the called workflow is named, never a path.
func init() {
	kinds[toolspec.Workflow.Spec] = stepKind{compile: func(c *compiler, cs *CompiledStep, inPtr string) {
		if name, ok := cs.Step.Inputs["workflow"].(string); ok && !strings.Contains(name, "{{") {
			if err := CheckWorkflowName(name); err != nil {
				c.errAt(inPtr+"/workflow", err.Error(), workflowNameHint)
			}
		}
	}}
}
