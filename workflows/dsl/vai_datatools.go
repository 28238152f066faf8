package dsl

import (
	"fmt"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

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

// vaiChunkFields are the fields of a chunk in vai's chunk output, and vaiChunkOutput the fields
// of that output, that weft's chunk does not give: its chunks are strings and it counts them in
// count (vai's executeChunk in src/lib/workflow.js).
var (
	vaiChunkFields = []string{"charCount", "content", "index", "metadata", "source"}
	vaiChunkOutput = []string{"avgChunkSize", "strategy", "totalChunks"}
)

// vaiChunkReads warns, in a file in vai's dialect, of each read of a field vai's chunk output
// has and weft's does not: X.output.chunks[0].content, X.output.totalChunks, and item.charCount
// (or a loop's own name) where the items are X.output.chunks or a filter's results of them
// (filter, transform, loop, forEach).
// Such a read is null in weft, where vai gives a value.
func (c *compiler) vaiChunkReads() {
	if c.dialect != DialectVai {
		return
	}
	chunkSteps := map[string]bool{}
	for _, cs := range c.w.Steps {
		if cs.Spec == toolspec.Chunk.Spec && cs.ForEach == nil {
			chunkSteps[cs.ID] = true
		}
	}
	if len(chunkSteps) == 0 {
		return
	}
	warned := map[string]bool{}
	check := func(ptr string, refs []expr.Ref, item string) {
		for _, r := range refs {
			field := ""
			switch {
			case item != "" && r.Root == item && len(r.Path) > 0 && contains(vaiChunkFields, r.Path[0]):
				field = item + "." + r.Path[0]
			case chunkSteps[r.Root] && len(r.Path) >= 4 && r.Path[0] == "output" && r.Path[1] == "chunks" && contains(vaiChunkFields, r.Path[3]):
				field = r.String()
			case chunkSteps[r.Root] && len(r.Path) >= 2 && r.Path[0] == "output" && contains(vaiChunkOutput, r.Path[1]):
				field = r.String()
			}
			if field == "" || warned[ptr+" "+field] {
				continue
			}
			warned[ptr+" "+field] = true
			c.warnAt(ptr, fmt.Sprintf("%s is null in weft: vai's chunk gives objects {index, content, charCount, source, metadata} and totalChunks, weft's gives the chunks as strings and count", field),
				"read the chunk itself (chunks[0], item) for its text, .length for its length, and output.count for the number of chunks")
		}
	}
	// lists are the values that are vai's chunk objects in vai: X.output.chunks, and the results
	// of a filter of them (file order).
	lists := map[string]bool{}
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for id := range chunkSteps {
		lists[id+".output.chunks"] = true
	}
	// items says whether a value is exactly {{ L }} for one of lists.
	items := func(v any) bool {
		s, _ := v.(string)
		s = strings.TrimSpace(s)
		if !strings.HasPrefix(s, "{{") || !strings.HasSuffix(s, "}}") {
			return false
		}
		return lists[strings.TrimSpace(s[2:len(s)-2])]
	}
	for _, cs := range c.w.Steps {
		if cs.Spec == toolspec.Filter.Spec && cs.ForEach == nil && items(cs.Step.Inputs["array"]) {
			lists[cs.ID+".output.results"] = true
		}
	}
	for _, cs := range c.w.Steps {
		item := ""
		if cs.ForEach != nil && (items(cs.ForEach.Source()) || items("{{"+cs.ForEach.Source()+"}}")) {
			item = "item"
		}
		if cs.InputValue != nil {
			cs.InputValue.Each(func(path string, t *expr.Template) { check(cs.Pointer+"/inputs"+path, t.Refs(), item) })
		}
		if cs.Condition != nil {
			check(cs.Pointer+"/condition", cs.Condition.Refs(), item)
		}
		perItem := ""
		switch cs.Spec {
		case toolspec.Filter.Spec, toolspec.Transform.Spec:
			if items(cs.Step.Inputs["array"]) {
				perItem = "item"
			}
		case toolspec.Loop.Spec:
			if ns := cs.Nested(); ns != nil && items(cs.Step.Inputs["items"]) {
				perItem = ns.As
			}
		}
		if cs.Compiled != nil {
			cs.Compiled.eachRefs(func(ptr string, refs []expr.Ref) { check(cs.Pointer+"/inputs"+ptr, refs, perItem) })
		}
	}
	if c.w.Output != nil {
		c.w.Output.Each(func(path string, t *expr.Template) { check("/output"+path, t.Refs(), "") })
	}
}
