package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	weftclient "github.com/weftworks/weft/client"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// Prefix is put before every knowledge tool's name.
const Prefix = "weft_"

// KnowledgeTools are the registry tools the gateway offers, by name: those whose declaration sets
// MCP (the knowledge tools, and the code tools as vai offers them; code_index and ingest write,
// so they run on the worker as durable executions and need the runner role).
var KnowledgeTools = knowledgeTools()

// Options configures a gateway.
type Options struct {
	// Version, Revision and Modified are how the binary was built (starter.CurrentBuild): the
	// module version, the VCS commit ("" when unknown) and whether its work tree had changes.
	// MCP's initialize answers Version, GET /health all three.
	Version, Revision string
	Modified          bool
	// Temporal connection; dialled on first use so the gateway starts without it.
	Address, Namespace, TaskQueue string
	// Config of the read-only tools the gateway runs itself.
	Config activities.Config
	// WorkflowsDir holds workflow files offered as tools when they set "mcp": {"expose": true}.
	WorkflowsDir string
	// NoBuiltins hides the built-in templates from weft_workflows and wf_ tools.
	NoBuiltins bool
	// Wait is how long wf_ tools wait for a result before answering with the run's status (20 s: well
	// inside MCP clients' request timeouts; the TypeScript SDK gives up at 60 s).
	Wait time.Duration
	// Log receives one line per tool call: tool, duration, outcome (never payloads). Nil: discard.
	Log *slog.Logger
	// DataConverter carries the payload codecs (compression, encryption); nil: Temporal's default.
	DataConverter converter.DataConverter
	// Security protects the connection to Temporal (TLS, mTLS, API key).
	Security weftclient.Security
	// Interceptors wrap its Temporal calls (tracing).
	Interceptors []interceptor.ClientInterceptor
	// CheckResults checks every tool result against the tool's output schema before it is sent
	// (mcp-go's output-schema validation). Off by default: the results are encoded from the Go
	// types the schemas are derived from, and the check cost a call more than the rest of the
	// gateway did (issue 47); the tests turn it on, and MCP clients check results too.
	CheckResults bool
}

// Gateway is an MCP server over weft.
type Gateway struct {
	o         Options
	srv       *server.MCPServer
	tools     map[string]activities.Handler
	store     *activities.Tools           // long-term memory (Memories, Remember, Forget)
	storePing func(context.Context) error // asks the knowledge store whether it answers (/health)
	started   time.Time
	mu        sync.Mutex // guards wfTools
	dialMu    sync.Mutex
	client    *weftclient.Client
	wfTools   map[string]string // wf_ tool name -> the definition it was registered with
	wfNames   map[string]string // wf_ tool name -> the catalog name of its workflow
	wfPrompts map[string]string // wf_ prompt name -> the definition it was registered with
	levels    levels            // sessions that chose a log level
	subs      *subscriptions    // followed runs of subscribed weft://executions/{id}
	// sessions of the last HTTPHandler (tests)
	sessions *keySessions
	caps     clientCaps // sessions whose clients can be asked (elicit.go)
	secret   []byte     // signs the requestState of input_required results (elicit.go)
}

// New builds the gateway and registers its tools.
func New(o Options) *Gateway {
	if o.TaskQueue == "" {
		o.TaskQueue = runwire.TaskQueue
	}
	if o.Wait == 0 {
		o.Wait = 20 * time.Second
	}
	tools := activities.NewTools(o.Config)
	g := &Gateway{o: o, tools: tools.Handlers(), store: tools, storePing: tools.PingStore, started: time.Now(), wfTools: map[string]string{}, wfNames: map[string]string{}, wfPrompts: map[string]string{}, secret: newSecret()}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
		g.o.Log = o.Log
	}
	logCalls := func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
			start := time.Now()
			res, err := next(ctx, req)
			status := "ok"
			switch {
			case err != nil:
				status = "protocol-error"
			case res != nil && res.IsError:
				status = "tool-error"
			}
			o.Log.Info("tool call", "tool", req.Params.Name, "status", status, "duration", time.Since(start).Round(time.Microsecond))
			return res, err
		}
	}
	hooks := &server.Hooks{}
	hooks.AddAfterListTools(visibleTools) // a key sees the tools its roles allow
	hooks.AddAfterSetLevel(g.levels.afterSetLevel)
	hooks.AddOnUnregisterSession(g.levels.forget)
	hooks.AddAfterInitialize(g.caps.afterInitialize)
	hooks.AddOnUnregisterSession(g.caps.forget)
	g.subs = newSubscriptions(g)
	g.subs.hook(hooks)
	opts := []server.ServerOption{server.WithToolCapabilities(true), server.WithResourceCapabilities(true, false),
		server.WithLogging(), server.WithPromptCapabilities(true), server.WithCompletions(),
		server.WithPromptCompletionProvider(completer{g}), server.WithResourceCompletionProvider(completer{g}),
		server.WithToolHandlerMiddleware(logCalls), server.WithToolHandlerMiddleware(g.authorize), server.WithToolHandlerMiddleware(withProgressToken), server.WithToolHandlerMiddleware(g.reviewsInClient), server.WithHooks(hooks),
		server.WithRecovery(), server.WithInstructions("weft runs durable AI/RAG workflows. Use weft_query to answer from the knowledge base, weft_workflows and weft_run_workflow to run pipelines, weft_execution to follow them and weft_review to approve paused steps.")}
	if o.CheckResults {
		opts = append(opts, server.WithOutputSchemaValidation())
	}
	g.srv = server.NewMCPServer("weft", o.Version, opts...)
	for _, name := range KnowledgeTools {
		spec, _ := toolspec.Lookup(name)
		g.srv.AddTool(registryTool(spec), g.knowledge(spec))
	}
	g.addExecutionTools()
	g.addResources()
	g.refreshWorkflowTools()
	g.addPrompts()
	return g
}

