package mongostore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/mongostore"
)

// TestMCPSessionRecords: a session is written, read back whole, changed, and once deleted stays
// gone: a later write that may not create (a session's own writes after it opened) does not
// bring it back. Pruning removes the sessions idle since before a time and keeps the others; the
// sessions' collection is not listed among the knowledge collections.
func TestMCPSessionRecords(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	const db = "mcp_session_records"
	at := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	rec := mongostore.MCPSession{ID: "weft-1", Key: "ana", LastSeen: at}
	require.NoError(t, s.PutMCPSession(ctx, db, rec, true))
	got, found, err := s.GetMCPSession(ctx, db, "weft-1")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, rec, got)

	rec.Level, rec.Subscriptions, rec.Elicit = "debug", []string{"run-a", "run-b"}, true
	require.NoError(t, s.PutMCPSession(ctx, db, rec, false))
	got, _, err = s.GetMCPSession(ctx, db, "weft-1")
	require.NoError(t, err)
	require.Equal(t, rec, got)

	require.NoError(t, s.DeleteMCPSession(ctx, db, "weft-1"))
	require.NoError(t, s.PutMCPSession(ctx, db, rec, false), "a late write of an ended session")
	_, found, err = s.GetMCPSession(ctx, db, "weft-1")
	require.NoError(t, err)
	require.False(t, found, "an ended session is not brought back")
	_, found, err = s.GetMCPSession(ctx, db, "weft-unknown")
	require.NoError(t, err)
	require.False(t, found)

	require.NoError(t, s.PutMCPSession(ctx, db, rec, true))
	recent := mongostore.MCPSession{ID: "weft-2", Key: "bob", LastSeen: at.Add(time.Hour)}
	require.NoError(t, s.PutMCPSession(ctx, db, recent, true))
	n, err := s.PruneMCPSessions(ctx, db, at.Add(time.Minute))
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "the idle one")
	_, found, err = s.GetMCPSession(ctx, db, "weft-1")
	require.NoError(t, err)
	require.False(t, found)
	_, found, err = s.GetMCPSession(ctx, db, "weft-2")
	require.NoError(t, err)
	require.True(t, found, "one used since is kept")
	infos, err := s.Collections(ctx, db)
	require.NoError(t, err)
	for _, c := range infos {
		require.NotEqual(t, mongostore.MCPSessionCollection, c.Name, "sessions are not a knowledge collection")
	}
}
