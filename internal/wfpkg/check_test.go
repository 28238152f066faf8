package wfpkg_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/wfpkg"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestCheckGolden: the findings of weft check on files that trip each rule (and one that trips
// none), worded as testdata/check.golden says.
func TestCheckGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/check/*.json")
	require.NoError(t, err)
	require.Len(t, files, 4)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, fd := range wfpkg.Check(filepath.ToSlash(f), data) {
			b.WriteString(fd.String() + "\n")
		}
	}
	if *update {
		require.NoError(t, os.WriteFile("testdata/check.golden", []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile("testdata/check.golden")
	require.NoError(t, err)
	require.Equal(t, string(want), b.String())
}
