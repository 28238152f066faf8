package dsl

import "github.com/weftworks/weft/activities/toolspec"

// VaiSemantics is the hidden lazy input (CompiledStep.Lazy) the compiler gives a merge or
// transform step of a file in vai's dialect: the data tool (workflows/datatools) then computes
// what vai's executeMerge and executeTransform (vai's src/lib/workflow.js) compute, where that
// differs from weft's documented semantics:
//
//   - merge drops duplicates only when dedup and dedup_field are both set (weft: either one), by
//     the item's top-level dedup_field (an item without it, or not an object, is its own key);
//   - transform with fields ignores mapping (weft applies both), keeps only the fields an item
//     has, and mapping writes the value itself where it is not a key of the item (weft: null).
//
// It travels with the step's other lazy inputs (to the evaluate activity too), so a step run
// over a stored value computes the same. A weft file's steps never carry it.
const VaiSemantics = "$vai"

// vaiDataTool marks a vai-dialect merge or transform step (VaiSemantics) and warns where the
// step's answer in weft's own dialect would differ from vai's.
func (c *compiler) vaiDataTool(cs *CompiledStep, inPtr string) {
	if c.dialect != DialectVai {
		return
	}
	in := cs.Step.Inputs
	switch cs.Spec {
	case toolspec.Merge.Spec:
		cs.Lazy[VaiSemantics] = true
		dedup, dedupSet := in["dedup"]
		_, fieldSet := in["dedup_field"]
		switch {
		case dedupSet && isTrue(dedup) && !fieldSet:
			c.warnAt(inPtr+"/dedup", "vai's merge drops duplicates only when dedup_field is set too: this merge keeps every item (in weft's dialect, dedup alone drops duplicate items)",
				`set dedup_field to the field that identifies an item, or remove dedup`)
		case fieldSet && (!dedupSet || isFalse(dedup)):
			c.warnAt(inPtr+"/dedup_field", "vai's merge drops duplicates only when dedup is true too: this merge keeps every item (in weft's dialect, dedup_field alone drops duplicates)",
				`set "dedup": true to drop duplicates, or remove dedup_field`)
		}
	case toolspec.Transform.Spec:
		cs.Lazy[VaiSemantics] = true
		_, fields := in["fields"]
		_, mapping := cs.Lazy["mapping"]
		_, template := cs.Lazy["template"]
		if fields && mapping && !template {
			c.warnAt(inPtr+"/mapping", "vai's transform uses fields and ignores mapping when both are given: mapping is ignored (in weft's dialect, both apply)",
				"remove mapping, or name the fields in mapping and remove fields")
		}
	}
}

// isTrue and isFalse say whether v is literally true or false (a template is neither).
func isTrue(v any) bool  { b, ok := v.(bool); return ok && b }
func isFalse(v any) bool { b, ok := v.(bool); return ok && !b }
