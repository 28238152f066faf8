package starter_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIngestRefusesBadFlags: what is wrong with the command line exits 2 with what to do,
// before a file is read or a connection made.
func TestIngestRefusesBadFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no collection", []string{"ingest", "docs"}, "--collection is required"},
		{"no path", []string{"ingest", "--collection", "c"}, "requires at least 1 arg"},
		{"chunk size", []string{"ingest", "docs", "--collection", "c", "--chunk-size", "50"}, "--chunk-size 50: use 100 to 8000"},
		{"overlap", []string{"ingest", "docs", "--collection", "c", "--chunk-overlap", "600"}, "--chunk-overlap 600"},
		{"strategy", []string{"ingest", "docs", "--collection", "c", "--chunk", "words", "--dry-run"}, `chunk strategy "words": use one of fixed, sentence, paragraph, recursive, markdown`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := weft(t, "", c.args...)
			require.Equal(t, 2, code, errOut)
			require.Contains(t, errOut, c.want)
		})
	}
}
