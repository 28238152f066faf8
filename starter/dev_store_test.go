package starter

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDevRefusesASilentStore: with MONGODB_URI pointing where nothing listens, weft dev fails at
// once with a message naming MONGODB_URI, and never says it is up (issue 21, item 8).
func TestDevRefusesASilentStore(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	t.Setenv("MONGODB_URI", "mongodb://ana:s3cret@"+addr+"/")
	t.Setenv("HOME", t.TempDir())

	old, oldTimeout := stack, storePingTimeout
	t.Cleanup(func() { stack, storePingTimeout = old, oldTimeout })
	storePingTimeout = 300 * time.Millisecond
	temporalStarted := false
	stack = &StackProvider{Temporal: func(context.Context, TemporalOptions) (*RunningTemporal, error) {
		temporalStarted = true
		return nil, errors.New("the test stops here")
	}}

	var out, errb bytes.Buffer
	code := Execute([]string{"dev", "--data-dir", t.TempDir(), "--ui-port", "0", "--console", "off"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, ExitFailed, code, out.String()+errb.String())
	require.False(t, temporalStarted, "the store is checked before anything starts")
	require.NotContains(t, out.String(), "is up")
	msg := errb.String()
	require.Contains(t, msg, "MONGODB_URI=mongodb://ana:xxxxx@"+addr+"/ does not answer")
	require.Contains(t, msg, "unset MONGODB_URI to use the embedded database")
	require.NotContains(t, msg, "s3cret")
}
