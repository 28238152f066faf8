package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/weftworks/weft/internal/ops/proc"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/workflows/dsl"
)

// ScaleConfig is one column of the scale-out table.
type ScaleConfig struct {
	Name       string
	SQLite     bool // weft dev --no-worker (SQLite) instead of the PostgreSQL cluster
	Workers    int
	WorkerArgs []string
}

// ScaleResult is what one configuration achieved.
type ScaleResult struct {
	Config      ScaleConfig
	Runs        int
	Wall        time.Duration
	RunsPerSec  float64
	StepsPerSec float64
	P50, P99    time.Duration
	IngestWall  time.Duration
	Failed      int
}

// ScaleOptions size the benchmark.
type ScaleOptions struct {
	Options
	Runs     int           // runs of the 10-step pipeline per configuration
	Latency  time.Duration // of each fake call
	Configs  []ScaleConfig
	Progress io.Writer
}

// DefaultScaleConfigs: the same batch with 1, 2 and 4 workers on PostgreSQL, tuned pollers, and
// the embedded SQLite server.
var DefaultScaleConfigs = []ScaleConfig{
	{Name: "SQLite (weft dev), 1 worker", SQLite: true, Workers: 1},
	{Name: "PostgreSQL, 1 worker", Workers: 1},
	{Name: "PostgreSQL, 2 workers", Workers: 2},
	{Name: "PostgreSQL, 4 workers", Workers: 4},
	{Name: "PostgreSQL, 2 workers, 8+8 pollers", Workers: 2, WorkerArgs: []string{"--workflow-pollers", "8", "--activity-pollers", "8"}},
}

// pipeline is 10 http steps in a row, each a call to a service that answers in Latency.
func pipeline(url string) string {
	var steps []string
	for i := range 10 {
		dep := ""
		if i > 0 {
			dep = fmt.Sprintf(`,"dependsOn":["s%d"]`, i-1)
		}
		steps = append(steps, fmt.Sprintf(`{"id":"s%d","tool":"http","inputs":{"url":"%s/step/%d"}%s}`, i, url, i, dep))
	}
	return `{"name":"pipeline","steps":[` + strings.Join(steps, ",") + `]}`
}

// ScaleOut runs the batch on every configuration, one after the other on this machine.
func ScaleOut(ctx context.Context, o ScaleOptions) ([]ScaleResult, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	fake := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(o.Latency)
		_, _ = io.WriteString(w, "ok "+r.URL.Path)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = fake.Serve(l) }()
	defer fake.Close()
	def, err := dsl.Load("pipeline.json", []byte(pipeline("http://"+l.Addr().String())))
	if err != nil {
		return nil, err
	}
	var out []ScaleResult
	for i, cfg := range o.Configs {
		logf(o.Progress, "scale-out: %s", cfg.Name)
		dir := filepath.Join(o.Dir, fmt.Sprintf("config-%d", i))
		addr, stop, err := startStack(ctx, o, cfg, dir)
		if err != nil {
			return out, fmt.Errorf("%s: %w", cfg.Name, err)
		}
		res, err := runBatch(ctx, addr, def, o.Runs)
		stop()
		if err != nil {
			return out, fmt.Errorf("%s: %w", cfg.Name, err)
		}
		res.Config = cfg
		out = append(out, *res)
	}
	return out, nil
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

