package starter

import (
	"fmt"
	"io"

	weftclient "github.com/weftworks/weft/client"
)

// devState is what a running `weft dev` tells other weft processes on this machine, so that
// they find it without settings: written at start, removed at stop (client.DevState, which
// client.Dial reads too).
type devState = weftclient.DevState

// devStateFile is where a running weft dev announces itself (WEFT_DEV_STATE overrides it).
func devStateFile() string { return weftclient.DevStateFile() }

func writeDevState(s devState) error { return weftclient.WriteDevState(s) }

func removeDevState(pid int) { weftclient.RemoveDevState(pid) }

// readDevState returns the running weft dev's settings, if one is running.
func readDevState() (devState, bool) { return weftclient.ReadDevState() }

// settingOr is the environment variable, else what a running weft dev announced, else def.
func settingOr(key, def string) string { return weftclient.Setting(key, def) }

// envFromDev is os.Getenv that falls back to a running weft dev for TEMPORAL_ADDRESS and
// MONGODB_URI: processes started next to `weft dev` (weft mcp, weft worker) need no exports.
func envFromDev(key string) string { return settingOr(key, "") }

func printDevEnv(w io.Writer, s devState) {
	fmt.Fprintf(w, "export TEMPORAL_ADDRESS=%s\n", s.Temporal)
	fmt.Fprintf(w, "export TEMPORAL_NAMESPACE=%s\n", s.Namespace)
	fmt.Fprintf(w, "export MONGODB_URI=%s\n", s.MongoDB)
}
