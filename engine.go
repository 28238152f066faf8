package weft

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/worker"
	"github.com/weftworks/weft/workflows/dsl"
)

// Options say where Temporal is and who runs the steps.
type Options struct {
	// Client says where Temporal is (zero: TEMPORAL_ADDRESS, else 127.0.0.1:7233, as `weft dev`
	// prints).
	Client client.Options
	// Temporal is a connection to use instead of dialling (Close leaves it open).
	Temporal tclient.Client
	// TaskQueue the runs go to. Default: WEFT_TASK_QUEUE with Remote; else the runs that use
	// this program's Go tools go to a queue of its own ("weft-go-" and the program's name), so
	// that only workers that declare them run their steps (while the program is away, such a
	// run's state says it waits for the program), and the runs that use none go to the shared
	// queue (WEFT_TASK_QUEUE, else "weft") when a worker polls it, so that they go on after the
	// program exits. Client.TaskQueue, when set, is the queue of every run, as TaskQueue is.
	TaskQueue string
	// Remote starts no worker: runs go to the workers polling TaskQueue already (`weft dev`'s,
	// `weft worker`), which know weft's built-in tools but not the Go tools of this program.
	Remote bool
	// Config is the in-process worker's providers (nil: activities.ConfigFromEnv, the
	// environment `weft worker` reads: OPENAI_BASE_URL, OPENAI_API_KEY, MONGODB_URI, ...).
	Config *activities.Config
}

// Engine runs workflows: a connection to Temporal and, unless Remote, a worker in this process
// that runs the interpreter, weft's tools and the program's Go tools.
type Engine struct {
	c      *client.Client
	worker sdkworker.Worker
	cfg    activities.Config // the store and providers this process reads (Ingest)
	// program is this program's name when its runs go to its own queue by default (neither
	// TaskQueue nor Remote set): then runs that use none of its Go tools go to shared, the queue
	// `weft dev`'s and `weft worker`'s workers poll, so that they do not wait for the program
	// after it exits.
	program, shared string
}

// Start connects to Temporal and starts the worker.
func Start(ctx context.Context, o Options) (*Engine, error) {
	queue, program := o.TaskQueue, ""
	if queue == "" && !o.Remote && o.Client.TaskQueue == "" {
		program = dsl.Slug(strings.TrimSuffix(filepath.Base(os.Args[0]), ".test"), "program")
		queue = "weft-go-" + program
	}
	var c *client.Client
	if o.Temporal != nil {
		c = client.New(o.Temporal, queue)
	} else {
		co := o.Client
		if co.TaskQueue == "" {
			co.TaskQueue = queue
		}
		var err error
		if c, err = client.Dial(ctx, co); err != nil {
			return nil, err
		}
	}
	e := &Engine{c: c, cfg: activities.ConfigFromEnv(os.Getenv), program: program, shared: os.Getenv(client.EnvTaskQueue)}
	if o.Config != nil {
		e.cfg = *o.Config
	}
	if e.shared == "" {
		e.shared = runwire.TaskQueue
	}
	if o.Remote {
		if names := toolNames(); len(names) > 0 {
			e.Close()
			return nil, fmt.Errorf("the Go tools %s run only on workers of this program: start the Engine without Remote (it runs a worker on its own task queue)", strings.Join(names, ", "))
		}
		return e, nil
	}
	w, err := worker.New(c.Temporal(), worker.Options{TaskQueue: c.TaskQueue(), Config: e.cfg, Handlers: handlers()})
	if err != nil {
		e.Close()
		return nil, err
	}
	if err := w.Start(); err != nil {
		e.Close()
		return nil, fmt.Errorf("starting the worker on task queue %s: %w", c.TaskQueue(), err)
	}
	e.worker = w
	return e, nil
}

// Client is the weft client underneath (runs, state, schedules, chat).
func (e *Engine) Client() *client.Client { return e.c }

// Close stops the worker and closes the connection it opened.
func (e *Engine) Close() {
	if e.worker != nil {
		e.worker.Stop()
	}
	e.c.Close()
}

// Inputs are a run's inputs by name (a struct with json tags does as well).
type Inputs map[string]any

// Event is one thing that happened in a run: its Type is one of the constants of package events
// (events.StepStarted, events.LLMDelta, events.ToolCallFinished, events.RunCompleted, ...). An
// events.LLMDelta is model text: Text goes at Offset in attempt Attempt of the call Activity; one
// with Restarted set starts the call's text over (its worker died mid-answer and the call runs
// again, or a repair): discard what was shown of that call, the new attempt's text replaces it.
type Event = events.Event

// Decision answers a review gate (client.Decision): Decision is approve, edit or reject.
type Decision = client.Decision

// Usage is what a run used, all its steps together: the one ledger every surface shows
// (client.Usage: model and embedding tokens apart and together, cost, calls).
type Usage = client.Usage

// Result is a finished run with its output decoded into T.
type Result[T any] struct {
	ID       string
	Output   T
	Usage    Usage
	Duration time.Duration
	// Raw is the run's result as the interpreter returned it (steps with their states).
	Raw *weftv1.RunResult
}

// Execution is a started run.
type Execution struct {
	ID string
	e  *Engine
	r  *client.Run
}

