package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// The gateway's own tools (start, inspect, review, retry, schedule and cancel executions, chat)
// are declared as the knowledge tools are: a toolspec.Spec with Go input and output types
// (toolspec.Describe: not workflow steps, so not in the step registry), from which the input and
// output schemas MCP clients are given are derived, and against which a call's arguments are
// checked before they are decoded into the handler's input.

// ownTool is one of the gateway's own tools: its declaration and its handler, bound to a gateway.
type ownTool struct {
	spec *toolspec.Spec
	bind func(g *Gateway) server.ToolHandlerFunc
}

// argChecker is an input type that looks at a call's arguments before the schema does, to say
// more than the schema's message would (which argument a tool takes, a limit's range).
type argChecker interface {
	checkArgs(args map[string]any) error
}

// own declares a gateway tool: In and Out give its schemas, h answers a call with the decoded
// input; h's error is the call's tool error.
func own[In, Out any](s *toolspec.Spec, h func(*Gateway, context.Context, In) (Out, error)) ownTool {
	t := toolspec.Describe[In, Out](s)
	return ownTool{spec: s, bind: func(g *Gateway) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
			args := req.GetArguments()
			if args == nil {
				args = map[string]any{}
			}
			var zero In
			if c, ok := any(zero).(argChecker); ok {
				if err := c.checkArgs(args); err != nil {
					return mcplib.NewToolResultError(err.Error()), nil
				}
			}
			if err := s.ValidateInputs(args); err != nil {
				return mcplib.NewToolResultError(fmt.Sprintf("invalid arguments for %s: %v", s.Name, err)), nil
			}
			in, err := t.Decode(args)
			if err != nil {
				return mcplib.NewToolResultError(err.Error()), nil
			}
			out, err := h(g, ctx, in)
			if err != nil {
				return mcplib.NewToolResultError(err.Error()), nil
			}
			return result(out), nil
		}
	}}
}

var (
	readOnly = toolspec.Annotations{ReadOnly: true, Idempotent: true}
	starts   = toolspec.Annotations{OpenWorld: true}
)

// ownTools are the gateway's own tools, by name.
var ownTools = []ownTool{
	own(&toolspec.Spec{Name: "weft_workflows", Title: "List workflows", Annotations: readOnly,
		Description: "List the workflows this gateway can run (built-in templates and files from its workflows directory) with their inputs."},
		(*Gateway).listWorkflows),
	own(&toolspec.Spec{Name: "weft_validate_workflow", Title: "Validate a workflow", Annotations: readOnly,
		Description: "Validate a workflow definition (JSON object or text) and return every problem as FILE:LINE:COL: where: what (hint)."},
		(*Gateway).validate),
	own(&toolspec.Spec{Name: "weft_run_workflow", Title: "Run a workflow", Annotations: starts,
		Description: "Start a durable execution of a workflow by name or inline definition. Returns the execution id; with wait (seconds) it returns the result when the run ends in time."},
		(*Gateway).run),
	own(&toolspec.Spec{Name: "weft_execution", Title: "Execution state", Annotations: readOnly,
		Description: "The state of an execution: per-step status, pending reviews and, once done, the output."},
		(*Gateway).execution),
	own(&toolspec.Spec{Name: "weft_review", Title: "Decide a review", Annotations: toolspec.Annotations{},
		Description: "Approve, edit (with data) or reject a review an execution is waiting on: a review step, one forEach item, or an agent's tool call."},
		(*Gateway).review),
	own(&toolspec.Spec{Name: "weft_cancel", Title: "Cancel an execution", Annotations: toolspec.Annotations{Destructive: true, Idempotent: true},
		Description: "Cancel a running execution you started (an admin key: any); steps in flight are cancelled, finished steps keep their results."},
		(*Gateway).cancel),
	own(&toolspec.Spec{Name: "weft_retry", Title: "Resume a failed run", Annotations: starts,
		Description: "Start a new run that reuses the outputs of the steps a failed or cancelled execution you started (an admin key: any) completed and runs the rest; from runs that step and what follows again."},
		(*Gateway).retry),
	own(&toolspec.Spec{Name: "weft_schedules", Title: "Schedules", Annotations: readOnly,
		Description: "The schedules of weft workflows: next times, recent runs, paused or not."},
		(*Gateway).schedules),
	own(&toolspec.Spec{Name: "weft_schedule", Title: "Change a schedule", Annotations: toolspec.Annotations{Destructive: true},
		Description: "Pause, unpause, trigger (run now) or delete a schedule (schedules are the operator's: an admin key)."},
		(*Gateway).schedule),
	own(&toolspec.Spec{Name: "weft_chat_start", Title: "Start a chat session", Annotations: starts,
		Description: "Start a durable chat session (or resume one by id): an agent with weft's tools whose conversation survives anything. Returns the session id."},
		(*Gateway).chatStart),
	own(&toolspec.Spec{Name: "weft_chat_send", Title: "Send a chat message", Annotations: starts,
		Description: "Send one message to a chat session and get the answer with the tool calls made for it."},
		(*Gateway).chatSend),
	own(&toolspec.Spec{Name: "weft_chat_read", Title: "Read a chat session", Annotations: readOnly,
		Description: "The turns (questions, answers, tool calls) and usage of a chat session."},
		(*Gateway).chatRead),
	own(&toolspec.Spec{Name: "weft_executions", Title: "Recent executions", Annotations: readOnly,
		Description: "Recent executions with their status, newest first, a page at a time (nextCursor, when there are more, reads the next page as cursor); awaitingReview lists only those waiting for a decision (runs, their child runs, chat sessions) and their pending reviews."},
		(*Gateway).executions),
}

