package dsl

import (
	"fmt"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

// CheckCalls checks what w's workflow steps give the workflows they call (called: as the client
// resolves them when a run starts, client.CalledDefinitions) against the inputs those declare,
// as the called run checks them when it starts (ResolveInputs): a name it does not declare, a
// literal value of the wrong type and a required input left out are errors, at the step's
// inputs.inputs, so that validate refuses the call the run would refuse. Templated values are
// checked when resolved. A step whose workflow is not in called is not checked here.
func CheckCalls(w *Workflow, called map[string]*Workflow) Diagnostics {
	var ds Diagnostics
	for _, cs := range w.Steps {
		if cs.Spec != toolspec.Workflow.Spec {
			continue
		}
		name, _ := cs.Step.Inputs["workflow"].(string)
		cw, ok := called[name]
		if !ok || name == "" {
			continue
		}
		def := cw.Def
		ptr := cs.Pointer + "/inputs/inputs"
		args, _ := cs.Step.Inputs["inputs"].(map[string]any)
		for _, k := range sortedKeys(args) {
			in, declared := def.Inputs[k]
			if !declared {
				hint := didYouMean(k, sortedKeys(def.Inputs))
				if hint == "" {
					hint = "its inputs: " + strings.Join(sortedKeys(def.Inputs), ", ")
					if len(def.Inputs) == 0 {
						hint = fmt.Sprintf("workflow %q declares no inputs", name)
					}
				}
				ds = append(ds, w.Source.AtKey(ptr+"/"+escapePointer(k), fmt.Sprintf("workflow %q has no input %q", name, k), hint))
				continue
			}
			if s, ok := args[k].(string); ok && expr.HasTemplate(s) {
				continue
			}
			if _, err := CoerceValue(in.Type, args[k]); err != nil {
				ds = append(ds, w.Source.At(ptr+"/"+escapePointer(k), fmt.Sprintf("workflow %q's input %q: %v", name, k, err), ""))
			}
		}
		for _, k := range sortedKeys(def.Inputs) {
			in := def.Inputs[k]
			if _, given := args[k]; given || !in.Required || in.Default != nil {
				continue
			}
			at := ptr
			if args == nil {
				at = cs.Pointer + "/inputs"
			}
			ds = append(ds, w.Source.At(at, fmt.Sprintf("workflow %q needs input %q (%s), which this step does not give", name, k, in.Type),
				fmt.Sprintf(`add "%s": ... to the step's inputs.inputs`, k)))
		}
	}
	return ds.sorted()
}
