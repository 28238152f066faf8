package mcp

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
)

// TestHealthPingsTheStore: /health asks the store whether it answers with a ping, not by listing
// its collections: with a store whose listing takes longer than the health check's 2 s (19
// collections took 6.2 s, issue 40), the store is still "ok" while it answers a ping.
func TestHealthPingsTheStore(t *testing.T) {
	g := New(Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", NoBuiltins: true, Config: activities.Config{MongoDBURI: "mongodb://store.invalid"}})
	var listed, pinged atomic.Int32
	g.tools[toolspec.Collections.Name] = func(ctx context.Context, _ map[string]any) (any, *toolspec.Usage, error) {
		listed.Add(1)
		<-ctx.Done() // a listing slower than the check
		return nil, nil, ctx.Err()
	}
	g.storePing = func(context.Context) error { pinged.Add(1); return nil }
	h := g.health(context.Background())
	require.Equal(t, "ok", h.MongoDB, "a slow listing is not an unreachable store")
	require.Equal(t, int32(1), pinged.Load())
	require.Zero(t, listed.Load(), "health lists no collections")
}
