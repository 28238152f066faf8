package starter_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunsFlagsAreCheckedFirst: weft runs names the flag of a bad page token or page size and
// exits 2 before it dials Temporal (nothing listens at the address given).
func TestRunsFlagsAreCheckedFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not a token", []string{"--after", "nope!"}, `--after: page token "nope!" is not one a listing gave: start again from the first page`},
		{"no runs a page", []string{"--limit", "0"}, "--limit 0: give 1 to 999 runs a page"},
		{"more than a page", []string{"--limit", "1000"}, "--limit 1000: give 1 to 999 runs a page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := weft(t, "", append([]string{"runs", "--address", "127.0.0.1:1"}, tc.args...)...)
			require.Equal(t, 2, code, out+errOut)
			require.Contains(t, errOut, tc.want)
		})
	}
}