// OwnTools names the gateway's own tools, sorted.
func OwnTools() []string {
	out := make([]string, len(ownTools))
	for i, t := range ownTools {
		out[i] = t.spec.Name
	}
	sort.Strings(out)
	return out
}

// knowledgeTools are the registry's tools the gateway offers (their declarations set MCP), by name.
func knowledgeTools() []string {
	var out []string
	for _, s := range toolspec.All() {
		if s.MCP {
			out = append(out, s.Name)
		}
	}
	return out
}

func (g *Gateway) addExecutionTools() {
	for _, t := range ownTools {
		g.srv.AddTool(declaredTool(t.spec.Name, t.spec), t.bind(g))
	}
}

// declaredTool is the MCP tool of a declaration: its input and output schemas in the portable
// form (toolspec.Portable), annotations set explicitly.
func declaredTool(name string, spec *toolspec.Spec) mcplib.Tool {
	var in any
	_ = json.Unmarshal([]byte(spec.InputJSON()), &in)
	t := mcplib.NewToolWithRawSchema(name, spec.Description, portableJSON(in))
	if out := spec.OutputSchema(); out != nil {
		t.RawOutputSchema = portableJSON(out)
	}
	t.Annotations = annotations(spec.Title, spec.Annotations)
	return t
}

func portableJSON(doc any) json.RawMessage {
	b, _ := json.Marshal(toolspec.Portable(doc))
	return b
}

// runAnswerSchema is the output schema of the tools that start a run and wait for it (wf_ tools).
var runAnswerSchema = portableJSON(toolspec.Describe[struct{}, runAnswer](&toolspec.Spec{Name: "wf_"}).OutputSchema())

