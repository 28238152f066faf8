package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"go.temporal.io/api/serviceerror"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/workflows/dsl"
)

// Resolver finds a workflow another one calls by name ("workflow" steps, "workflow:NAME" agent
// tools).
type Resolver func(name string) (*dsl.Workflow, error)

// FileResolver finds called workflows by name as files in dir (NAME, NAME.json, NAME.weft.json)
// and then among the built-in templates. Names are never paths (dsl.CheckWorkflowName): whoever
// wrote the definition reads no file outside dir.
func FileResolver(dir string) Resolver {
	return func(name string) (*dsl.Workflow, error) {
		if err := dsl.CheckWorkflowName(name); err != nil {
			return nil, err
		}
		if dir != "" {
			base := filepath.Join(dir, name)
			for _, p := range []string{base, base + ".json", base + ".weft.json"} {
				if st, err := os.Stat(p); err == nil && !st.IsDir() {
					return dsl.LoadFile(p)
				}
			}
		}
		w, err := Template(name)
		if err != nil {
			return nil, fmt.Errorf("workflow %q: no file of that name next to the calling workflow and %w", name, err)
		}
		return w, nil
	}
}

// Template compiles the named built-in template.
func Template(name string) (*dsl.Workflow, error) {
	t, err := templates.Get(name)
	if err != nil {
		return nil, err
	}
	return dsl.Load(t.Name, t.Data)
}

// StartOptions describe one run.
type StartOptions struct {
	// ID is the workflow id (default weft-<name>-<random>). A running run with the same id is
	// refused with *AlreadyRunningError.
	ID string
	// Source says where the definition came from (file path, template name), for people.
	Source string
	// Inputs are checked and coerced against the declared inputs (dsl.ResolveInputs).
	Inputs map[string]any
	// Defaults override the file's defaults (db, collection, model).
	Defaults map[string]any
	// Resolver finds called workflows (default: FileResolver of Source's directory).
	Resolver Resolver
	// Origin says who the definition came from (OriginOperator or OriginClient): a client's
	// definition may not declare MCP server commands, URLs or environment names (docs/security.md).
	Origin string
	// StartedBy is the authenticated identity that starts the run ("" when nobody authenticated).
	StartedBy string
	// TaskQueue is the queue the run goes to (default: the client's, Options.TaskQueue).
	TaskQueue string
	// Program names the Go program whose own worker alone can run this run's steps (its Go
	// tools, weft.Tool), recorded in the run's memo (MemoProgram): while no worker polls the
	// run's queue, State's error names the queue and the program.
	Program string
}

// MemoProgram is the memo key naming the Go program a run needs (StartOptions.Program).
const MemoProgram = "weftProgram"

// Origins of a definition (RunRequest.origin).
const (
	// OriginOperator: the operator's own files (the workflows directory, built-ins, the CLI).
	OriginOperator = ""
	// OriginClient: a definition an authenticated client sent (an MCP key, a console login).
	OriginClient = "client"
)

