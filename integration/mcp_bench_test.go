package integration

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/weftworks/weft/auth"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcplib "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/worker"
)

// BenchmarkGatewayLoad sends tool calls over loopback HTTP, 8 clients at once, to the weft
// gateway (auth on) and, in the same run, to a bare mcp-go server with one trivial tool:
//
//	go test ./integration -run '^$' -bench GatewayLoad -benchtime 2000x
func BenchmarkGatewayLoad(b *testing.B) {
	cfg := activities.Config{MongoDBURI: store.URI, Database: "bench"}
	tools := activities.NewTools(cfg).Handlers()
	for _, d := range templates.Corpus()["api_docs"] {
		if _, _, err := tools["ingest"](context.Background(), map[string]any{"text": d.Text, "source": d.Source, "collection": "docs", "db": "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	keyFile := filepath.Join(b.TempDir(), "keys.json")
	key, _, err := auth.GenerateKey(keyFile)
	if err != nil {
		b.Fatal(err)
	}
	keys, _ := auth.LoadKeys(keyFile)
	g := mcp.New(mcp.Options{Version: "bench", Address: server.Address, Namespace: server.Namespace, Config: cfg})
	weftSrv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer weftSrv.Close()

	bare := mcpserver.NewMCPServer("bare", "1")
	// The equivalent tool: the same catalog, straight from the handler, no auth, no validation.
	bare.AddTool(mcplib.NewTool("models", mcplib.WithDescription("model catalog")), func(ctx context.Context, r mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
		out, _, err := tools["models"](ctx, r.GetArguments())
		if err != nil {
			return nil, err
		}
		text, _ := json.Marshal(out)
		return mcplib.NewToolResultStructured(out, string(text)), nil
	})
	bareSrv := httptest.NewServer(mcpserver.NewStreamableHTTPServer(bare, mcpserver.WithStateLess(true)))
	defer bareSrv.Close()

	for _, c := range []struct {
		name, url, tool string
		args            map[string]any
		version         string // "" : the latest protocol (no sessions); 2025-06-18: with an Mcp-Session-Id
	}{
		{"bare-models", bareSrv.URL + "/mcp", "models", map[string]any{"category": "embedding"}, ""},
		{"weft_models", weftSrv.URL + "/mcp", "weft_models", map[string]any{"category": "embedding"}, ""},
		{"weft_models-session", weftSrv.URL + "/mcp", "weft_models", map[string]any{"category": "embedding"}, "2025-06-18"},
		{"weft_search", weftSrv.URL + "/mcp", "weft_search", map[string]any{"query": "rate limits", "collection": "docs", "db": "bench", "limit": 5}, ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			const workers = 8
			clients := make([]*client.Client, workers)
			for i := range clients {
				cl, err := client.NewStreamableHttpClient(c.url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
				if err != nil {
					b.Fatal(err)
				}
				if err := cl.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				init := mcplib.InitializeRequest{}
				init.Params.ProtocolVersion = mcplib.LATEST_PROTOCOL_VERSION
				if c.version != "" {
					init.Params.ProtocolVersion = c.version
				}
				if _, err := cl.Initialize(context.Background(), init); err != nil {
					b.Fatal(err)
				}
				clients[i] = cl
			}
			var mu sync.Mutex
			var lat []time.Duration
			jobs := make(chan struct{})
			var wg sync.WaitGroup
			start := time.Now()
			for _, cl := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range jobs {
						req := mcplib.CallToolRequest{}
						req.Params.Name, req.Params.Arguments = c.tool, c.args
						t0 := time.Now()
						res, err := cl.CallTool(context.Background(), req)
						d := time.Since(t0)
						if err != nil || res.IsError {
							b.Error(err, res)
							return
						}
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					}
				}()
			}
			for b.Loop() {
				jobs <- struct{}{}
			}
			close(jobs)
			wg.Wait()
			elapsed := time.Since(start)
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "calls/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// TestTimeToFirstState measures how long an agent waits between weft_run_workflow and the first
// state it can read, for the 4-step multi-collection shape (logged, not asserted against a time).
func TestTimeToFirstState(t *testing.T) {
	c := dial(t)
	queue := "first-state"
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: activities.Config{MongoDBURI: store.URI, Database: "fs"}})
	require.NoError(t, err)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, _ := auth.GenerateKey(keyFile)
	keys, _ := auth.LoadKeys(keyFile)
	g := mcp.New(mcp.Options{Version: "t", Address: server.Address, Namespace: server.Namespace, TaskQueue: queue})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	cl, err := client.NewStreamableHttpClient(srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcplib.InitializeRequest{}
	init.Params.ProtocolVersion = mcplib.LATEST_PROTOCOL_VERSION
	if _, err := cl.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	var samples []time.Duration
	for i := 0; i < 10; i++ {
		t0 := time.Now()
		req := mcplib.CallToolRequest{}
		req.Params.Name = "weft_run_workflow"
		req.Params.Arguments = map[string]any{"name": "multi-collection-search", "inputs": map[string]any{"query": "limits"}}
		res, err := cl.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
		id := res.StructuredContent.(map[string]any)["executionId"].(string)
		q := mcplib.CallToolRequest{}
		q.Params.Name, q.Params.Arguments = "weft_execution", map[string]any{"id": id}
		require.Eventually(t, func() bool {
			r, err := cl.CallTool(ctx, q)
			return err == nil && !r.IsError
		}, 30*time.Second, 5*time.Millisecond, "no state of %s after 30s", id)
		samples = append(samples, time.Since(t0))
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	t.Logf("weft_run_workflow to first state: median %s, max %s (10 runs)", samples[len(samples)/2], samples[len(samples)-1])
}
