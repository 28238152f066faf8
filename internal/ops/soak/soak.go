package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/weftworks/weft/internal/ops/proc"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows/dsl"
)

// Options size the campaign.
type Options struct {
	// Weft is the weft binary to start (bin/weft).
	Weft string
	// Dir holds the processes' data and logs.
	Dir string
	// Runs of the built-in templates in the worker-kill scenario (≥ 50 in the full campaign),
	// and Kills of the worker among them.
	Runs, Kills int
	// Outage is how long the knowledge store is unreachable (30 s in the full campaign).
	Outage time.Duration
	// LoadClients call the MCP gateway concurrently for LoadDuration.
	LoadClients  int
	LoadDuration time.Duration
	// Seed makes the kill moments repeatable.
	Seed uint64
	// Progress gets a line per phase (nil: none).
	Progress io.Writer
}

// Full is the `make soak` campaign; Short is the one `make test` runs.
var (
	Full  = Options{Runs: 50, Kills: 5, Outage: 30 * time.Second, LoadClients: 50, LoadDuration: 60 * time.Second, Seed: 1}
	Short = Options{Runs: 10, Kills: 2, Outage: 4 * time.Second, LoadClients: 10, LoadDuration: 6 * time.Second, Seed: 1}
)

// Row is one scenario's line of the table.
type Row struct {
	Scenario  string
	Started   int
	Completed int
	Failed    int
	Checks    []Check
	Took      time.Duration
}

// Check is one thing a scenario verifies.
type Check struct {
	Name   string
	OK     bool
	Detail string
}

// Passed reports whether every check of the row passed.
func (r Row) Passed() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return len(r.Checks) > 0
}

func (r *Row) check(name string, ok bool, format string, args ...any) {
	r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
}

// Print writes the table.
func Print(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tstarted\tcompleted\tfailed\ttook\tresult\tchecks")
	for _, r := range rows {
		res := "PASS"
		if !r.Passed() {
			res = "FAIL"
		}
		for i, c := range r.Checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			line := fmt.Sprintf("%s %s: %s", mark, c.Name, c.Detail)
			if i == 0 {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\n", r.Scenario, r.Started, r.Completed, r.Failed, r.Took.Round(100*time.Millisecond), res, line)
			} else {
				fmt.Fprintf(tw, "\t\t\t\t\t\t%s\n", line)
			}
		}
	}
	_ = tw.Flush()
}

type env struct {
	o            Options
	dir          string
	temporalPort int
	dbPort       int
	stack        *proc.Proc
	mu           sync.Mutex
	worker       *proc.Proc
	workerN      int
	proxy        *storeProxy
	prov         *provider
	client       *weftclient.Client
	store        *mongo.Client
	rng          *rand.Rand
}

func (e *env) logf(format string, args ...any) {
	if e.o.Progress != nil {
		fmt.Fprintf(e.o.Progress, "soak: "+format+"\n", args...)
	}
}

func (e *env) baseEnv() []string {
	return []string{
		"WEFT_DEV_STATE=" + filepath.Join(e.dir, "dev-state.json"), // never find another weft dev
		"TEMPORAL_ADDRESS=127.0.0.1:" + strconv.Itoa(e.temporalPort),
		"OPENAI_BASE_URL=" + e.prov.url, "OPENAI_API_KEY=soak",
		"WEFT_EMBEDDING_MODEL=text-embedding-3-small",
	}
}