// Server returns the underlying MCP server.
func (g *Gateway) Server() *server.MCPServer { return g.srv }

// registryTool declares a knowledge tool from its registry entry: its schemas, annotations set
// explicitly.
func registryTool(spec *toolspec.Spec) mcplib.Tool { return declaredTool(Prefix+spec.Name, spec) }

func annotations(title string, a toolspec.Annotations) mcplib.ToolAnnotation {
	return mcplib.ToolAnnotation{Title: title, ReadOnlyHint: mcplib.ToBoolPtr(a.ReadOnly), DestructiveHint: mcplib.ToBoolPtr(a.Destructive),
		IdempotentHint: mcplib.ToBoolPtr(a.Idempotent), OpenWorldHint: mcplib.ToBoolPtr(a.OpenWorld)}
}

// result renders a tool's output as structuredContent plus a JSON text rendering. A field that
// holds null is left out (a Go list or map nobody filled is written null): the output schemas say
// what a field holds when it is there, and require none.
func result(v any) *mcplib.CallToolResult {
	doc, ok := withoutNulls(v)
	if !ok { // not plain JSON values yet (a Go struct somewhere): their JSON form
		b, err := json.Marshal(v)
		if err != nil {
			return mcplib.NewToolResultError("encoding the result: " + err.Error())
		}
		var plain any
		if err := json.Unmarshal(b, &plain); err != nil {
			return mcplib.NewToolResultError("encoding the result: " + err.Error())
		}
		doc, _ = withoutNulls(plain)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return mcplib.NewToolResultError("encoding the result: " + err.Error())
	}
	return mcplib.NewToolResultStructured(doc, string(b))
}

// withoutNulls copies v, a value made of JSON's own Go forms (maps of any, lists of any, strings,
// numbers, booleans), leaving out every object member that holds null; it never changes v (a tool
// may hand back a value it keeps). ok is false when v holds any other Go value: its JSON form may
// hold nulls this walk cannot see, so the caller encodes it first.
func withoutNulls(v any) (out any, ok bool) {
	switch d := v.(type) {
	case map[string]any:
		if d == nil {
			return nil, true
		}
		m := make(map[string]any, len(d))
		for k, x := range d {
			c, ok := withoutNulls(x)
			if !ok {
				return nil, false
			}
			if c != nil {
				m[k] = c
			}
		}
		return m, true
	case []any:
		if d == nil {
			return nil, true
		}
		l := make([]any, len(d))
		for i, x := range d {
			c, ok := withoutNulls(x)
			if !ok {
				return nil, false
			}
			l[i] = c
		}
		return l, true
	case nil, string, float64, bool, json.Number, int, int64:
		return d, true
	}
	return nil, false
}

// knowledge runs a read-only tool in the gateway, or a data-changing one as a durable execution.
func (g *Gateway) knowledge(spec *toolspec.Spec) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
		args := req.GetArguments()
		if args == nil {
			args = map[string]any{}
		}
		args, _ = spec.Canonical(args)
		if err := spec.ValidateInputs(args); err != nil {
			return mcplib.NewToolResultError(fmt.Sprintf("invalid arguments for %s%s: %v", Prefix, spec.Name, err)), nil
		}
		if !spec.Annotations.ReadOnly {
			return g.durable(ctx, spec.Name, args)
		}
		out, _, err := g.tools[spec.Name](ctx, args)
		if err != nil {
			return mcplib.NewToolResultError(err.Error()), nil
		}
		return result(out), nil
	}
}

