package toolspec_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
)

// TestContentNamesTheTaggedFields: Content lists the fields tagged weft:"content" (promoted ones
// too, as llm's prompt from ChatIn); the tag adds nothing to the schemas (TestSchemasGolden).
func TestContentNamesTheTaggedFields(t *testing.T) {
	for _, c := range []struct {
		tool    string
		in, out []string
	}{
		{"llm", []string{"prompt", "context"}, []string{"text"}},
		{"rerank", []string{"query", "documents"}, []string{"results"}},
		{"http", []string{"body"}, []string{"body", "text"}},
		{"review", []string{"data"}, []string{"data"}},
		{"ingest", []string{"text"}, nil},
		{"workflow", nil, nil},
	} {
		s, ok := toolspec.Lookup(c.tool)
		require.True(t, ok, c.tool)
		in, out := s.Content()
		require.Equal(t, c.in, in, "%s's content inputs", c.tool)
		require.Equal(t, c.out, out, "%s's content outputs", c.tool)
	}
}
