package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
)

// TestIngestSurvivesWorkerKill kills the worker process with SIGKILL in the middle of a long
// ingest: the ingest heartbeats, so the next worker takes it over within the heartbeat timeout
// (15 s) instead of the 10-minute timeout, and no chunk is stored twice.
func TestIngestSurvivesWorkerKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	c := dial(t)
	queue := "ingest-crash"
	db := "ingestcrash"
	var b strings.Builder
	for i := 0; b.Len() < 600<<10; i++ {
		fmt.Fprintf(&b, "Paragraph %d explains how retries back off and why idempotent writes matter for durable ingestion. ", i)
	}
	text := b.String()
	se := &sideEffects{path: filepath.Join(t.TempDir(), "effects.log")}
	proc := startCrashWorker(t, queue, se, "WEFT_CRASH_REAL_TOOLS=1", "MONGODB_URI="+store.URI)
	def := fmt.Sprintf(`{"name":"big-ingest","steps":[{"id":"store","tool":"ingest","inputs":{"text":%q,"source":"big.md","db":%q,"collection":"big","chunkSize":512,"chunkOverlap":0}}],"output":"{{ store.output.chunksCreated }}"}`, text, db)
	code, _, errOut := weft(t, queue, "run", writeTemp(t, def), "--id", "ingest-crash-1", "--detach")
	require.Equal(t, 0, code, errOut)

	mc, err := mongo.Connect(options.Client().ApplyURI(store.URI))
	require.NoError(t, err)
	defer func() { _ = mc.Disconnect(context.Background()) }()
	coll := mc.Database(db).Collection("big")
	count := func() int64 {
		n, _ := coll.CountDocuments(context.Background(), bson.D{})
		return n
	}
	require.Eventually(t, func() bool { return count() > 0 }, 60*time.Second, 20*time.Millisecond, "the ingest started")
	proc.kill(t)
	killedAt := time.Now()
	before := count()

	startWorkerWithConfig(t, queue, activities.Config{MongoDBURI: store.URI}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	res, err := weftclient.New(c, queue).Result(ctx, "ingest-crash-1")
	require.NoError(t, err)
	recovery := time.Since(killedAt)
	chunks := int64(res.Output.GetNumberValue())
	require.Greater(t, chunks, before, "the kill came mid-ingest")
	require.Equal(t, chunks, count(), "every chunk stored exactly once")
	t.Logf("killed after %d of %d chunks; completed %s after the kill", before, chunks, recovery.Round(100*time.Millisecond))
	require.Less(t, recovery, 60*time.Second, "taken over within the heartbeat timeout, not the 10-minute one")
}
