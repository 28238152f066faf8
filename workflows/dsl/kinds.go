package dsl

import "github.com/weftworks/weft/activities/toolspec"

// kinds holds the compile step of the tools whose steps need more than their input schema
// checked: one file per kind (kind_*.go) registers its function for its tool's declaration. A
// tool without an entry is a plain tool call: its schema and references say everything.
var kinds = map[*toolspec.Spec]func(c *compiler, cs *CompiledStep, inPtr string){}

// itemScope are the names a per-item input sees.
var itemScope = scope{names: []string{"item", "index"}}