// durable runs one tool step as a weft execution and waits for it.
func (g *Gateway) durable(ctx context.Context, tool string, args map[string]any) (*mcplib.CallToolResult, error) {
	w, err := dsl.FromDefinition(&dsl.Definition{Name: "mcp-" + tool, Steps: []dsl.Step{{ID: "call", Name: Prefix + tool, Tool: tool, Inputs: args}}, Output: "{{ call.output }}"})
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	res, id, err := g.start(ctx, w, "mcp:"+tool, nil, g.o.Wait)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	if res == nil {
		return result(g.stillGoing(ctx, id)), nil
	}
	return result(res.Output.AsInterface()), nil
}

// temporal returns the weft client, dialling on first use.
func (g *Gateway) temporal(ctx context.Context) (*weftclient.Client, error) {
	g.dialMu.Lock()
	defer g.dialMu.Unlock()
	if g.client != nil {
		return g.client, nil
	}
	c, err := weftclient.Dial(ctx, weftclient.Options{Address: g.o.Address, Namespace: g.o.Namespace, TaskQueue: g.o.TaskQueue, DialTimeout: 3 * time.Second, DataConverter: g.o.DataConverter, Security: g.o.Security, Interceptors: g.o.Interceptors})
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s (%v): start it (weft dev) or set TEMPORAL_ADDRESS", g.o.Address, err)
	}
	g.client = c
	return c, nil
}

// start starts a run through the client package; with wait > 0 it waits that long for the result.
func (g *Gateway) start(ctx context.Context, w *dsl.Workflow, source string, inputs map[string]any, wait time.Duration) (*weftv1.RunResult, string, error) {
	c, err := g.temporal(ctx)
	if err != nil {
		return nil, "", err
	}
	ask := askFrom(ctx)
	if ask != nil && ask.resume != nil {
		// a review was answered in the client (elicit.go): follow the run the call started
		return g.await(ctx, c, ask.resume.Run, len(w.Steps), max(wait, time.Second), ask)
	}
	resolver := weftclient.FileResolver(g.o.WorkflowsDir)
	origin, by := startedBy(ctx)
	run, err := c.Start(ctx, w, weftclient.StartOptions{Source: source, Inputs: inputs, Resolver: resolver, Origin: origin, StartedBy: by})
	if err != nil {
		return nil, "", err
	}
	if wait <= 0 {
		return nil, run.ID, nil
	}
	if ask != nil {
		return g.await(ctx, c, run.ID, len(w.Steps), wait, ask) // may ask about its reviews
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var res *weftv1.RunResult
	if rep := g.reporterFor(ctx, len(w.Steps)); rep != nil {
		// the client asked for progress or log lines: follow the run's events while waiting
		res, err = c.Stream(wctx, run.ID, weftclient.StreamOptions{NoDeltas: true}, rep.event)
	} else {
		res, err = run.Get(wctx)
	}
	if err != nil {
		if waitRanOut(ctx, err) {
			return nil, run.ID, nil // still running
		}
		return nil, run.ID, fmt.Errorf("execution %s failed: %s", run.ID, weftclient.Cause(err))
	}
	return res, run.ID, nil
}

// waitRanOut tells whether err only says that waiting for a run's result took longer than the
// wait (the run goes on), rather than that the run ended badly or the caller went away. The
// deadline can surface as the context's error or as the server's DEADLINE_EXCEEDED answer to the
// long poll, which may arrive before the wait's own context says it expired: so the error itself
// decides, not a second look at the context.
func waitRanOut(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false // the caller left: not a result
	}
	var ended *temporal.WorkflowExecutionError
	if errors.As(err, &ended) {
		return false // the run ended (a run's own timeout included)
	}
	var de *serviceerror.DeadlineExceeded
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &de) || status.Code(err) == codes.DeadlineExceeded
}

// workflowFiles returns the workflows the gateway offers: built-ins (unless disabled) and the
// files in WorkflowsDir, by name.
func (g *Gateway) workflowFiles() (map[string]*dsl.Workflow, []string) {
	out, _, problems := g.workflowSources()
	return out, problems
}

// workflowSources is workflowFiles plus the names that came from the workflows directory.
func (g *Gateway) workflowSources() (map[string]*dsl.Workflow, map[string]bool, []string) {
	out := map[string]*dsl.Workflow{}
	fromDir := map[string]bool{}
	var problems []string
	for _, e := range weftclient.Catalog(g.o.WorkflowsDir, !g.o.NoBuiltins) {
		if e.Err != nil {
			if e.Path != "" {
				problems = append(problems, e.Err.Error())
			}
			continue
		}
		out[e.Name] = e.Workflow
		fromDir[e.Name] = e.Path != ""
	}
	return out, fromDir, problems
}

