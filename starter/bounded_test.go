package starter_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBoundedReads: a file that is not a small regular file is refused at once, naming it, what
// it is and the limit, by every command that reads one. Before, `weft validate /dev/zero` read
// 4.4 GB in 6 s and ran out of memory, and a named pipe hung the command.
func TestBoundedReads(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	fixtureFIFO := filepath.Join(dir, "approval-demo.pipe.test.json")
	require.NoError(t, syscall.Mkfifo(fixtureFIFO, 0o600))
	huge := filepath.Join(dir, "huge.json")
	require.NoError(t, os.WriteFile(huge, nil, 0o600))
	require.NoError(t, os.Truncate(huge, 2<<30)) // sparse: nothing is written
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"validate /dev/zero", []string{"validate", "/dev/zero"}, 2,
			[]string{"workflow file /dev/zero is a character device, not a regular file (refused before reading it)", "save the content to a file"}},
		{"validate a FIFO", []string{"validate", fifo}, 2,
			[]string{"workflow file " + fifo + " is a named pipe (FIFO), not a regular file"}},
		{"validate a 2 GB file", []string{"validate", huge}, 2,
			[]string{huge + ":1:1: file is 2147483648 bytes, larger than the 1048576 byte limit"}},
		{"an input file that is /dev/zero", []string{"plan", "multi-collection-search", "--input", "query=@/dev/zero"}, 2,
			[]string{"--input query: /dev/zero is a character device, not a regular file"}},
		{"an input file that is a FIFO", []string{"plan", "multi-collection-search", "--input-file", fifo}, 2,
			[]string{"--input-file: " + fifo + " is a named pipe (FIFO)"}},
		{"a fixture that is a FIFO", []string{"test", fixtureFIFO}, 1,
			[]string{"fixture " + fixtureFIFO + " is a named pipe (FIFO), not a regular file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			type result struct {
				code        int
				out, errOut string
			}
			done := make(chan result, 1)
			go func() {
				code, out, errOut := weft(t, "", c.args...)
				done <- result{code, out, errOut}
			}()
			select {
			case r := <-done:
				require.Equal(t, c.code, r.code, r.out+r.errOut)
				for _, w := range c.want {
					require.Contains(t, r.out+r.errOut, w)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("weft %v did not answer at once: it is reading the file", c.args)
			}
		})
	}
}
