package mcpclient_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/mcpclient"
)

// notesServer builds testdata/mcpserver, a small stdio MCP server with a call counter.
func notesServer(t *testing.T) mcpclient.Server {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "notes-mcp")
	out, err := exec.Command("go", "build", "-o", bin, "../../testdata/mcpserver").CombinedOutput()
	require.NoError(t, err, string(out))
	return mcpclient.Server{Name: "notes", Command: bin}
}

func count(t *testing.T, p *mcpclient.Sessions, session string, s mcpclient.Server) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := p.Call(ctx, session, s, "count", nil, nil)
	require.NoError(t, err)
	return res.Text, res.Reopened
}

// TestSessionsKeepOneConnectionPerSession: a session's calls share one process (its counter
// goes up), another session has its own, Close ends a session's process, and a process that
// died is replaced on the next call, which says the state is gone.
func TestSessionsKeepOneConnectionPerSession(t *testing.T) {
	s := notesServer(t)
	p := mcpclient.NewSessions(0)
	t.Cleanup(p.CloseAll)

	for _, want := range []string{"1", "2", "3"} {
		got, reopened := count(t, p, "run-a", s)
		require.Equal(t, want, got)
		require.False(t, reopened)
	}
	got, _ := count(t, p, "run-b", s)
	require.Equal(t, "1", got, "another session has a process of its own")
	require.Equal(t, []string{"run-a", "run-b"}, p.Open())

	require.Equal(t, 1, p.Close("run-b"))
	require.Equal(t, 0, p.Close("run-b"), "closing twice closes nothing")
	require.Equal(t, []string{"run-a"}, p.Open())
	got, reopened := count(t, p, "run-b", s)
	require.Equal(t, "1", got, "a closed session starts afresh")
	require.False(t, reopened, "a session closed on purpose is not a lost one")

	// The process exits in the middle of a call: the call fails, the next one starts it again
	// and says what was lost.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := p.Call(ctx, "run-a", s, "crash", nil, nil)
	require.Error(t, err)
	got, reopened = count(t, p, "run-a", s)
	require.Equal(t, "1", got)
	require.True(t, reopened, "the answer after a lost connection says the state is gone")
	got, reopened = count(t, p, "run-a", s)
	require.Equal(t, "2", got)
	require.False(t, reopened)

	tools, err := p.ListTools(ctx, "run-a", s, nil)
	require.NoError(t, err)
	require.NotEmpty(t, tools)
	got, _ = count(t, p, "run-a", s)
	require.Equal(t, "3", got, "the listing ran on the session's process too")

	_, err = p.Call(ctx, "", s, "count", nil, nil)
	require.ErrorContains(t, err, "session")
}

// TestSessionsCloseIdleConnections: a connection idle for longer than the pool's limit is closed
// at the next use of the pool.
func TestSessionsCloseIdleConnections(t *testing.T) {
	s := notesServer(t)
	p := mcpclient.NewSessions(time.Minute)
	t.Cleanup(p.CloseAll)
	now := time.Now()
	mcpclient.SetClock(p, func() time.Time { return now })
	count(t, p, "idle", s)
	count(t, p, "idle", s)
	now = now.Add(2 * time.Minute)
	count(t, p, "busy", s)
	require.Equal(t, []string{"busy"}, p.Open())
	got, reopened := count(t, p, "idle", s)
	require.Equal(t, "1", got)
	require.True(t, reopened, "a connection closed for idleness says its state is gone")
	_, reopened = count(t, p, "idle", s)
	require.False(t, reopened, "said once")
}

// TestSessionsLateCallAfterClose: a call that arrives as its session is closed runs on a slot the
// pool still holds, so CloseAll closes its process too.
func TestSessionsLateCallAfterClose(t *testing.T) {
	s := notesServer(t)
	p := mcpclient.NewSessions(0)
	count(t, p, "run", s)
	require.Equal(t, 1, p.Close("run"))
	count(t, p, "run", s)
	require.Equal(t, []string{"run"}, p.Open())
	p.CloseAll()
	require.Empty(t, p.Open())
}
