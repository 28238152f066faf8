package auth

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKeyFileIsBounded: a named pipe or a device at the key file's path is refused at once
// (os.Open of a FIFO waits for a writer, and the gateway reloads keys on every request).
func TestKeyFileIsBounded(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "mcp-keys.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, path := range []string{fifo, "/dev/zero"} {
		done := make(chan error, 1)
		go func() { _, err := readKeyStore(path); done <- err }()
		select {
		case err := <-done:
			require.ErrorContains(t, err, "is not a regular file")
		case <-time.After(5 * time.Second):
			t.Fatalf("reading the key file %s blocked", path)
		}
	}
}
