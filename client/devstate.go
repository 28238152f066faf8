package client

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/weftworks/weft/internal/safefile"
)

// DevState is what a running `weft dev` announces to the other weft processes on this machine
// (the CLI, weft mcp, weft worker, a Go program's Dial), so that they find it without settings:
// written when it is up, removed when it stops.
type DevState struct {
	PID       int    `json:"pid"`
	Temporal  string `json:"temporal"`
	Namespace string `json:"namespace"`
	MongoDB   string `json:"mongodb"`
	UI        string `json:"ui,omitempty"`
}

// EnvDevState overrides where DevStateFile is.
const EnvDevState = "WEFT_DEV_STATE"

// DevStateFile is where a running weft dev announces itself: $WEFT_DEV_STATE, else
// weft/dev.json in the user's cache directory.
func DevStateFile() string {
	if p := os.Getenv(EnvDevState); p != "" {
		return p
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "weft", "dev.json")
}

// WriteDevState announces s in DevStateFile.
func WriteDevState(s DevState) error {
	p := DevStateFile()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

// RemoveDevState removes the announcement when process pid made it.
func RemoveDevState(pid int) {
	if s, ok := ReadDevState(); ok && s.PID == pid {
		_ = os.Remove(DevStateFile())
	}
}

// ReadDevState returns the running weft dev's settings; false when none is running (no file, or
// one left by a weft dev that is gone).
func ReadDevState() (DevState, bool) {
	var s DevState
	b, err := safefile.Read(DevStateFile(), 64<<10, "dev state file") // weft's own, but WEFT_DEV_STATE may point anywhere
	if err != nil || json.Unmarshal(b, &s) != nil || s.PID <= 0 {
		return s, false
	}
	if !alive(s.PID) {
		return s, false // a stale file
	}
	return s, true
}

// alive says whether process pid exists (one of another user's answers EPERM: it exists).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Setting is the environment variable key (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, MONGODB_URI),
// else what a running weft dev announced for it, else def: the rule the CLI's flags and Dial
// share.
func Setting(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	if s, ok := ReadDevState(); ok {
		switch key {
		case EnvAddress:
			return s.Temporal
		case EnvNamespace:
			return s.Namespace
		case "MONGODB_URI":
			return s.MongoDB
		}
	}
	return def
}
