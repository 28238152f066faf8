package eval_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/eval"
)

// TestReadmeEvalDatasets: every ```jsonl block of the README is a dataset eval.ReadDataset (weft eval) reads.
func TestReadmeEvalDatasets(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	found := 0
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```jsonl" {
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		cases, err := eval.ReadDataset(strings.NewReader(strings.Join(lines[start:i], "\n")), "README.md")
		require.NoError(t, err, "README.md:%d", start+1)
		for _, c := range cases {
			require.NotEmpty(t, c.Reviews, "README.md:%d: the README's datasets show review decisions", start+1)
		}
		found++
	}
	require.Positive(t, found, "the README has a dataset block")
}
