package starter_test

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A port weft dev needs that something else holds is an error before anything starts (and before
// weft hands over to weft-stack), naming every busy port with the flag and the make variable
// that move it; the free ones are not named.
func TestDevSaysWhichPortsAreInUse(t *testing.T) {
	t.Setenv("MONGODB_URI", "")
	t.Setenv("WEFT_CODEC_KEYS", "")
	hold := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close() })
		return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	}
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	}
	temporal, ui, db, freeConsole := hold(), hold(), free(), free()
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{"the frontend and the Web UI", []string{"--port", temporal, "--ui-port", ui, "--db-port", db, "--console", "127.0.0.1:" + freeConsole},
			[]string{"2 ports it needs are in use", "Temporal 127.0.0.1:" + temporal + ": choose another with --port (make run PORT=...)",
				"Web UI 127.0.0.1:" + ui + ": choose another with --ui-port (make run UI_PORT=...)"},
			[]string{db, freeConsole}},
		{"the console", []string{"--port", "0", "--ui-port", "0", "--db-port", db, "--console", "127.0.0.1:" + ui},
			[]string{"a port it needs is in use", "console 127.0.0.1:" + ui + ": choose another with --console (make run CONSOLE=...)"},
			[]string{"Temporal", "Web UI"}},
		{"the database", []string{"--port", "0", "--ui-port", "0", "--db-port", temporal, "--console", "off"},
			[]string{"database 127.0.0.1:" + temporal + ": choose another with --db-port (make run DB_PORT=...)"}, nil},
		{"two flags on one port", []string{"--port", db, "--ui-port", db, "--db-port", "0", "--console", "off"},
			[]string{"the Temporal (--port) and the Web UI (--ui-port) are both set to 127.0.0.1:" + db, "make run PORT=... or UI_PORT=..."}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := weft(t, "", append([]string{"dev"}, tc.args...)...)
			want := 1 // busy: the machine's state
			if strings.Contains(tc.name, "two flags") {
				want = 2 // the command line's own contradiction
			}
			require.Equal(t, want, code, out+errOut)
			require.NotContains(t, out, "up")
			for _, w := range tc.want {
				require.Contains(t, errOut, w)
			}
			for _, w := range tc.notWant {
				require.NotContains(t, errOut, w)
			}
		})
	}
}