var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@=+-]{0,199}$`)

// CheckID says what is wrong with a workflow id a person chose.
func CheckID(id string) error {
	if !validID.MatchString(id) {
		return &InvalidError{Err: fmt.Errorf("id %q: use 1 to 200 letters, digits and . _ : / @ = + - (starting with a letter or digit)", shorten(id, 60))}
	}
	return nil
}

func shorten(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// NewRunID is the default id of a run of the named workflow.
func NewRunID(name string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "weft-" + dsl.Slug(name, "run") + "-" + hex.EncodeToString(b)
}

// MaxRequestBytes is the largest start request weft sends: the size gate of every value that
// enters a run's history (runwire.MaxValueBytes, under Temporal's 2 MB payload limit).
const MaxRequestBytes = runwire.MaxValueBytes

// checkRequestSize refuses a start request over MaxRequestBytes before it is sent: Temporal
// would accept some of them and the run could never make progress.
func checkRequestSize(req *weftv1.RunRequest) error {
	if n := proto.Size(req); n > MaxRequestBytes {
		return &InvalidError{Err: fmt.Errorf("the run's definition and inputs are %.1f MB; Temporal accepts at most 2 MB per payload, so weft starts runs up to %.1f MB: ingest large data into a collection and pass its name instead", float64(n)/(1<<20), float64(MaxRequestBytes)/(1<<20))}
	}
	return nil
}

// Request builds the RunRequest of a run of w: resolved inputs, default overrides, and the
// definitions of every workflow it calls (transitively). Nothing is started.
func Request(w *dsl.Workflow, o StartOptions) (*weftv1.RunRequest, error) {
	inputs, err := dsl.ResolveInputs(w.Def, nil, o.Inputs)
	if err != nil {
		return nil, &InvalidError{Err: err}
	}
	req, err := runwire.NewRequest(w, o.Source, inputs, o.Defaults)
	if err != nil {
		return nil, &InvalidError{Err: err}
	}
	if o.Origin == OriginClient {
		if err := dsl.CheckClientDefinition(w.Def); err != nil {
			return nil, &InvalidError{Err: err}
		}
		if err := dsl.CheckClientNotify(w.Def); err != nil {
			return nil, &InvalidError{Err: err}
		}
	}
	req.Origin, req.StartedBy = o.Origin, o.StartedBy
	resolve := o.Resolver
	if resolve == nil {
		resolve = SourceResolver(o.Source)
	}
	called, err := CalledDefinitions(w.Def, resolve)
	if err != nil {
		return nil, &InvalidError{Err: err}
	}
	if ds := CheckCalls(w, called); len(ds) > 0 {
		return nil, &InvalidError{Err: ds}
	}
	if len(called) > 0 {
		if req.WorkflowFiles, err = runwire.WorkflowFiles(called); err != nil {
			return nil, &InvalidError{Err: err}
		}
	}
	if err := checkRequestSize(req); err != nil {
		return nil, err
	}
	return req, nil
}

// SourceResolver is where a run started from source (a workflow file's path, or a name) finds
// the workflows it calls: beside the file, then as FileResolver does.
func SourceResolver(source string) Resolver {
	dir := ""
	if source != "" {
		if st, err := os.Stat(source); err == nil && !st.IsDir() {
			dir = filepath.Dir(source)
		}
	}
	return FileResolver(dir)
}

// CalledDefinitions resolves every workflow def calls, and what those call, by name (at most
// 100): what a run's start sends along with def.
func CalledDefinitions(def *dsl.Definition, resolve Resolver) (map[string]*dsl.Workflow, error) {
	out := map[string]*dsl.Workflow{}
	queue := dsl.CalledWorkflows(def)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if _, done := out[name]; done {
			continue
		}
		if len(out) >= 100 {
			return nil, errors.New("a run may call at most 100 distinct workflows")
		}
		w, err := resolve(name)
		if err != nil {
			return nil, fmt.Errorf("%s calls workflow %q: %w", def.Name, name, err)
		}
		out[name] = w
		queue = append(queue, dsl.CalledWorkflows(w.Def)...)
	}
	return out, nil
}

// CheckCalls checks what w, and each workflow it calls, gives the workflows it calls (called, from
// CalledDefinitions) against the inputs they declare (dsl.CheckCalls): what weft validate and a
// run's start both refuse, before the run starts a child that would refuse it.
func CheckCalls(w *dsl.Workflow, called map[string]*dsl.Workflow) dsl.Diagnostics {
	ds := dsl.CheckCalls(w, called)
	names := make([]string, 0, len(called))
	for n := range called {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ds = append(ds, dsl.CheckCalls(called[n], called)...)
	}
	return ds
}

// Run is a started execution.
type Run struct {
	ID, RunID string
	c         *Client
	handle    tclient.WorkflowRun
}

// Start validates nothing more (w is compiled already), builds the request and starts the run.
func (c *Client) Start(ctx context.Context, w *dsl.Workflow, o StartOptions) (*Run, error) {
	if o.ID != "" {
		if err := CheckID(o.ID); err != nil {
			return nil, err
		}
	}
	req, err := Request(w, o)
	if err != nil {
		return nil, err
	}
	return c.startOn(ctx, w.Def.Name, o.ID, req, o.TaskQueue, o.Program)
}

// StartRequest starts a prepared request (one over MaxRequestBytes is refused: a retry's reused
// outputs count too).
func (c *Client) StartRequest(ctx context.Context, name, id string, req *weftv1.RunRequest) (*Run, error) {
	return c.startOn(ctx, name, id, req, "", "")
}

// startOn is StartRequest on queue (default the client's) for program (StartOptions).
func (c *Client) startOn(ctx context.Context, name, id string, req *weftv1.RunRequest, queue, program string) (*Run, error) {
	if queue == "" {
		queue = c.taskQueue
	}
	if err := checkRequestSize(req); err != nil {
		return nil, err
	}
	if id == "" {
		id = NewRunID(name)
	}
	memo := map[string]any{runwire.MemoWorkflow: name}
	if req.GetStartedBy() != "" {
		memo[MemoStartedBy] = req.GetStartedBy() // listings filter on it (MayRead)
	}
	if program != "" {
		memo[MemoProgram] = program
	}
	h, err := c.t.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{
		ID:        id,
		TaskQueue: queue,
		Memo:      memo,
		// Never attach silently to another run that holds the id.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, runwire.WorkflowType, req)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			other := ""
			if d, derr := c.Describe(ctx, id); derr == nil {
				other = d.Workflow
			}
			return nil, &AlreadyRunningError{ID: id, Workflow: other}
		}
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return &Run{ID: h.GetID(), RunID: h.GetRunID(), c: c, handle: h}, nil
}

// Get waits for the run's result. The error, when the run failed, reads well through Cause.
func (r *Run) Get(ctx context.Context) (*weftv1.RunResult, error) {
	var res weftv1.RunResult
	if err := r.handle.Get(ctx, &res); err != nil {
		if errors.Is(err, converter.ErrEncodingIsNotSupported) {
			return nil, decodeError(r.ID, "its result", err)
		}
		if r.c != nil {
			return nil, r.c.explain(ctx, r.ID, err)
		}
		return nil, err
	}
	return &res, nil
}

// Run starts w and waits for its result: the simplest way for a Go program to run a workflow
// (build it with dsl.New(...).Compile()).
func (c *Client) Run(ctx context.Context, w *dsl.Workflow, o StartOptions) (*weftv1.RunResult, error) {
	run, err := c.Start(ctx, w, o)
	if err != nil {
		return nil, err
	}
	res, err := run.Get(ctx)
	if err != nil {
		return nil, NewRunError(run.ID, err)
	}
	return res, nil
}

// Result waits for the result of an existing run (at most until ctx ends).
func (c *Client) Result(ctx context.Context, id string) (*weftv1.RunResult, error) {
	h := c.t.GetWorkflow(ctx, id, "")
	var res weftv1.RunResult
	if err := h.Get(ctx, &res); err != nil {
		if isNotFound(err) {
			return nil, c.notFound(ctx, id)
		}
		if errors.Is(err, converter.ErrEncodingIsNotSupported) {
			return nil, decodeError(id, "its result", err)
		}
		return nil, c.explain(ctx, id, err)
	}
	return &res, nil
}
