package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestMayWait: review steps and agents may wait for a person themselves; no other tool's
// steps do (a child workflow's reviews are its own steps').
func TestMayWait(t *testing.T) {
	for _, s := range toolspec.All() {
		want := s.Kind == toolspec.KindReview || s.Kind == toolspec.KindAgent
		require.Equal(t, want, dsl.MayWait(s), s.Name)
	}
	require.False(t, dsl.MayWait(nil))
}