// The inputs and outputs of the gateway's own tools.
type (
	noArgs struct{}

	workflowsOut struct {
		Workflows []workflowEntry `json:"workflows"`
		Problems  []string        `json:"problems" jsonschema:"workflow files that could not be read, and workflows not offered as tools"`
	}
	workflowEntry struct {
		Name        string               `json:"name"`
		Description string               `json:"description"`
		Inputs      map[string]dsl.Input `json:"inputs"`
		Steps       int                  `json:"steps"`
		Tool        string               `json:"tool,omitempty" jsonschema:"the wf_ tool that runs it"`
	}

	validateIn struct {
		Definition any `json:"definition" jsonschema:"The workflow JSON" weft:"type=object|string"`
	}
	validateOut struct {
		Valid       bool     `json:"valid"`
		Errors      int      `json:"errors,omitempty" jsonschema:"how many of the diagnostics are errors"`
		Diagnostics []string `json:"diagnostics,omitempty" jsonschema:"FILE:LINE:COL: where: what (hint), when invalid"`
		Steps       int      `json:"steps,omitempty"`
		Warnings    []string `json:"warnings,omitempty"`
	}

	runIn struct {
		Name       string         `json:"name,omitempty" jsonschema:"a workflow's name from weft_workflows"`
		Definition map[string]any `json:"definition,omitempty" jsonschema:"an inline workflow definition"`
		Inputs     map[string]any `json:"inputs,omitempty"`
		Wait       int            `json:"wait,omitempty" jsonschema:"seconds to wait for the result" weft:"min=0,max=300"`
	}
	// runAnswer is a started run: its result when it ended within the wait, else its status and
	// what to do next.
	runAnswer struct {
		ExecutionID    string `json:"executionId"`
		Status         string `json:"status,omitempty"`
		Output         any    `json:"output,omitempty"`
		DurationMs     int64  `json:"durationMs,omitempty"`
		PendingReviews []any  `json:"pendingReviews,omitempty" jsonschema:"the reviews the run waits for: their ids; after a review was put to the person in the client and not decided, the review itself (as weft_execution gives it)"`
		Hint           string `json:"hint,omitempty"`
	}

	idIn struct {
		ID string `json:"id" jsonschema:"the execution id"`
	}
	// executionState is an execution's state as proto JSON (weft.v1.ExecutionState).
	executionState map[string]any

	reviewIn struct {
		ID       string `json:"id" jsonschema:"the execution id"`
		Review   string `json:"review,omitempty" jsonschema:"the review's id from weft_execution's pendingReviews (optional when one is pending)"`
		Step     string `json:"step,omitempty"`
		Decision string `json:"decision" weft:"enum=approve|edit|reject"`
		Data     any    `json:"data,omitempty"`
		Reviewer string `json:"reviewer,omitempty" jsonschema:"a label, used only when nobody authenticated (stdio); over HTTP the key's name is recorded"`
		Comment  string `json:"comment,omitempty"`
		Digest   string `json:"digest,omitempty" jsonschema:"the digest of the pending review from weft_execution (pendingReviews[].digest): pass it so the decision is refused if the data changed since you read it"`
		Scope    string `json:"scope,omitempty" jsonschema:"run: an approve or reject of an agent's tool call (kind tool_call) that also decides the later calls of that tool in the execution, without waiting (approve always, reject always); each is recorded as decided by rule of the reviewer. Leave it out to decide this review only" weft:"enum=run"`
	}
	reviewOut struct {
		ExecutionID   string `json:"executionId"`
		Review        string `json:"review"`
		Step          string `json:"step"`
		Decision      string `json:"decision"`
		Reviewer      string `json:"reviewer"`
		Authenticated bool   `json:"authenticated"`
		Recorded      bool   `json:"recorded"`
		Scope         string `json:"scope,omitempty" jsonschema:"run: the later calls of the tool in the execution are decided the same way"`
	}

	cancelOut struct {
		ExecutionID     string `json:"executionId"`
		CancelRequested bool   `json:"cancelRequested"`
		Terminated      bool   `json:"terminated,omitempty" jsonschema:"a stuck run (its workflow task kept failing) cannot take a cancel: it was terminated"`
		Reason          string `json:"reason,omitempty"`
	}

	retryIn struct {
		ID         string         `json:"id"`
		From       string         `json:"from,omitempty"`
		Definition map[string]any `json:"definition,omitempty" jsonschema:"a corrected definition"`
	}
	retryOut struct {
		ExecutionID string   `json:"executionId"`
		ResumedFrom string   `json:"resumedFrom"`
		Reused      []string `json:"reused"`
		Rerun       []string `json:"rerun"`
	}

	schedulesOut struct {
		Schedules []weftclient.ScheduleSummary `json:"schedules"`
	}
	scheduleIn struct {
		ID     string `json:"id"`
		Action string `json:"action" weft:"enum=pause|unpause|trigger|delete"`
		Note   string `json:"note,omitempty"`
	}
	scheduleOut struct {
		Schedule string `json:"schedule"`
		Done     string `json:"done"`
	}

	chatStartIn struct {
		Session    string   `json:"session,omitempty"`
		Tools      []string `json:"tools,omitempty"`
		Collection string   `json:"collection,omitempty"`
		DB         string   `json:"db,omitempty"`
		Model      string   `json:"model,omitempty"`
		Memory     string   `json:"memory,omitempty" jsonschema:"long-term memory scope (adds remember and recall)"`
	}
	chatStartOut struct {
		Session string `json:"session"`
		Resumed bool   `json:"resumed"`
	}
	chatSendIn struct {
		Session string `json:"session"`
		Text    string `json:"text" weft:"minLength=1"`
	}
	sessionIn struct {
		Session string `json:"session"`
	}
	chatReadOut struct {
		Session   string             `json:"session"`
		Turns     []runwire.ChatTurn `json:"turns"`
		Usage     runwire.ChatUsage  `json:"usage"`
		Continued int                `json:"continued"`
	}

	executionsIn struct {
		AwaitingReview bool   `json:"awaitingReview,omitempty"`
		Limit          int    `json:"limit,omitempty" jsonschema:"executions a page (default 20); with awaitingReview, how many of the newest waiting executions to read (cut says when more wait)" weft:"min=1,max=100"`
		Search         string `json:"search,omitempty" jsonschema:"keep executions whose id, workflow, status or starter contain every word"`
		Cursor         string `json:"cursor,omitempty" jsonschema:"the nextCursor of the previous page: list the executions after it (executions started meanwhile do not shift pages)"`
	}
	executionsOut struct {
		Executions []weftclient.RunSummary `json:"executions"`
		// Reviews are client.PendingReview values, written as proto JSON (their MarshalJSON).
		Reviews    any    `json:"reviews,omitempty" jsonschema:"with awaitingReview: the pending reviews, each with the run it belongs to (run) and where its gate lives (in)"`
		NextCursor string `json:"nextCursor,omitempty"`
		Cut        string `json:"cut,omitempty"`
	}
)

// checkArgs names the argument weft_validate_workflow takes when a call gives another.
func (validateIn) checkArgs(args map[string]any) error {
	switch d := args["definition"].(type) {
	case string, map[string]any:
		return nil
	case nil:
		var got []string
		for k := range args {
			got = append(got, k)
		}
		sort.Strings(got)
		return fmt.Errorf("weft_validate_workflow takes the argument \"definition\" (the workflow as a JSON object or text); got %v", got)
	default:
		return fmt.Errorf("\"definition\" is a %T: give the workflow as a JSON object or as text", d)
	}
}

// checkArgs refuses a limit out of the schema's range, saying the range, rather than reading it
// as the client's default (0) or passing it on unchecked.
func (executionsIn) checkArgs(args map[string]any) error {
	v, ok := args["limit"]
	if !ok || v == nil {
		return nil
	}
	f, ok := v.(float64)
	if !ok || f != float64(int64(f)) || f < 1 || f > maxExecutionsLimit {
		return fmt.Errorf("limit %v: give a whole number of executions from 1 to %d", v, maxExecutionsLimit)
	}
	return nil
}
