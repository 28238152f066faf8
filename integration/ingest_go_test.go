package integration

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	weftgo "github.com/weftworks/weft"
	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/chunk"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/fakeembed"
)

// ingestFiles writes n Markdown files of about two chunks each under dir and returns how many
// chunks they make.
func ingestFiles(t testing.TB, dir string, n int) int {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	chunks := 0
	for i := range n {
		text := fmt.Sprintf("# Page %d\n\nThis page explains topic %d of the corpus in a few sentences. ", i, i) +
			fmt.Sprintf("It has a second paragraph that carries more words so that the page splits in two chunks at 200 characters: item %d.\n\nAnd a third paragraph, to be sure of it.", i)
		cs, err := chunk.Split(text, "markdown", 200, 0)
		require.NoError(t, err)
		chunks += len(cs)
		require.NoError(t, os.WriteFile(fmt.Sprintf("%s/page-%04d.md", dir, i), []byte(text), 0o644))
	}
	return chunks
}

func countChunks(t testing.TB, db, coll string) int64 {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(store.URI))
	require.NoError(t, err)
	defer func() { _ = c.Disconnect(context.Background()) }()
	n, err := c.Database(db).Collection(coll).CountDocuments(context.Background(), bson.D{})
	require.NoError(t, err)
	return n
}

// goEngine is a weft Engine from Go whose own worker embeds through the fake provider.
func goEngine(t testing.TB, queue string, latency time.Duration) (*weftgo.Engine, *fakeembed.Server) {
	t.Helper()
	f, err := fakeembed.Start(latency)
	require.NoError(t, err)
	t.Cleanup(f.Close)
	cfg := activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: f.URL(), OpenAIAPIKey: "k", EmbeddingModel: "text-embedding-3-small", NoEmbedCache: true}
	e, err := weftgo.Start(context.Background(), weftgo.Options{Temporal: dial(t), TaskQueue: queue, Config: &cfg})
	require.NoError(t, err)
	t.Cleanup(e.Close)
	return e, f
}

// TestIngestGoAPICallerStopsRunFinishes: weft.Ingest from Go. The caller stops waiting once the
// run has stored part of the documents; the run finishes on the worker anyway, and the same
// ingest again finds every document stored: no run, no embedding request, and each chunk stored
// once.
func TestIngestGoAPICallerStopsRunFinishes(t *testing.T) {
	const db, coll, n = "ingestgo", "pages", 400
	e, f := goEngine(t, "go-ingest", 150*time.Millisecond)
	t.Chdir(t.TempDir())
	chunks := ingestFiles(t, "pages", n)
	opts := weftgo.IngestOptions{Paths: []string{"pages"}, DB: db, Collection: coll, ChunkSize: 200}

	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	stoppedAt := -1
	o := opts
	o.Interval = 10 * time.Millisecond
	o.Progress = func(p weftgo.IngestProgress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Done > 0 && stoppedAt < 0 {
			stoppedAt = p.Done
			cancel()
		}
	}
	rep, err := e.Ingest(ctx, o)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, rep.Runs, 1)
	mu.Lock()
	require.Less(t, stoppedAt, n, "the caller stopped before the run was done")
	mu.Unlock()

	_, err = e.Client().Result(context.Background(), rep.Runs[0])
	require.NoError(t, err, "the run finished without its caller")
	require.EqualValues(t, chunks, countChunks(t, db, coll), "every chunk stored, once")
	requests, _ := f.Counts()

	again, err := e.Ingest(context.Background(), opts)
	require.NoError(t, err)
	require.Equal(t, n, again.Unchanged)
	require.Empty(t, again.Runs)
	after, _ := f.Counts()
	require.Equal(t, requests, after, "no embedding request")
	require.EqualValues(t, chunks, countChunks(t, db, coll))
}