// maxToolName is the longest tool name MCP clients accept (Claude's API: ^[a-zA-Z0-9_-]{1,64}$).
const maxToolName = 64

// WorkflowToolName is the MCP tool that runs a workflow: "wf_" and the workflow's name (its
// "name" field, not its file's), lowercased, each run of characters other than ASCII letters and
// digits made one "_", cut to 64 characters: "Docs QA" is wf_docs_qa, "multi-collection-search"
// wf_multi_collection_search. fallback (the file's name) is used when nothing of the name is left.
func WorkflowToolName(name, fallback string) string {
	sanitise := func(s string) string {
		var b strings.Builder
		gap := false
		for _, r := range strings.ToLower(s) {
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
				if gap && b.Len() > 0 {
					b.WriteByte('_')
				}
				b.WriteRune(r)
				gap = false
				continue
			}
			gap = true
		}
		return b.String()
	}
	s := sanitise(name)
	if s == "" {
		s = sanitise(fallback)
	}
	if s == "" {
		s = "workflow"
	}
	s = "wf_" + s
	if len(s) > maxToolName {
		s = strings.TrimRight(s[:maxToolName], "_")
	}
	return s
}

// exposedTools decides the wf_ tool of each workflow the gateway offers as a tool (catalog name
// -> tool name): built-ins unless NoBuiltins, files of the workflows directory that set
// "mcp": {"expose": true}. When several workflows give the same tool name, one gets it: a file
// over a built-in (as a file overrides a built-in of its name in the catalog), then the one whose
// file name gives that tool name too (docs-qa.json declaring "docs-qa"), then the first by file
// name. The others are not offered as tools — weft_run_workflow still runs them by file name —
// and each is reported in problems, which weft_workflows lists.
func exposedTools(wfs map[string]*dsl.Workflow, fromDir map[string]bool) (map[string]string, []string) {
	claims := map[string][]string{} // tool name -> catalog names
	for n, w := range wfs {
		if fromDir[n] && (w.Def.MCP == nil || !w.Def.MCP.Expose) {
			continue // files only when they ask for it
		}
		t := WorkflowToolName(w.Def.Name, n)
		claims[t] = append(claims[t], n)
	}
	out := map[string]string{}
	var problems []string
	for t, names := range claims {
		sort.Slice(names, func(i, j int) bool {
			a, b := names[i], names[j]
			if fromDir[a] != fromDir[b] {
				return fromDir[a]
			}
			if ma, mb := WorkflowToolName(a, "") == t, WorkflowToolName(b, "") == t; ma != mb {
				return ma
			}
			return a < b
		})
		out[names[0]] = t
		for _, n := range names[1:] {
			what := "file " + n
			if !fromDir[n] {
				what = "built-in " + n
			}
			problems = append(problems, fmt.Sprintf("%s (name %q) is not offered as %s: %s's name gives the same tool, and %s runs %s; give one of them another \"name\" to offer both",
				what, wfs[n].Def.Name, t, names[0], t, names[0]))
		}
	}
	sort.Strings(problems)
	return out, problems
}

// stillGoing is a call's answer when its run did not end within the wait: the run's status as
// every surface shows it (weftclient.Resolve: awaiting_review when a gate waits, not a literal
// "running"), its pending reviews' ids, and how to go on.
func (g *Gateway) stillGoing(ctx context.Context, id string) runAnswer {
	out := runAnswer{ExecutionID: id, Status: weftclient.RunRunning, Hint: "follow it with weft_execution"}
	c, err := g.temporal(ctx)
	if err != nil {
		return out
	}
	e, err := c.Execution(ctx, id)
	if err != nil {
		return out
	}
	out.Status = e.Status
	if e.State != nil && len(e.State.PendingReviews) > 0 {
		for _, r := range e.State.PendingReviews {
			out.PendingReviews = append(out.PendingReviews, r.Id)
		}
		out.Hint = "the run waits for a review: decide it with weft_review (id " + e.State.PendingReviews[0].Id + "), then follow it with weft_execution"
	}
	return out
}

// Client is the gateway's client of Temporal (dialled on first use): what the HTTP API beside
// /mcp (httpapi) does its operations with, so both surfaces share one connection.
func (g *Gateway) Client(ctx context.Context) (*weftclient.Client, error) { return g.temporal(ctx) }
