package starter

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDevStateFoundByOtherCommands: settings come from the environment first, then from a
// running weft dev's announcement, then the default; a stale announcement is ignored.
func TestDevStateFoundByOtherCommands(t *testing.T) {
	t.Setenv("WEFT_DEV_STATE", filepath.Join(t.TempDir(), "dev.json"))
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("MONGODB_URI", "")
	require.Equal(t, "127.0.0.1:7233", settingOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "nothing running")
	require.NoError(t, writeDevState(devState{PID: os.Getpid(), Temporal: "127.0.0.1:17233", Namespace: "default", MongoDB: "mongodb://127.0.0.1:27018/"}))
	require.Equal(t, "127.0.0.1:17233", settingOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"))
	require.Equal(t, "mongodb://127.0.0.1:27018/", envFromDev("MONGODB_URI"))
	t.Setenv("TEMPORAL_ADDRESS", "10.0.0.1:7233")
	require.Equal(t, "10.0.0.1:7233", settingOr("TEMPORAL_ADDRESS", ""), "the environment wins")
	var stdout, stderr bytes.Buffer
	code := Execute([]string{"dev", "--env"}, strings.NewReader(""), &stdout, &stderr)
	out := stdout.String()
	require.Equal(t, 0, code)
	require.Contains(t, out, "export MONGODB_URI=mongodb://127.0.0.1:27018/")
	// A weft dev that died without cleaning up is not believed.
	require.NoError(t, writeDevState(devState{PID: 1 << 30, Temporal: "127.0.0.1:17233"}))
	t.Setenv("TEMPORAL_ADDRESS", "")
	require.Equal(t, "127.0.0.1:7233", settingOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"))
	stderr.Reset()
	code = Execute([]string{"dev", "--env"}, strings.NewReader(""), &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "no weft dev is running")
}
