package toolspec

const listOutput = `{"type":"object","properties":{"results":{"type":"array"},"resultCount":{"type":"integer"}}}`

func init() {
	register(&Spec{
		Name: "merge", Domain: "control", Kind: KindInline,
		Title:       "Merge arrays",
		Description: "Concatenate arrays (or step outputs holding results), optionally dropping duplicates by a field.",
		Input: `{"type":"object","required":["arrays"],"additionalProperties":false,"properties":{
		  "arrays":{"type":"array","minItems":1,"items":{"type":["array","object","null"]}},
		  "dedup":{"type":"boolean","default":false},
		  "dedup_field":{"type":"string","minLength":1}}}`,
		Output:      listOutput,
		Annotations: readOnlyClosed,
	})
	register(&Spec{
		Name: "filter", Domain: "control", Kind: KindInline,
		Title:       "Filter an array",
		Description: "Keep the items for which condition is truthy; the condition sees item and index.",
		Input: `{"type":"object","required":["array","condition"],"additionalProperties":false,"properties":{
		  "array":{"type":["array","object","null"]},
		  "condition":{"type":"string","minLength":1}}}`,
		Output:      listOutput,
		Annotations: readOnlyClosed,
		Lazy:        []string{"condition"},
	})
	register(&Spec{
		Name: "transform", Domain: "control", Kind: KindInline,
		Title:       "Transform items",
		Description: "Reshape each item: pick fields, rename (mapping new name -> old path), or render a template per item (item, index).",
		Input: `{"type":"object","required":["array"],"additionalProperties":false,"properties":{
		  "array":{"type":["array","object","null"]},
		  "fields":{"type":"array","items":{"type":"string","minLength":1}},
		  "mapping":{"type":"object","additionalProperties":{"type":"string"}},
		  "template":{}}}`,
		Output:      listOutput,
		Annotations: readOnlyClosed,
		Lazy:        []string{"template", "mapping"},
	})
	register(&Spec{
		Name: "template", Domain: "control", Kind: KindInline,
		Title:       "Render text",
		Description: "Render a text template; returns the text and its length.",
		Input:       `{"type":"object","required":["text"],"additionalProperties":false,"properties":{"text":{"type":"string"}}}`,
		Output:      `{"type":"object","properties":{"text":{"type":"string"},"charCount":{"type":"integer"}}}`,
		Annotations: readOnlyClosed,
	})
	register(&Spec{
		Name: "conditional", Domain: "control", Kind: KindInline, Branches: true,
		Title:       "Branch",
		Description: "Evaluate a condition and enable the steps in then (true) or else (false); the others are skipped.",
		Input: `{"type":"object","required":["condition"],"additionalProperties":false,"properties":{
		  "condition":{"type":["string","boolean"]},
		  "then":{"type":"array","items":{"type":"string"}},
		  "else":{"type":"array","items":{"type":"string"}}}}`,
		Output: `{"type":"object","properties":{"conditionResult":{"type":"boolean"},"branchTaken":{"type":"string"},
		  "enabledSteps":{"type":"array","items":{"type":"string"}},"skippedSteps":{"type":"array","items":{"type":"string"}}}}`,
		Annotations: readOnlyClosed,
		Lazy:        []string{"condition"},
	})
	register(&Spec{
		Name: "loop", Domain: "control", Kind: KindControl,
		Title:       "Loop over items",
		Description: "Run a nested step once per item, the item bound to the name in as; per-item errors are collected instead of failing the run.",
		Input: `{"type":"object","required":["items","as","step"],"additionalProperties":false,"properties":{
		  "items":{"type":["array","object","null"]},
		  "as":{"type":"string","pattern":"^[a-z][a-zA-Z0-9_]*$"},
		  "step":{"type":"object","required":["tool"],"additionalProperties":false,"properties":{
		    "tool":{"type":"string"},"inputs":{"type":"object"}}},
		  "maxIterations":{"type":"integer","minimum":1,"maximum":10000,"default":100},
		  "concurrency":{"type":"integer","minimum":1,"maximum":100}}}`,
		Output: `{"type":"object","properties":{"iterations":{"type":"integer"},"results":{"type":"array"},
		  "errors":{"type":"array","items":{"type":"object","properties":{"index":{"type":"integer"},"error":{"type":"string"}}}}}}`,
		Annotations: readOnlyClosed,
		Lazy:        []string{"step"},
	})
	register(&Spec{
		Name: "review", Domain: "control", Kind: KindReview,
		Title:       "Human review",
		Description: "Pause until a person approves, edits or rejects the proposal in data.",
		Input: `{"type":"object","required":["title"],"additionalProperties":false,"properties":{
		  "title":{"type":"string","minLength":1,"maxLength":500},
		  "instructions":{"type":"string","maxLength":20000},
		  "data":{},
		  "schema":{"type":"object","description":"JSON Schema an edit's data must satisfy (default: the shape of data)"},
		  "timeout":{"type":["string","number"],"pattern":"^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$","minimum":1,"description":"1h, 30m; or a number of milliseconds"},
		  "onTimeout":{"type":"string","enum":["approve","reject","fail"],"default":"fail"},
		  "reviewers":{"type":"array","minItems":1,"items":{"type":"string","pattern":"^(role:)?[^\\s:]+$"},
		    "description":"who may decide: identity names and \"role:NAME\" entries (an admin always may); decisions nobody authenticated, from the operator's own CLI, pass"},
		  "rejectFails":{"type":"boolean","description":"whether a reject fails the step (default: true for one review; false for a forEach review, where each item's decision, a reject too, is its output)"}}}`,
		Output: `{"type":"object","properties":{"decision":{"type":"string"},"data":{},"reviewer":{"type":"string"},
		  "authenticated":{"type":"boolean"},"comment":{"type":"string"},"digest":{"type":"string"},"decidedAt":{"type":"string"}}}`,
		Annotations: Annotations{},
	})
}