func startStack(ctx context.Context, o ScaleOptions, cfg ScaleConfig, dir string) (string, func(), error) {
	env := map[string]string{"WEFT_HTTP_ALLOW": "127.0.0.1"}
	if !cfg.SQLite {
		co := o.Options
		co.Dir, co.Workers, co.WorkerArgs, co.ExtraEnv = dir, cfg.Workers, cfg.WorkerArgs, env
		c, err := Up(ctx, co)
		if err != nil {
			return "", nil, err
		}
		return c.Address("temporal", 7233), c.Down, nil
	}
	// the embedded stack: weft dev without its worker, and worker processes beside it
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	port, dbPort := 7233+o.Offset+50, 27017+o.Offset+50
	addr := "127.0.0.1:" + strconv.Itoa(port)
	base := append(os.Environ(), "WEFT_DEV_STATE="+filepath.Join(dir, "state.json"), "WEFT_HTTP_ALLOW=127.0.0.1")
	var procs []*proc.Proc
	start := func(name string, env []string, args ...string) error {
		p, err := proc.Start(name, o.Weft, filepath.Join(dir, name+".log"), env, args...)
		if err == nil {
			procs = append(procs, p)
		}
		return err
	}
	stop := func() {
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].Stop(syscall.SIGTERM, 15*time.Second)
		}
	}
	if err := start("dev", base, "dev", "--data-dir", filepath.Join(dir, "dev"), "--port", strconv.Itoa(port), "--db-port", strconv.Itoa(dbPort),
		"--ui-port", "0", "--console", "off", "--no-worker"); err != nil {
		return "", nil, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for exec.Command(o.Weft, "ping", "--temporal", addr).Run() != nil {
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("weft dev did not start: see %s", dir)
		}
		time.Sleep(300 * time.Millisecond)
	}
	for i := range cfg.Workers {
		args := append([]string{"worker", "--address", addr}, cfg.WorkerArgs...)
		base := append(base, "MONGODB_URI=mongodb://127.0.0.1:"+strconv.Itoa(dbPort)+"/")
		if err := start(fmt.Sprintf("worker-%d", i+1), base, args...); err != nil {
			stop()
			return "", nil, err
		}
	}
	return addr, stop, nil
}

func runBatch(ctx context.Context, addr string, def *dsl.Workflow, n int) (*ScaleResult, error) {
	c, err := weftclient.Dial(ctx, weftclient.Options{Address: addr, DialTimeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	// warm-up: one run, so the workers are polling and caches are filled
	if _, err := c.Run(ctx, def, weftclient.StartOptions{Source: "pipeline"}); err != nil {
		return nil, fmt.Errorf("warm-up run: %s", weftclient.Cause(err))
	}
	res := &ScaleResult{Runs: n}
	lat := make([]time.Duration, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	begin := time.Now()
	for i := range n {
		t0 := time.Now()
		run, err := c.Start(ctx, def, weftclient.StartOptions{Source: "pipeline"})
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := run.Get(ctx)
			mu.Lock()
			defer mu.Unlock()
			lat[i] = time.Since(t0)
			if err != nil {
				res.Failed++
			}
		}()
	}
	wg.Wait()
	res.Wall = time.Since(begin)
	res.RunsPerSec = float64(n) / res.Wall.Seconds()
	res.StepsPerSec = res.RunsPerSec * 10
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.P50, res.P99 = lat[n/2], lat[min(n-1, n*99/100)]

	// the ingest template on the sample corpus (48 documents, 4 at a time)
	w, err := weftclient.Template("batch-ingest")
	if err != nil {
		return nil, err
	}
	var docs []any
	for coll, ds := range templates.Corpus() {
		for _, d := range ds {
			docs = append(docs, map[string]any{"text": d.Text, "source": coll + "/" + d.Source})
		}
	}
	t0 := time.Now()
	if _, err := c.Run(ctx, w, weftclient.StartOptions{Source: "batch-ingest", Inputs: map[string]any{"docs": docs, "collection": "scaleout"}}); err != nil {
		return nil, fmt.Errorf("ingest: %s", weftclient.Cause(err))
	}
	res.IngestWall = time.Since(t0)
	return res, nil
}

// PrintScale writes the table.
func PrintScale(w io.Writer, rs []ScaleResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "configuration\truns\tfailed\twall\truns/s\tsteps/s\tp50\tp99\tingest 48 docs")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.1f\t%.0f\t%s\t%s\t%s\n", r.Config.Name, r.Runs, r.Failed, r.Wall.Round(100*time.Millisecond),
			r.RunsPerSec, r.StepsPerSec, r.P50.Round(10*time.Millisecond), r.P99.Round(10*time.Millisecond), r.IngestWall.Round(10*time.Millisecond))
	}
	_ = tw.Flush()
}