// Run runs every scenario and returns the table's rows. err is set when the stack itself could
// not be started.
func Run(ctx context.Context, o Options) ([]Row, error) {
	if o.Weft == "" || o.Dir == "" {
		return nil, errors.New("soak: Options.Weft (the weft binary) and Options.Dir are required")
	}
	e := &env{o: o, dir: o.Dir, rng: rand.New(rand.NewPCG(o.Seed, o.Seed+1))}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	var err error
	if e.temporalPort, err = freePort(); err != nil {
		return nil, err
	}
	if e.dbPort, err = freePort(); err != nil {
		return nil, err
	}
	if e.prov, err = newProvider(30 * time.Millisecond); err != nil {
		return nil, err
	}
	defer func() { _ = e.prov.srv.Close() }()
	if e.proxy, err = newStoreProxy("127.0.0.1:" + strconv.Itoa(e.dbPort)); err != nil {
		return nil, err
	}
	defer e.proxy.close()
	if err := e.startStack(ctx); err != nil {
		return nil, err
	}
	defer func() { e.stack.Stop(syscall.SIGTERM, 20*time.Second) }()
	if e.client, err = weftclient.Dial(ctx, weftclient.Options{Address: "127.0.0.1:" + strconv.Itoa(e.temporalPort), DialTimeout: 30 * time.Second}); err != nil {
		return nil, err
	}
	defer e.client.Close()
	if e.store, err = mongo.Connect(options.Client().ApplyURI("mongodb://127.0.0.1:" + strconv.Itoa(e.dbPort) + "/")); err != nil {
		return nil, err
	}
	defer func() { _ = e.store.Disconnect(context.Background()) }()
	if err := e.startWorker(); err != nil {
		return nil, err
	}
	defer func() { e.currentWorker().Stop(syscall.SIGTERM, 20*time.Second) }()

	var rows []Row
	for _, sc := range []func(context.Context) Row{e.workerKills, e.serverRestarts, e.storeOutage, e.providerFaults, e.gatewayLoad} {
		if ctx.Err() != nil {
			break
		}
		rows = append(rows, sc(ctx))
	}
	return rows, ctx.Err()
}

func (e *env) startStack(ctx context.Context) error {
	p, err := e.start("stack", nil, "dev", "--data-dir", filepath.Join(e.dir, "dev"), "--port", strconv.Itoa(e.temporalPort),
		"--db-port", strconv.Itoa(e.dbPort), "--ui-port", "0", "--console", "off", "--no-worker")
	if err != nil {
		return err
	}
	e.stack = p
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if !p.Alive() {
			return fmt.Errorf("weft dev exited at start: see %s", filepath.Join(e.dir, "stack.log"))
		}
		h := weftclient.CheckHealth(ctx, weftclient.HealthCheck{Dial: &weftclient.Options{Address: "127.0.0.1:" + strconv.Itoa(e.temporalPort), DialTimeout: time.Second},
			Store: func(context.Context) error {
				if !portOpen(e.dbPort) {
					return fmt.Errorf("nothing listens on port %d yet", e.dbPort)
				}
				return nil
			}})
		if h.Err() == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("weft dev did not come up in 90 s: see %s", filepath.Join(e.dir, "stack.log"))
}

func (e *env) startWorker() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.workerN++
	p, err := e.start(fmt.Sprintf("worker-%d", e.workerN), []string{"MONGODB_URI=mongodb://" + e.proxy.addr() + "/"}, "worker")
	if err != nil {
		return err
	}
	e.worker = p
	return nil
}

func (e *env) currentWorker() *proc.Proc {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.worker
}

// killWorker kills the worker with SIGKILL and starts a new one at once.
func (e *env) killWorker() (time.Time, error) {
	w := e.currentWorker()
	at := time.Now()
	w.Stop(syscall.SIGKILL, 20*time.Second)
	return at, e.startWorker()
}

// ---- runs ----

type started struct {
	id     string
	kind   string
	review bool
}

const fanoutFile = `{"name":"fanout","inputs":{"items":{"type":"array","required":true}},"steps":[
  {"id":"each","tool":"embed","forEach":"{{ inputs.items }}","concurrency":8,"inputs":{"text":"{{ item }}"}}],
  "output":"{{ each.output.count }}"}`

func (e *env) launch(ctx context.Context, kind string, tag string) (started, error) {
	var (
		w      *dsl.Workflow
		err    error
		inputs map[string]any
	)
	load := func(name string) { w, err = weftclient.Template(name) }
	switch kind {
	case "batch-ingest":
		load(kind)
		docs := []any{}
		for j := range 6 {
			docs = append(docs, map[string]any{"source": fmt.Sprintf("%s/doc-%d.md", tag, j),
				"text": strings.Repeat(fmt.Sprintf("%s document %d explains retries, reviews and durable steps. ", tag, j), 12)})
		}
		inputs = map[string]any{"docs": docs, "collection": "soak", "chunkSize": 300.0}
	case "smart-ingest":
		load(kind)
		inputs = map[string]any{"text": tag + ": webhook deliveries are retried with backoff for three days.", "source": tag + ".md"}
	case "multi-collection-search":
		load(kind)
		inputs = map[string]any{"query": tag + " what happens on a rate limit", "limit": 3.0}
	case "approval-demo":
		load(kind)
		inputs = map[string]any{"version": tag}
	case "fanout":
		w, err = dsl.Load("fanout.json", []byte(fanoutFile))
		items := []any{}
		for j := range 100 {
			items = append(items, fmt.Sprintf("%s item %d", tag, j))
		}
		inputs = map[string]any{"items": items}
	}
	if err != nil {
		return started{}, err
	}
	run, err := e.client.Start(ctx, w, weftclient.StartOptions{Source: kind, Inputs: inputs, ID: "soak-" + tag})
	if err != nil {
		return started{}, fmt.Errorf("starting %s: %w", kind, err)
	}
	return started{id: run.ID, kind: kind, review: kind == "approval-demo"}, nil
}

