package activities

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// pipelineStages are the aggregation stages the aggregate tool runs: reading and reshaping the
// documents of one collection. Stages that write ($out, $merge), run code ($function,
// $accumulator, $where) or read the server's own state ($currentOp, $collStats, ...) are refused,
// and the stages that read another collection ($lookup, $graphLookup, $unionWith) may not name
// weft's own (weft_*: memory and stored outputs are reached only through their tools) or MongoDB's
// own (system.*).
var pipelineStages = map[string]bool{
	"$match": true, "$project": true, "$group": true, "$sort": true, "$limit": true, "$skip": true,
	"$unwind": true, "$count": true, "$addFields": true, "$set": true, "$unset": true,
	"$sortByCount": true, "$bucket": true, "$bucketAuto": true, "$sample": true,
	"$replaceRoot": true, "$replaceWith": true, "$facet": true,
	"$lookup": true, "$graphLookup": true, "$unionWith": true,
}

// codeOperators run JavaScript on the server.
var codeOperators = map[string]bool{"$function": true, "$accumulator": true, "$where": true}

// checkPipeline refuses what the aggregate tool must not run; path names the place in messages.
func checkPipeline(pipeline []any, path string) error {
	for i, st := range pipeline {
		at := fmt.Sprintf("%s[%d]", path, i)
		m, ok := st.(map[string]any)
		if !ok || len(m) != 1 {
			return &InputError{Msg: fmt.Sprintf("%s: a stage is an object with one key, such as {\"$match\": {...}}", at)}
		}
		for name, arg := range m {
			if !pipelineStages[name] {
				return &InputError{Msg: fmt.Sprintf("%s: stage %s is not one aggregate runs (it reads and reshapes one collection): use %s", at, name, stageList())}
			}
			if err := checkStage(name, arg, at); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkStage(name string, arg any, at string) error {
	if op := findCode(arg); op != "" {
		return &InputError{Msg: fmt.Sprintf("%s: %s runs code on the database server; aggregate does not run code", at, op)}
	}
	other := func(coll any) error {
		c, _ := coll.(string)
		if Reserved(c) {
			return &InputError{Msg: fmt.Sprintf("%s: %s reads collection %q: collections named %s* are weft's own and are not aggregated by tools (use recall for memory)", at, name, c, reservedPrefix)}
		}
		if strings.HasPrefix(c, "system.") {
			return &InputError{Msg: fmt.Sprintf("%s: %s reads collection %q: system.* collections are MongoDB's own (users, roles, views) and are not aggregated by tools", at, name, c)}
		}
		return nil
	}
	switch name {
	case "$lookup", "$graphLookup":
		m, _ := arg.(map[string]any)
		if err := other(m["from"]); err != nil {
			return err
		}
		if sub, ok := m["pipeline"].([]any); ok {
			return checkPipeline(sub, at+"."+name+".pipeline")
		}
	case "$unionWith":
		switch a := arg.(type) {
		case string:
			return other(a)
		case map[string]any:
			if err := other(a["coll"]); err != nil {
				return err
			}
			if sub, ok := a["pipeline"].([]any); ok {
				return checkPipeline(sub, at+".$unionWith.pipeline")
			}
		}
	case "$facet":
		m, _ := arg.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			sub, _ := m[k].([]any)
			if err := checkPipeline(sub, at+".$facet."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// findCode returns the first code operator anywhere in v ("" if none).
func findCode(v any) string {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if codeOperators[k] {
				return k
			}
			if op := findCode(x[k]); op != "" {
				return op
			}
		}
	case []any:
		for _, e := range x {
			if op := findCode(e); op != "" {
				return op
			}
		}
	}
	return ""
}

func stageList() string {
	return strings.Join(slices.Sorted(maps.Keys(pipelineStages)), ", ")
}
