package soak

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/weftworks/weft/internal/ops/proc"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcplib "github.com/mark3labs/mcp-go/mcp"
)

func dialTimeout(addr string, d time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, d)
}

const gatewayKey = "soak-gateway-key"

// gatewayLoad: clients call the gateway's durable tools concurrently for LoadDuration while the
// worker is killed once; every call must get an answer or a clear error, and the gateway must
// hold no more goroutines or file descriptors after the load than before it.
func (e *env) gatewayLoad(ctx context.Context) Row {
	row := Row{Scenario: fmt.Sprintf("MCP gateway: %d clients × %s, worker killed once", e.o.LoadClients, e.o.LoadDuration)}
	begin := time.Now()
	e.logf("gateway load")
	port, err := freePort()
	if err == nil {
		var mport int
		if mport, err = freePort(); err == nil {
			var g *proc.Proc
			g, err = e.start("gateway", []string{"MONGODB_URI=mongodb://" + e.proxy.addr() + "/", "WEFT_MCP_KEY=" + gatewayKey},
				"mcp", "--transport", "http", "--port", strconv.Itoa(port), "--metrics", "127.0.0.1:"+strconv.Itoa(mport), "--wait", "60s")
			if err == nil {
				defer g.Stop(syscall.SIGTERM, 20*time.Second)
				e.loadOn(ctx, &row, "http://127.0.0.1:"+strconv.Itoa(port)+"/mcp", "http://127.0.0.1:"+strconv.Itoa(mport)+"/metrics")
			}
		}
	}
	if err != nil {
		row.check("gateway", false, "%v", err)
	}
	row.Took = time.Since(begin)
	return row
}

type loadStats struct {
	mu       sync.Mutex
	ok       int
	toolErr  map[string]int
	transErr map[string]int
	unclear  int
	slowest  time.Duration
}

func (s *loadStats) add(d time.Duration, kind, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slowest = max(s.slowest, d)
	msg = firstLine(msg)
	switch kind {
	case "ok":
		s.ok++
	case "tool":
		s.toolErr[msg]++
	default:
		s.transErr[msg]++
	}
	if kind != "ok" && strings.TrimSpace(msg) == "" {
		s.unclear++
	}
}

// mcpClient is a client that, like a well-behaved one, closes its connections when it is done.
type mcpClient struct {
	*client.Client
	tr *http.Transport
}

func (c *mcpClient) Close() {
	_ = c.Client.Close()
	c.tr.CloseIdleConnections()
}

func newClient(ctx context.Context, url string) (*mcpClient, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: 2}
	mc, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + gatewayKey}),
		transport.WithHTTPBasicClient(&http.Client{Transport: tr}))
	if err != nil {
		return nil, err
	}
	c := &mcpClient{Client: mc, tr: tr}
	if err := mc.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	init := mcplib.InitializeRequest{}
	init.Params.ProtocolVersion = mcplib.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcplib.Implementation{Name: "soak", Version: "1"}
	if _, err := mc.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (e *env) loadOn(ctx context.Context, row *Row, url, metrics string) {
	// wait for the gateway, then warm it up before measuring its resting state
	var warm *mcpClient
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		c, err := newClient(ctx, url)
		if err == nil {
			warm = c
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if warm == nil {
		row.check("gateway up", false, "no answer at %s in 60 s", url)
		return
	}
	call := func(c *mcpClient, i int) (string, string) {
		req := mcplib.CallToolRequest{}
		if i%4 == 3 {
			req.Params.Name, req.Params.Arguments = "wf_multi_collection_search", map[string]any{"query": fmt.Sprintf("load %d", i), "limit": 2}
		} else {
			req.Params.Name, req.Params.Arguments = "weft_search", map[string]any{"query": fmt.Sprintf("load query %d", i), "collection": "soak", "limit": 2}
		}
		cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		res, err := c.CallTool(cctx, req)
		if err != nil {
			return "transport", err.Error()
		}
		if res.IsError {
			var b strings.Builder
			for _, ct := range res.Content {
				if tc, ok := ct.(mcplib.TextContent); ok {
					b.WriteString(tc.Text)
				}
			}
			return "tool", b.String()
		}
		return "ok", ""
	}
	warm.Close()
	// A first burst with every client fills the gateway's pools (Temporal, the store), so what is
	// measured after the load is growth, not the pools reaching their working size.
	burst := func(d time.Duration, stats *loadStats) *sync.WaitGroup {
		stop := time.Now().Add(d)
		var wg sync.WaitGroup
		for n := range e.o.LoadClients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := newClient(ctx, url)
				if err != nil {
					stats.add(0, "transport", "connect: "+err.Error())
					return
				}
				defer c.Close()
				for i := n * 100000; time.Now().Before(stop) && ctx.Err() == nil; i++ {
					t0 := time.Now()
					kind, msg := call(c, i)
					stats.add(time.Since(t0), kind, msg)
				}
			}()
		}
		return &wg
	}
	burst(min(3*time.Second, e.o.LoadDuration/4), &loadStats{toolErr: map[string]int{}, transErr: map[string]int{}}).Wait()
	time.Sleep(3 * time.Second)
	g0, gerr := metricValue(ctx, metrics, "go_goroutines")
	f0, ferr := metricValue(ctx, metrics, "process_open_fds")

	stats := &loadStats{toolErr: map[string]int{}, transErr: map[string]int{}}
	wg := burst(e.o.LoadDuration, stats)
	time.Sleep(e.o.LoadDuration / 2)
	_, kerr := e.killWorker()
	wg.Wait()
	row.check("worker killed mid-load and replaced", kerr == nil, "at %s%s", e.o.LoadDuration/2, errText(kerr))
	total := stats.ok + sum(stats.toolErr) + sum(stats.transErr)
	row.Started, row.Completed, row.Failed = total, stats.ok, total-stats.ok
	row.check("every call answered", stats.unclear == 0 && stats.slowest < 90*time.Second,
		"%d ok, %d clear errors, %d without a message; slowest %s%s", stats.ok, total-stats.ok-stats.unclear, stats.unclear, stats.slowest.Round(10*time.Millisecond), topErrors(stats))
	time.Sleep(3 * time.Second) // closed connections and finished waits are released
	g1, gerr1 := metricValue(ctx, metrics, "go_goroutines")
	f1, ferr1 := metricValue(ctx, metrics, "process_open_fds")
	if gerr != nil || gerr1 != nil || ferr != nil || ferr1 != nil {
		row.check("no leak", false, "metrics unreadable: %v %v %v %v", gerr, gerr1, ferr, ferr1)
		return
	}
	row.check("no goroutine growth", g1 <= g0*1.1+20, "%.0f before, %.0f after", g0, g1)
	row.check("no file-descriptor growth", f1 <= f0*1.1+10, "%.0f before, %.0f after", f0, f1)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func topErrors(s *loadStats) string {
	var parts []string
	for msg, n := range s.toolErr {
		parts = append(parts, fmt.Sprintf("%d× %q", n, msg))
	}
	for msg, n := range s.transErr {
		parts = append(parts, fmt.Sprintf("%d× %q", n, msg))
	}
	if len(parts) == 0 {
		return ""
	}
	if len(parts) > 3 {
		parts = parts[:3]
	}
	return "; errors: " + strings.Join(parts, ", ")
}