// approveAll decides the runs' reviews as they come, until ctx ends or all are decided.
func (e *env) approveAll(ctx context.Context, runs []started) (decided int, err error) {
	for _, r := range runs {
		if !r.review {
			continue
		}
		deadline := time.Now().Add(3 * time.Minute)
		for {
			if _, err = e.client.Review(ctx, r.id, weftclient.Decision{Decision: "approve", Reviewer: "soak"}); err == nil {
				decided++
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return decided, fmt.Errorf("%s: %w", r.id, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	return decided, nil
}

// wait collects the results; completed counts the runs that completed.
func (e *env) wait(ctx context.Context, runs []started, within time.Duration) (completed, failed int, problems []string) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for _, r := range runs {
		_, err := e.client.Result(ctx, r.id)
		switch {
		case err == nil:
			completed++
		default:
			failed++
			problems = append(problems, fmt.Sprintf("%s: %s", r.id, weftclient.Cause(err)))
		}
	}
	return completed, failed, problems
}

// duplicates counts chunks stored more than once (same source and chunk index) in every collection
// of the demo database.
func (e *env) duplicates(ctx context.Context) (dups, total int, err error) {
	db := e.store.Database("weft_demo")
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return 0, 0, err
	}
	for _, n := range names {
		if strings.HasPrefix(n, "weft_") {
			continue
		}
		cur, err := db.Collection(n).Aggregate(ctx, mongo.Pipeline{
			{{Key: "$group", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "s", Value: "$source"}, {Key: "i", Value: "$chunkIndex"}}}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		})
		if err != nil {
			return 0, 0, err
		}
		var groups []struct {
			N int `bson:"n"`
		}
		if err := cur.All(ctx, &groups); err != nil {
			return 0, 0, err
		}
		for _, g := range groups {
			total += g.N
			if g.N > 1 {
				dups += g.N - 1
			}
		}
	}
	return dups, total, nil
}

// activityAudit reads the runs' histories: activities scheduled twice (never allowed), calls that
// completed on their first attempt but were answered by the provider more than once (a completed
// step that ran again), the calls retried and when each retry started.
type audit struct {
	scheduledTwice int
	ranAgain       int
	firstAttempt   int
	retried        int
	retryStarts    []time.Time
	// cacheWarned counts steps that embedded without the embedding cache because the store
	// failed: an outage the cache felt instead of a write.
	cacheWarned int
	// storeCalls are the first attempts of the calls that reach the store (ingest, embed with
	// its cache), from when they started to when they ended: a call that spans an outage waited
	// through it (the database driver holds an operation until its server is back).
	storeCalls []span
}

type span struct{ from, to time.Time }

// overlapping counts the spans that were open at some moment between from and to.
func overlapping(spans []span, from, to time.Time) int {
	n := 0
	for _, s := range spans {
		if s.from.Before(to) && s.to.After(from) {
			n++
		}
	}
	return n
}

func (e *env) audit(ctx context.Context, runs []started) (audit, error) {
	var a audit
	dc := converter.GetDefaultDataConverter()
	for _, r := range runs {
		it := e.client.Temporal().GetWorkflowHistory(ctx, r.id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		ids := map[string]int{}
		text := map[int64][]string{}
		attempt := map[int64]int32{}
		store := map[int64]bool{}          // scheduled event id: a call that reaches the store
		startedAt := map[int64]time.Time{} // scheduled event id: when its last attempt started
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return a, fmt.Errorf("history of %s: %w", r.id, err)
			}
			if s := ev.GetActivityTaskScheduledEventAttributes(); s != nil {
				ids[s.GetActivityId()]++
				switch strings.TrimSuffix(s.GetActivityType().GetName(), ".batch") {
				case "ingest", "embed":
					store[ev.GetEventId()] = true
				}
				var in struct {
					Text  string `json:"text"`
					Items []struct {
						Text string `json:"text"`
					} `json:"items"` // a batch of a forEach's embeds (embed.batch)
				}
				switch name := s.GetActivityType().GetName(); {
				case (name == "embed" || name == "embed.batch") && len(s.GetInput().GetPayloads()) > 0 &&
					dc.FromPayload(s.GetInput().GetPayloads()[0], &in) == nil:
					texts := []string{in.Text}
					if name == "embed.batch" {
						texts = texts[:0]
						for _, it := range in.Items {
							texts = append(texts, it.Text)
						}
					}
					text[ev.GetEventId()] = texts
				}
			}
			if s := ev.GetActivityTaskStartedEventAttributes(); s != nil {
				attempt[s.GetScheduledEventId()] = s.GetAttempt()
				startedAt[s.GetScheduledEventId()] = ev.GetEventTime().AsTime()
				if s.GetAttempt() > 1 {
					a.retried++
					a.retryStarts = append(a.retryStarts, ev.GetEventTime().AsTime())
				}
			}
			var closed int64 // the scheduled event id of an attempt that ended here
			if c := ev.GetActivityTaskCompletedEventAttributes(); c != nil {
				closed = c.GetScheduledEventId()
			} else if f := ev.GetActivityTaskFailedEventAttributes(); f != nil {
				closed = f.GetScheduledEventId()
			} else if t := ev.GetActivityTaskTimedOutEventAttributes(); t != nil {
				closed = t.GetScheduledEventId()
			}
			if closed != 0 && store[closed] && attempt[closed] == 1 {
				a.storeCalls = append(a.storeCalls, span{startedAt[closed], ev.GetEventTime().AsTime()})
			}
			if c := ev.GetActivityTaskCompletedEventAttributes(); c != nil && attempt[c.GetScheduledEventId()] == 1 {
				for _, t := range text[c.GetScheduledEventId()] {
					if t == "" {
						continue
					}
					a.firstAttempt++
					if e.prov.count(t) > 1 {
						a.ranAgain++
					}
				}
			}
		}
		for _, n := range ids {
			if n > 1 {
				a.scheduledTwice++
			}
		}
		if st, err := e.client.State(ctx, r.id); err == nil {
			for _, step := range st.Steps {
				for _, w := range step.Warnings {
					if strings.Contains(w, "embedding cache") {
						a.cacheWarned++
					}
				}
			}
		}
	}
	return a, nil
}

