package starter_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/eval"
)

// TestReadmeEvalDatasets: every ```jsonl block of the README and docs/ (docs/testing.md's) is a
// dataset eval.ReadDataset (weft eval) reads; they show review decisions and trajectory graders.
func TestReadmeEvalDatasets(t *testing.T) {
	found, reviews, trajectory := 0, 0, 0
	for _, b := range docBlocks(t, "jsonl") {
		cases, err := eval.ReadDataset(strings.NewReader(b.text), b.where)
		require.NoError(t, err, b.where)
		for _, c := range cases {
			if len(c.Reviews) > 0 {
				reviews++
			}
			if c.Expect.Tools != nil || len(c.Expect.ToolOrder) > 0 || c.Expect.MaxToolCalls != nil {
				trajectory++
			}
		}
		found++
	}
	require.Positive(t, found, "the documentation has a dataset block")
	require.Positive(t, reviews, "the documentation's datasets show review decisions")
	require.Positive(t, trajectory, "the documentation's datasets show trajectory graders")
}