// Start starts a run of wf with inputs (Inputs, a struct or nil) and returns at once.
func (e *Engine) Start(ctx context.Context, wf *Workflow, inputs any) (*Execution, error) {
	compiled, err := wf.Compile()
	if err != nil {
		return nil, err
	}
	in, err := asMap(inputs)
	if err != nil {
		return nil, fmt.Errorf("inputs of %s: %w", wf.name, err)
	}
	so := client.StartOptions{Inputs: in, Source: "go:" + wf.name}
	if e.program != "" {
		if used := goToolsUsed(compiled.Def); len(used) > 0 {
			// only this program's worker runs them: the run says so while the program is away
			so.Program = e.program
		} else if e.sharedServed(ctx) {
			so.TaskQueue = e.shared
		}
	}
	r, err := e.c.Start(ctx, compiled, so)
	if err != nil {
		return nil, err
	}
	return &Execution{ID: r.ID, e: e, r: r}, nil
}

// TaskQueue is the queue the runs that use this program's Go tools go to (all runs, with
// Options.TaskQueue or Remote).
func (e *Engine) TaskQueue() string { return e.c.TaskQueue() }

// sharedServed says whether a worker polls the shared queue now: a run without Go tools goes
// there only then (with no weft dev or weft worker running, this program's worker runs it).
func (e *Engine) sharedServed(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := e.c.Temporal().DescribeTaskQueue(ctx, e.shared, enums.TASK_QUEUE_TYPE_WORKFLOW)
	return err == nil && len(d.GetPollers()) > 0
}

// goToolsUsed lists the Go tools (weft.Tool) def names anywhere: as a step's tool, a loop's
// step, an agent's tools or approvals. A string that happens to equal a tool's name counts too:
// the run then stays with this program, as every run did before.
func goToolsUsed(def *dsl.Definition) []string {
	declared := map[string]bool{}
	for _, n := range toolNames() {
		declared[n] = true
	}
	if len(declared) == 0 {
		return nil
	}
	data, err := json.Marshal(def)
	if err != nil {
		return toolNames() // cannot look: assume it needs them all
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return toolNames()
	}
	found := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if declared[x] {
				found[x] = true
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	out := make([]string, 0, len(found))
	for n := range found {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Stream calls fn with each of the run's events as they happen, until it ends.
func (r *Execution) Stream(ctx context.Context, fn func(Event)) error {
	_, err := r.e.c.Stream(ctx, r.ID, client.StreamOptions{}, fn)
	return err
}

// Review decides a review gate of the run (d.Step or d.ID name it; either may be left out when
// one gate waits). An agent's call waiting for approval is the gate "STEP/CALL_ID".
func (r *Execution) Review(ctx context.Context, d Decision) error {
	_, err := r.e.c.Review(ctx, r.ID, d)
	return err
}

// Approve approves the one gate waiting in step (or in the run, when step is "").
func (r *Execution) Approve(ctx context.Context, step string) error {
	return r.Review(ctx, Decision{Step: step, Decision: "approve"})
}

// Get waits for run's result and decodes its output into T.
func Get[T any](ctx context.Context, r *Execution) (*Result[T], error) {
	res, err := r.e.c.Result(ctx, r.ID)
	if err != nil {
		return nil, client.NewRunError(r.ID, err)
	}
	return decode[T](r.ID, res)
}

// Run starts wf on e, waits and decodes the output into T: a model step's text into a
// string, JSON into a struct.
func Run[T any](ctx context.Context, e *Engine, wf *Workflow, inputs any) (*Result[T], error) {
	r, err := e.Start(ctx, wf, inputs)
	if err != nil {
		return nil, err
	}
	return Get[T](ctx, r)
}

// Stream is Run calling fn with each event as it happens.
func Stream[T any](ctx context.Context, e *Engine, wf *Workflow, inputs any, fn func(Event)) (*Result[T], error) {
	r, err := e.Start(ctx, wf, inputs)
	if err != nil {
		return nil, err
	}
	res, err := e.c.Stream(ctx, r.ID, client.StreamOptions{}, fn)
	if err != nil {
		return nil, client.NewRunError(r.ID, err)
	}
	return decode[T](r.ID, res)
}

// ForkOptions say where Fork forks an agent: the step, the iteration the new run keeps, and the
// user message it goes on with (client.ForkOptions).
type ForkOptions = client.ForkOptions

// ForkPlan says what a fork reused and what it runs again (client.ForkPlan).
type ForkPlan = client.ForkPlan

// Fork starts a new run from what run runID recorded up to an agent step's iteration: the steps
// before the agent and its model answers and tool results up to o.Iteration are reused, not
// asked again, and the agent goes on with o.Message (as `weft fork`; the old run is unchanged).
func (e *Engine) Fork(ctx context.Context, runID string, o ForkOptions) (*Execution, *ForkPlan, error) {
	r, plan, err := e.c.Fork(ctx, runID, o)
	if err != nil {
		return nil, nil, err
	}
	return &Execution{ID: r.ID, e: e, r: r}, plan, nil
}

// Review decides a review gate of any run by id.
func (e *Engine) Review(ctx context.Context, runID string, d Decision) error {
	_, err := e.c.Review(ctx, runID, d)
	return err
}

func decode[T any](id string, res *weftv1.RunResult) (*Result[T], error) {
	out := &Result[T]{ID: id, Raw: res, Duration: time.Duration(res.GetDurationMs()) * time.Millisecond}
	out.Usage = client.UsageOf(res.GetUsage())
	if err := Decode(res.GetOutput().AsInterface(), &out.Output); err != nil {
		return out, fmt.Errorf("run %s: %w", id, err)
	}
	return out, nil
}

// Decode reads a run's output v into out (a pointer): a string takes a model answer's text
// ({"text": ...}) as well as a string, anything else is decoded as JSON (client.Decode).
func Decode(v any, out any) error { return client.Decode(v, out) }

// Must returns v, or panics with err: for programs whose only answer to an error is to stop
// (template.Must's idiom).
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
