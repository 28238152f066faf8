package auth

import (
	"os"

	"github.com/weftworks/weft/internal/safefile"
)

// openKeyFile opens the key file without blocking: a named pipe put at its path is opened at once
// and then refused as not a regular file, instead of hanging the gateway's next key reload (and
// every request waiting on it) until something writes to the pipe.
func openKeyFile(path string) (*os.File, error) { return safefile.Open(path) }
