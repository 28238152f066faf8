package starter_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFixtureRunsPureToolsForReal: a vai-style fixture that mocks only the tools that reach a
// store runs chunk and estimate for real (and says so), a mock of a pure tool still wins, and a
// tool that is not pure still demands a mock.
func TestFixtureRunsPureToolsForReal(t *testing.T) {
	code, out, errOut := weft(t, "", "test", "../testdata/vai/intelligent-ingest.unmocked-chunk.test.json")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "(ran for real, unmocked: chunk, estimate)")
	require.Contains(t, out, "1 passed, 0 failed")

	dir := t.TempDir()
	wf, err := os.ReadFile("../testdata/vai/intelligent-ingest.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "intelligent-ingest.json"), wf, 0o600))
	cases := []struct {
		name, fixture, want string
		code                int
	}{
		{"a mocked pure tool is not run", `{"inputs": {"text": "x", "source": "a.md"},
			"mocks": {"chunk": {"chunks": ["mocked"], "count": 1}, "search": {"results": []}, "ingest": {"chunksCreated": 1}},
			"expect": {"output": {"chunks": 1, "first": "mocked"}}}`, "(ran for real, unmocked: estimate)", 0},
		{"a store tool still needs a mock", `{"inputs": {"text": "x", "source": "a.md"},
			"mocks": {"search": {"results": []}},
			"expect": {"noErrors": true}}`, `no mock for tool "ingest"`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, "intelligent-ingest.case.test.json")
			require.NoError(t, os.WriteFile(f, []byte(tc.fixture), 0o600))
			code, out, errOut := weft(t, "", "test", f)
			require.Equal(t, tc.code, code, out+errOut)
			require.Contains(t, out, tc.want)
		})
	}
}