// recovery: for each retried call, the time from the kill before it to its new attempt.
func recovery(kills []time.Time, retries []time.Time) []time.Duration {
	var out []time.Duration
	for _, r := range retries {
		var last time.Time
		for _, k := range kills {
			if k.Before(r) && k.After(last) {
				last = k
			}
		}
		if !last.IsZero() {
			out = append(out, r.Sub(last))
		}
	}
	return out
}

func portOpen(port int) bool {
	c, err := dialTimeout("127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// ---- scenarios ----

func (e *env) workerKills(ctx context.Context) Row {
	row := Row{Scenario: fmt.Sprintf("worker kill -9 ×%d", e.o.Kills)}
	begin := time.Now()
	kinds := []string{"batch-ingest", "smart-ingest", "multi-collection-search", "fanout", "approval-demo"}
	e.logf("worker kills: %d runs, %d kills", e.o.Runs, e.o.Kills)
	var runs []started
	for i := range e.o.Runs {
		r, err := e.launch(ctx, kinds[i%len(kinds)], fmt.Sprintf("kill-%d-%s", i, kinds[i%len(kinds)]))
		if err != nil {
			row.check("start", false, "%v", err)
			return row
		}
		runs = append(runs, r)
	}
	row.Started = len(runs)
	var kills []time.Time
	for range e.o.Kills {
		time.Sleep(time.Duration(700+e.rng.IntN(1600)) * time.Millisecond)
		at, err := e.killWorker()
		if err != nil {
			row.check("restart worker", false, "%v", err)
			return row
		}
		kills = append(kills, at)
	}
	decided, err := e.approveAll(ctx, runs)
	row.check("reviews decided after the kills", err == nil, "%d decided%s", decided, errText(err))
	row.Completed, row.Failed, _ = e.wait(ctx, runs, 5*time.Minute)
	row.check("every run completed", row.Completed == row.Started, "%d/%d", row.Completed, row.Started)
	e.storeChecks(ctx, &row)
	a, err := e.audit(ctx, runs)
	if err != nil {
		row.check("history audit", false, "%v", err)
	} else {
		row.check("no activity scheduled twice", a.scheduledTwice == 0, "%d", a.scheduledTwice)
		row.check("no completed call ran again", a.ranAgain == 0, "%d of %d first-attempt embed calls answered twice", a.ranAgain, a.firstAttempt)
		p50, mx := durations(recovery(kills, a.retryStarts))
		row.check("recovery after a kill", len(kills) == 0 || mx < 45*time.Second, "%d calls resumed, p50 %s, max %s", a.retried, p50.Round(100*time.Millisecond), mx.Round(100*time.Millisecond))
	}
	row.Took = time.Since(begin)
	return row
}

func (e *env) storeChecks(ctx context.Context, row *Row) {
	dups, total, err := e.duplicates(ctx)
	if err != nil {
		row.check("no chunk stored twice", false, "%v", err)
		return
	}
	row.check("no chunk stored twice", dups == 0, "%d duplicates among %d chunks", dups, total)
}

func (e *env) serverRestarts(ctx context.Context) Row {
	row := Row{Scenario: "Temporal server SIGTERM + SIGKILL"}
	begin := time.Now()
	e.logf("server restarts")
	var runs []started
	for i, kind := range []string{"approval-demo", "fanout", "batch-ingest", "approval-demo", "fanout", "approval-demo", "batch-ingest"} {
		r, err := e.launch(ctx, kind, fmt.Sprintf("server-%d-%s", i, kind))
		if err != nil {
			row.check("start", false, "%v", err)
			return row
		}
		runs = append(runs, r)
	}
	row.Started = len(runs)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		time.Sleep(1500 * time.Millisecond)
		t0 := time.Now()
		e.stack.Stop(sig, 20*time.Second)
		if err := e.startStack(ctx); err != nil {
			row.check("restart "+sig.String(), false, "%v", err)
			return row
		}
		row.check("restarted after "+sig.String(), true, "up again in %s", time.Since(t0).Round(100*time.Millisecond))
	}
	pending := 0
	for _, r := range runs {
		if !r.review {
			continue
		}
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if p, err := e.client.Pending(ctx, r.id); err == nil && len(p) == 1 {
				pending++
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	row.check("reviews still pending after the restarts", pending == 3, "%d/3", pending)
	decided, err := e.approveAll(ctx, runs)
	row.check("and decidable", err == nil && decided == 3, "%d decided%s", decided, errText(err))
	row.Completed, row.Failed, _ = e.wait(ctx, runs, 5*time.Minute)
	row.check("every run completed", row.Completed == row.Started, "%d/%d", row.Completed, row.Started)
	e.storeChecks(ctx, &row)
	row.Took = time.Since(begin)
	return row
}

func (e *env) storeOutage(ctx context.Context) Row {
	row := Row{Scenario: fmt.Sprintf("knowledge store unreachable %s", e.o.Outage)}
	begin := time.Now()
	e.logf("store outage of %s", e.o.Outage)
	var runs []started
	for i := range 5 {
		r, err := e.launch(ctx, "batch-ingest", fmt.Sprintf("outage-%d", i))
		if err != nil {
			row.check("start", false, "%v", err)
			return row
		}
		runs = append(runs, r)
	}
	row.Started = len(runs)
	// The store goes away as soon as the runs are started, and comes back only once the outage
	// has lasted its length and a call that reaches the store has run against it: however fast
	// or loaded the machine is, the outage cannot end before the runs' calls meet it (a fixed
	// delay let an idle machine finish first, and a loaded one start only after it).
	e.proxy.block()
	blocked := time.Now()
	met, metErr := e.storeCallDuring(ctx, runs, blocked, e.o.Outage, time.Minute)
	e.proxy.unblock()
	back := time.Now()
	row.check("a store call ran against the outage", metErr == nil, "%s%s", met, errText(metErr))
	row.Completed, row.Failed, _ = e.wait(ctx, runs, 5*time.Minute)
	row.check("every run completed", row.Completed == row.Started, "%d/%d, %s after the store came back", row.Completed, row.Started, time.Since(back).Round(100*time.Millisecond))
	e.storeChecks(ctx, &row)
	a, err := e.audit(ctx, runs)
	// A call in flight when the store went away fails and is retried, or waits in the database
	// driver until the store is back; the embedding cache's lookup, which comes first, may feel
	// it instead and embed without the cache.
	waited := overlapping(a.storeCalls, blocked, back)
	row.check("the outage was felt and survived", err == nil && a.retried+a.cacheWarned+waited > 0,
		"%d calls retried, %d waited through it, %d embedded without the cache%s", a.retried, waited, a.cacheWarned, errText(err))
	row.Took = time.Since(begin)
	return row
}

// storeCallDuring holds the store outage that began at blocked until it has lasted at least
// outage and one of runs' calls that reach the store (ingest, embed, their batches) has run
// against it: an attempt still running when the outage is half a second old (its connections
// were cut or refused; the database driver holds its operation, or it fails) or an attempt
// retrying after a failure. It polls the runs' pending activities, and gives up after limit
// with an error naming what it saw. met says which call met the outage, and when.
func (e *env) storeCallDuring(ctx context.Context, runs []started, blocked time.Time, outage, limit time.Duration) (met string, err error) {
	settle := min(500*time.Millisecond, outage)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		since := time.Since(blocked)
		if met == "" && since >= settle {
			for _, r := range runs {
				desc, derr := e.client.Temporal().DescribeWorkflowExecution(ctx, r.id, "")
				if derr != nil {
					err = fmt.Errorf("describe %s: %w", r.id, derr)
					continue
				}
				for _, pa := range desc.GetPendingActivities() {
					switch strings.TrimSuffix(pa.GetActivityType().GetName(), ".batch") {
					case "ingest", "embed":
					default:
						continue
					}
					if pa.GetState() == enums.PENDING_ACTIVITY_STATE_STARTED || pa.GetAttempt() > 1 {
						met = fmt.Sprintf("%s of %s (attempt %d) %s into it", pa.GetActivityType().GetName(), r.id, pa.GetAttempt(), since.Round(100*time.Millisecond))
						break
					}
				}
				if met != "" {
					err = nil
					break
				}
			}
		}
		if met != "" && since >= outage {
			return met, nil
		}
		if since >= limit {
			if err == nil {
				err = fmt.Errorf("no call that reaches the store (ingest, embed) ran in %s of outage: the runs' calls all ended before it or never started", limit)
			}
			return "", err
		}
		select {
		case <-ctx.Done():
			return met, ctx.Err()
		case <-tick.C:
		}
	}
}

func (e *env) providerFaults(ctx context.Context) Row {
	row := Row{Scenario: "provider faults"}
	begin := time.Now()
	e.logf("provider faults")
	type tc struct {
		fault     Fault
		retryable bool
	}
	cases := []tc{{Fault429, true}, {Fault500, true}, {FaultTimeout, true}, {FaultReset, true}, {FaultMalformed, true}, {Fault400, false}}
	runs := make([]*weftclient.Run, len(cases))
	for i, c := range cases {
		prefix := fmt.Sprintf("fault-%d", i)
		e.prov.script(prefix, c.fault)
		w, err := dsl.Load("fault.json", []byte(`{"name":"fault","steps":[
		  {"id":"vec","tool":"embed","timeout":"3s","inputs":{"text":"`+prefix+` text"}}]}`))
		if err == nil {
			runs[i], err = e.client.Start(ctx, w, weftclient.StartOptions{Source: "fault", ID: "soak-" + prefix})
		}
		if err != nil {
			row.check(string(c.fault), false, "start: %v", err)
			return row
		}
		row.Started++
	}
	for i, c := range cases {
		t0 := time.Now()
		_, err := runs[i].Get(ctx)
		st, serr := e.client.State(ctx, runs[i].ID)
		attempts := int32(0)
		if serr == nil && len(st.Steps) > 0 {
			attempts = st.Steps[0].Attempts
		}
		if err == nil {
			row.Completed++
		} else {
			row.Failed++
		}
		if c.retryable {
			row.check(string(c.fault), err == nil && attempts == 2, "completed after %d attempts%s", attempts, errText(err))
		} else {
			cause := weftclient.Cause(err)
			ok := err != nil && attempts == 1 && strings.Contains(cause, "vec") && strings.Contains(cause, "400") && strings.Contains(cause, "maximum context length")
			row.check(string(c.fault), ok, "failed at once (%d attempt, %s): %s", attempts, time.Since(t0).Round(10*time.Millisecond), firstLine(cause))
		}
	}
	row.Took = time.Since(begin)
	return row
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return " (" + firstLine(weftclient.Cause(err)) + ")"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
