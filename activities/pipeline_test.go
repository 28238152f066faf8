package activities

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAggregatePipelineStaysInItsCollection: aggregate runs read-and-reshape stages; it refuses
// stages that write, run code or read weft's own collections, however deep they are nested.
func TestAggregatePipelineStaysInItsCollection(t *testing.T) {
	tests := []struct {
		name     string
		pipeline []any
		want     string // "" : allowed
	}{
		{"reshape", []any{map[string]any{"$match": map[string]any{"a": 1}}, map[string]any{"$group": map[string]any{"_id": "$a"}}, map[string]any{"$sort": map[string]any{"_id": 1}}}, ""},
		{"lookup of a user collection", []any{map[string]any{"$lookup": map[string]any{"from": "docs", "localField": "a", "foreignField": "b", "as": "x"}}}, ""},
		{"unionWith memory", []any{map[string]any{"$unionWith": "weft_memory"}}, `pipeline[0]: $unionWith reads collection "weft_memory"`},
		{"unionWith stored outputs as an object", []any{map[string]any{"$unionWith": map[string]any{"coll": "weft_blobs"}}}, `$unionWith reads collection "weft_blobs"`},
		{"lookup memory", []any{map[string]any{"$lookup": map[string]any{"from": "weft_memory", "pipeline": []any{}, "as": "m"}}}, `$lookup reads collection "weft_memory"`},
		{"graphLookup memory", []any{map[string]any{"$graphLookup": map[string]any{"from": "weft_memory"}}}, `$graphLookup reads collection "weft_memory"`},
		{"lookup system.users", []any{map[string]any{"$lookup": map[string]any{"from": "system.users", "pipeline": []any{}, "as": "u"}}}, `$lookup reads collection "system.users": system.* collections are MongoDB's own`},
		{"unionWith system.js", []any{map[string]any{"$unionWith": map[string]any{"coll": "system.js"}}}, `$unionWith reads collection "system.js"`},
		{"memory inside a facet", []any{map[string]any{"$facet": map[string]any{"a": []any{map[string]any{"$unionWith": "weft_memory"}}}}}, `pipeline[0].$facet.a[0]: $unionWith reads collection "weft_memory"`},
		{"memory inside a lookup's pipeline", []any{map[string]any{"$lookup": map[string]any{"from": "docs", "as": "x", "pipeline": []any{map[string]any{"$unionWith": "weft_memory"}}}}}, `$unionWith reads collection "weft_memory"`},
		{"out", []any{map[string]any{"$out": "copy"}}, "stage $out is not one aggregate runs"},
		{"merge", []any{map[string]any{"$merge": map[string]any{"into": "x"}}}, "stage $merge is not one aggregate runs"},
		{"server state", []any{map[string]any{"$currentOp": map[string]any{}}}, "stage $currentOp is not one aggregate runs"},
		{"code in a group", []any{map[string]any{"$group": map[string]any{"_id": nil, "x": map[string]any{"$accumulator": map[string]any{}}}}}, "$accumulator runs code on the database server"},
		{"code in a match", []any{map[string]any{"$match": map[string]any{"$where": "true"}}}, "$where runs code"},
		{"code in a project", []any{map[string]any{"$project": map[string]any{"x": map[string]any{"$function": map[string]any{}}}}}, "$function runs code"},
		{"two keys in a stage", []any{map[string]any{"$match": map[string]any{}, "$limit": 1}}, "a stage is an object with one key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkPipeline(tc.pipeline, "pipeline")
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
			var ie *InputError
			require.ErrorAs(t, err, &ie, "bad input: not retried")
		})
	}
}
