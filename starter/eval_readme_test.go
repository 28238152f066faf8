package starter_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/eval"
)

// TestReadmeEvalDatasets: every ```jsonl block of the README and docs/ (docs/testing.md's) is a
// dataset eval.ReadDataset (weft eval) reads.
func TestReadmeEvalDatasets(t *testing.T) {
	found := 0
	for _, b := range docBlocks(t, "jsonl") {
		cases, err := eval.ReadDataset(strings.NewReader(b.text), b.where)
		require.NoError(t, err, b.where)
		for _, c := range cases {
			require.NotEmpty(t, c.Reviews, "%s: the documentation's datasets show review decisions", b.where)
		}
		found++
	}
	require.Positive(t, found, "the documentation has a dataset block")
}
