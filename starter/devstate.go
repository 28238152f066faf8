package starter

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/weftworks/weft/internal/safefile"
)

// devState is what a running `weft dev` tells other weft processes on this machine, so that
// they find it without settings: written at start, removed at stop.
type devState struct {
	PID       int    `json:"pid"`
	Temporal  string `json:"temporal"`
	Namespace string `json:"namespace"`
	MongoDB   string `json:"mongodb"`
	UI        string `json:"ui,omitempty"`
}

// devStateFile is where a running weft dev announces itself (WEFT_DEV_STATE overrides it).
func devStateFile() string {
	if p := os.Getenv("WEFT_DEV_STATE"); p != "" {
		return p
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "weft", "dev.json")
}

func writeDevState(s devState) error {
	p := devStateFile()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

func removeDevState(pid int) {
	if s, ok := readDevState(); ok && s.PID == pid {
		_ = os.Remove(devStateFile())
	}
}

// readDevState returns the running weft dev's settings, if one is running.
func readDevState() (devState, bool) {
	var s devState
	b, err := safefile.Read(devStateFile(), 64<<10, "dev state file") // weft's own, but WEFT_DEV_STATE may point anywhere
	if err != nil || json.Unmarshal(b, &s) != nil || s.PID <= 0 {
		return s, false
	}
	if err := syscall.Kill(s.PID, 0); err != nil && err != syscall.EPERM {
		return s, false // the process is gone: a stale file
	}
	return s, true
}

// settingOr is the environment variable, else what a running weft dev announced, else def.
func settingOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	if s, ok := readDevState(); ok {
		switch key {
		case "TEMPORAL_ADDRESS":
			return s.Temporal
		case "TEMPORAL_NAMESPACE":
			return s.Namespace
		case "MONGODB_URI":
			return s.MongoDB
		}
	}
	return def
}

// envFromDev is os.Getenv that falls back to a running weft dev for TEMPORAL_ADDRESS and
// MONGODB_URI: processes started next to `weft dev` (weft mcp, weft worker) need no exports.
func envFromDev(key string) string { return settingOr(key, "") }

func printDevEnv(w io.Writer, s devState) {
	fmt.Fprintf(w, "export TEMPORAL_ADDRESS=%s\n", s.Temporal)
	fmt.Fprintf(w, "export TEMPORAL_NAMESPACE=%s\n", s.Namespace)
	fmt.Fprintf(w, "export MONGODB_URI=%s\n", s.MongoDB)
}
