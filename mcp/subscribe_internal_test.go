package mcp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOneFollowerPerRun: sessions subscribed to the same run share one follower; it stops when
// the last of them unsubscribes or goes away, and not before.
func TestOneFollowerPerRun(t *testing.T) {
	g := New(Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", Namespace: "default"})
	s := g.subs
	nop := func(string) {}
	s.add("run-1", "a", nop)
	s.add("run-1", "b", nop)
	s.add("run-2", "b", nop)
	require.Equal(t, map[string][]string{"run-1": {"a", "b"}, "run-2": {"b"}}, s.followed())
	s.mu.Lock()
	f1 := s.runs["run-1"]
	s.mu.Unlock()

	s.remove("run-1", "a")
	require.Equal(t, map[string][]string{"run-1": {"b"}, "run-2": {"b"}}, s.followed())
	select {
	case <-f1.done:
		t.Fatal("the follower stopped while a session still follows the run")
	default:
	}
	s.removeSession("b") // the session went away
	require.Empty(t, s.followed())
	select {
	case <-f1.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the follower of run-1 did not stop after its last session left")
	}
}
