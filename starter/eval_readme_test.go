package starter_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/starter"
)

// TestReadmeEvalDatasets: every ```jsonl block of the README is a dataset weft eval reads.
func TestReadmeEvalDatasets(t *testing.T) {
	lines := strings.Split(readme(t), "\n")
	found := 0
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```jsonl" {
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		cases, err := starter.ReadEvalDataset(strings.NewReader(strings.Join(lines[start:i], "\n")), "README.md")
		require.NoError(t, err, "README.md:%d", start+1)
		for _, c := range cases {
			require.NotEmpty(t, c.Reviews, "README.md:%d: the README's datasets show review decisions", start+1)
		}
		found++
	}
	require.Positive(t, found, "the README has a dataset block")
}