// TestIngestThroughput (issue 46 item 4): weft ingest's throughput for 1,000 files through the
// batched ingest, first pass and an unchanged second pass (0 embedding requests). The figures
// are logged: go test ./integration -run 'TestIngestThroughput$' -count=1 -v
func TestIngestThroughput(t *testing.T) {
	if testing.Short() {
		t.Skip("measures 1,000 files")
	}
	const db, coll, n = "ingestbench", "pages", 1000
	e, f := goEngine(t, "go-ingest-bench", 0)
	t.Chdir(t.TempDir())
	chunks := ingestFiles(t, "pages", n)
	opts := weftgo.IngestOptions{Paths: []string{"pages"}, DB: db, Collection: coll, ChunkSize: 200}

	t0 := time.Now()
	rep, err := e.Ingest(context.Background(), opts)
	require.NoError(t, err)
	first := time.Since(t0)
	require.Equal(t, n, rep.New)
	require.Zero(t, rep.Failed)
	requests1, inputs1 := f.Counts()
	require.EqualValues(t, chunks, countChunks(t, db, coll))
	require.LessOrEqual(t, requests1, (chunks+63)/64+len(rep.Runs)*8, "batched: about one request per 64 chunks")

	t0 = time.Now()
	rep2, err := e.Ingest(context.Background(), opts)
	require.NoError(t, err)
	second := time.Since(t0)
	requests2, _ := f.Counts()
	require.Equal(t, n, rep2.Unchanged)
	require.Empty(t, rep2.Runs)
	require.Equal(t, requests1, requests2, "the unchanged pass makes no embedding request")

	t.Logf("first pass: %d files, %d chunks in %d runs: %v, %.0f files/s, %d embedding requests (%d inputs)",
		n, chunks, len(rep.Runs), first.Round(time.Millisecond), float64(n)/first.Seconds(), requests1, inputs1)
	t.Logf("second pass (unchanged): %v, %.0f files/s, %d embedding requests, %d runs",
		second.Round(time.Millisecond), float64(n)/second.Seconds(), requests2-requests1, len(rep2.Runs))
}

// TestIngestFollowsTheRunOfTheSameDocuments: the same ingest while its run waits for a worker
// follows that run (same id) instead of starting another, and both callers see it stored.
func TestIngestFollowsTheRunOfTheSameDocuments(t *testing.T) {
	const queue, db, coll = "ingest-follow", "ingestfollow", "pages"
	f, err := fakeembed.Start(0)
	require.NoError(t, err)
	t.Cleanup(f.Close)
	cfg := activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: f.URL(), OpenAIAPIKey: "k", EmbeddingModel: "text-embedding-3-small"}
	t.Chdir(t.TempDir())
	chunks := ingestFiles(t, "pages", 5)
	wc := weftclient.New(dial(t), queue)
	opts := weftclient.IngestOptions{Paths: []string{"pages"}, DB: db, Collection: coll, ChunkSize: 200, Store: activities.NewTools(cfg)}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // no worker yet: the run waits
	defer cancel()
	first, err := wc.Ingest(ctx, opts)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, first.Runs, 1)

	type result struct {
		rep *weftclient.IngestReport
		err error
	}
	done := make(chan result, 1)
	following := make(chan struct{})
	var once sync.Once
	o := opts
	o.Interval = 10 * time.Millisecond
	o.Progress = func(weftclient.IngestProgress) { once.Do(func() { close(following) }) }
	go func() { // still no worker: the same documents, so the same run
		r, err := wc.Ingest(context.Background(), o)
		done <- result{r, err}
	}()
	select {
	case <-following: // its run started or followed, before a worker could store anything
	case r := <-done:
		t.Fatalf("the second ingest ended before a worker ran: %+v, %v", r.rep, r.err)
	}
	startWorkerWithConfig(t, queue, cfg, nil)
	res := <-done
	require.NoError(t, res.err)
	again := res.rep
	require.Equal(t, first.Runs, again.Runs, "the same documents: the same run, followed")
	require.Equal(t, 5, again.New)
	for _, d := range again.Documents {
		require.Equal(t, "stored", d.Status, d.Source)
	}
	require.EqualValues(t, chunks, countChunks(t, db, coll))
}
