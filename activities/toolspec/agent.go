package toolspec

import "time"

// ChatIn are the inputs llm and agent share.
type ChatIn struct {
	Model          string        `json:"model,omitempty" jsonschema:"model name or alias (fast, smart, ...); default WEFT_CHAT_MODEL" weft:"minLength=1"`
	System         string        `json:"system,omitempty" weft:"maxLength=100000"`
	Prompt         string        `json:"prompt,omitempty" weft:"content,minLength=1,maxLength=400000"`
	Messages       []ChatMessage `json:"messages,omitempty" weft:"maxItems=4000,open"`
	Context        any           `json:"context,omitempty" jsonschema:"text, documents (rendered as a numbered list), any value as JSON, or \"auto\": the run's inputs and the outputs of the steps before this one, as conversation turns" weft:"content"`
	Temperature    *float64      `json:"temperature,omitempty" weft:"min=0,max=2"`
	MaxTokens      int           `json:"maxTokens,omitempty" weft:"min=1,max=200000"`
	ResponseFormat any           `json:"responseFormat,omitempty" jsonschema:"text (default), json, or a JSON Schema the answer must satisfy"`
	MaxRepairs     int           `json:"maxRepairs,omitempty" jsonschema:"how often an answer that is not valid JSON for responseFormat is sent back to the model with the error" weft:"min=0,max=5,default=2"`
}

// chatRaw are the schemas of ChatIn's fields no Go type describes.
var chatRaw = map[string]string{"responseFormat": `{"anyOf":[{"enum":["text","json"]},{"type":"object"}]}`}

// ChatMessage is one message of a conversation.
type ChatMessage struct {
	Role       string         `json:"role" weft:"enum=system|user|assistant|tool"`
	Content    string         `json:"content,omitempty"`
	ToolCalls  []ChatToolCall `json:"toolCalls,omitempty" weft:"open"`
	ToolCallID string         `json:"toolCallId,omitempty"`
	Name       string         `json:"name,omitempty"`
}

// ChatToolCall is a call the model proposed.
type ChatToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty" jsonschema:"the arguments as the model wrote them: a JSON object, as text"`
}

// LLMOut is the output of llm (and the per-iteration answer of agent).
type LLMOut struct {
	Text         string         `json:"text" weft:"content"`
	JSON         any            `json:"json"`
	ToolCalls    []ChatToolCall `json:"toolCalls"`
	FinishReason string         `json:"finishReason"`
	Model        string         `json:"model"`
	Usage        TokenUsage     `json:"usage"`
	Warnings     []string       `json:"warnings,omitempty"`
}

// LLMIn is llm's input.
type LLMIn struct {
	ChatIn
	Tools             []any  `json:"tools,omitempty"`
	ToolChoice        string `json:"toolChoice,omitempty" jsonschema:"auto (the model decides), none (no tool calls), required (at least one call), or the name of one of the tools (that tool)" pattern:"^(auto|none|required|[a-zA-Z0-9_-]{1,64})$"`
	ParallelToolCalls *bool  `json:"parallelToolCalls,omitempty"`
}

// LLM is the name of the model-call tool (Completion).
const LLM = "llm"

// Completion is the llm tool: one chat completion, which agents call once per iteration.
var Completion = Declare[LLMIn, LLMOut](&Spec{
	Name: LLM, Domain: "generate", Kind: KindActivity, ModelCall: true,
	Title: "One chat completion",
	Description: "Send a prompt or messages to an OpenAI-compatible chat model. With tools the model may propose calls " +
		"(returned in toolCalls, not run); responseFormat json or a JSON Schema makes the answer parsed and validated. Streams its text while it runs.",
	RawInput: withRaw(chatRaw, map[string]string{"tools": `{"type":"array","maxItems":128,"items":{"anyOf":[{"type":"string","minLength":1},
		{"type":"object","required":["name"],"properties":{"name":{"type":"string","pattern":"^[a-zA-Z0-9_-]{1,64}$"},"description":{"type":"string"},"parameters":{"type":"object"}}}]}}`}),
	Timeout: 5 * time.Minute,
	// llm heartbeats the text streamed so far; the workflow gives it LLMHeartbeatTimeout.
	Heartbeat: 30 * time.Second, HeartbeatsItself: true,
	Annotations: Annotations{OpenWorld: true},
	Calls:       func(map[string]any) Calls { return Calls{LLM: 1} },
})

// AgentIn is agent's input.
type AgentIn struct {
	ChatIn
	Instructions      string       `json:"instructions,omitempty" jsonschema:"the system prompt, rendered again before each model call with the agent's state in scope: agent.iteration, agent.lastToolResult, agent.toolCalls (how many), agent.usage, agent.name" weft:"maxLength=100000"`
	Tools             []string     `json:"tools,omitempty" jsonschema:"weft tool names, or workflow:NAME for another workflow" weft:"maxItems=64,item.minLength=1"`
	MaxIterations     int          `json:"maxIterations,omitempty" weft:"min=1,max=100,default=10"`
	ParallelToolCalls bool         `json:"parallelToolCalls,omitempty" weft:"default=true"`
	Approve           []string     `json:"approve,omitempty" jsonschema:"tools whose calls wait for a person (\"*\": every tool)" weft:"item.minLength=1"`
	ToolResultLimit   int          `json:"toolResultLimit,omitempty" jsonschema:"characters of a tool result the model sees" weft:"min=100,max=1000000,default=8000"`
	OnLimit           string       `json:"onLimit,omitempty" jsonschema:"at maxIterations: fail the step, or return with stopReason max_iterations" weft:"enum=fail|return,default=fail"`
	StopWhen          any          `json:"stopWhen,omitempty" jsonschema:"stop before the model answers on its own: {\"tool\": NAME} after a call to that tool completes (its result is the answer), {\"textMatches\": REGEX} when the model's text matches; one condition or a list (the first that holds stops)"`
	Guardrails        *Guardrails  `json:"guardrails,omitempty" jsonschema:"checks of the input (before the first model call) and of the answer, with tripwire semantics: a check that trips fails the step, or returns with stopReason guardrail (onTrip: return)"`
	Handoffs          []Handoff    `json:"handoffs,omitempty" jsonschema:"agents this one can pass the conversation to, offered to the model as transfer_to_NAME tools: the agent handed to continues the conversation in this step with its own model, system prompt and tools, and answers" weft:"maxItems=16"`
	Resume            *AgentResume `json:"resume,omitempty" jsonschema:"start from a recorded conversation instead of iteration 1 (weft fork writes it): the model and tool results in it are not asked again"`
	ToolChoice        string       `json:"toolChoice,omitempty" jsonschema:"sent with each model call: auto (the model decides), none (no tool calls), required (at least one call), or a tool as tools names it (that tool); required and a tool hold until the agent has called tools (see resetToolChoice)" weft:"minLength=1"`
	ResetToolChoice   bool         `json:"resetToolChoice,omitempty" jsonschema:"once the agent has called tools, its later model calls go with auto instead of a toolChoice of required or a tool, so a forced call cannot loop until maxIterations (as the OpenAI Agents SDK's reset_tool_choice); false keeps toolChoice for every call (then stop through stopWhen or maxIterations)" weft:"default=true"`
	MaxHandoffs       int          `json:"maxHandoffs,omitempty" jsonschema:"the most handoffs the step's agents may make in all (A to B to A counts 2): one more fails the step, or with onLimit return returns with stopReason max_handoffs" weft:"min=1,max=100,default=10"`
}

// AgentResume is where a forked agent starts: the conversation and tool calls of a recorded run
// up to an iteration.
type AgentResume struct {
	Messages  []any  `json:"messages" jsonschema:"the conversation so far (without instructions), ending where the agent goes on"`
	ToolCalls []any  `json:"toolCalls,omitempty" jsonschema:"the tool calls made so far, as the agent's output records them"`
	Iteration int    `json:"iteration" jsonschema:"the iterations done: the next model call is iteration+1" weft:"min=0,max=100"`
	Agent     string `json:"agent,omitempty" jsonschema:"with handoffs: the agent that goes on (a handoff's name; default the step's)"`
	From      string `json:"from,omitempty" jsonschema:"the run it was forked from"`
	Edited    bool   `json:"edited,omitempty" jsonschema:"the last user message is the fork's own (weft fork --message): the input guardrails check it"`
}

// Handoff is an agent the conversation can be passed to.
type Handoff struct {
	Name        string       `json:"name" jsonschema:"the model sees transfer_to_NAME" pattern:"^[a-zA-Z0-9_-]{1,48}$"`
	Description string       `json:"description,omitempty" jsonschema:"when to hand off: the transfer tool's description" weft:"maxLength=2000"`
	Agent       HandoffAgent `json:"agent"`
}

// HandoffAgent is the agent a handoff passes the conversation to: what differs from the step's.
type HandoffAgent struct {
	Model           string   `json:"model,omitempty" jsonschema:"default: the step's model" weft:"minLength=1"`
	System          string   `json:"system,omitempty" jsonschema:"replaces the step's system prompt (and instructions) from the handoff on" weft:"maxLength=100000"`
	Tools           []string `json:"tools,omitempty" jsonschema:"its tools (none by default), named as the step's tools are" weft:"maxItems=64,item.minLength=1"`
	Approve         []string `json:"approve,omitempty" weft:"item.minLength=1"`
	ToolChoice      string   `json:"toolChoice,omitempty" weft:"minLength=1"`
	ResetToolChoice bool     `json:"resetToolChoice,omitempty" jsonschema:"as the step's: once this agent has called tools it goes on with auto" weft:"default=true"`
	Handoffs        []string `json:"handoffs,omitempty" jsonschema:"the agents this one can pass the conversation to: names of the step's handoffs, or the step's id for the step's own agent (none by default)" weft:"maxItems=16,item.minLength=1"`
	Temperature     *float64 `json:"temperature,omitempty" weft:"min=0,max=2"`
	MaxTokens       int      `json:"maxTokens,omitempty" weft:"min=1,max=200000"`
	ResponseFormat  any      `json:"responseFormat,omitempty" jsonschema:"text, json, or a JSON Schema (default: the step's)"`
}

// Guardrails are an agent's input and output checks.
type Guardrails struct {
	Input  []Guardrail `json:"input,omitempty" jsonschema:"checks of the prompt (or the last user message) before the first model call" weft:"maxItems=16"`
	Output []Guardrail `json:"output,omitempty" jsonschema:"checks of the answer (its JSON when the answer is JSON) before the step returns it" weft:"maxItems=16"`
	OnTrip string      `json:"onTrip,omitempty" jsonschema:"when a check trips: fail the step, or return with stopReason guardrail and no text" weft:"enum=fail|return,default=fail"`
}

// Guardrail is one check: exactly one of schema, forbid, require and judge.
type Guardrail struct {
	Name    string `json:"name" jsonschema:"names the check in errors and in the output" weft:"minLength=1,maxLength=64"`
	Schema  any    `json:"schema,omitempty" jsonschema:"a JSON Schema the text, read as JSON, must satisfy" weft:"type=object"`
	Forbid  string `json:"forbid,omitempty" jsonschema:"a regular expression (RE2) the text must not match" weft:"minLength=1"`
	Require string `json:"require,omitempty" jsonschema:"a regular expression (RE2) the text must match" weft:"minLength=1"`
	Judge   string `json:"judge,omitempty" jsonschema:"a rubric a model reads with the text and answers pass or fail (one llm call)" weft:"minLength=1,maxLength=20000"`
	Model   string `json:"model,omitempty" jsonschema:"the judge's model (default: the agent's)" weft:"minLength=1"`
}

// stopCondition is one condition of an agent's stopWhen.
const stopCondition = `{"type":"object","minProperties":1,"additionalProperties":false,"properties":{
	"tool":{"type":"string","minLength":1,"description":"stop after a call to this tool (as tools names it) completes; its result is the answer"},
	"textMatches":{"type":"string","minLength":1,"description":"stop when the model's text matches this regular expression (RE2)"}}}`

// agentRaw are the schemas of AgentIn's fields no Go type describes.
var agentRaw = map[string]string{
	"stopWhen": `{"anyOf":[` + stopCondition + `,{"type":"array","minItems":1,"maxItems":16,"items":` + stopCondition + `}]}`,
}

// AgentOut is agent's output.
type AgentOut struct {
	Text       string          `json:"text" weft:"content"`
	JSON       any             `json:"json"`
	Messages   []any           `json:"messages"`
	ToolCalls  []AgentToolCall `json:"toolCalls"`
	Iterations int             `json:"iterations"`
	StopReason string          `json:"stopReason" jsonschema:"final_answer, max_iterations, max_handoffs, tool_called or text_matched (stopWhen), guardrail"`
	StoppedBy  string          `json:"stoppedBy,omitempty" jsonschema:"the tool or pattern of the stopWhen condition that stopped the agent"`
	Guardrail  *GuardrailTrip  `json:"guardrail,omitempty" jsonschema:"the check that tripped (stopReason guardrail)"`
	Agent      string          `json:"agent,omitempty" jsonschema:"with handoffs: the agent that answered (the step's id, or a handoff's name)"`
	Handoffs   []HandoffMade   `json:"handoffs,omitempty" jsonschema:"with handoffs: the handoffs made, in order"`
	Usage      TokenUsage      `json:"usage"`
}

// HandoffMade is one handoff an agent made.
type HandoffMade struct {
	Iteration int    `json:"iteration"`
	From      string `json:"from"`
	To        string `json:"to"`
}

// GuardrailTrip is a guardrail that tripped.
type GuardrailTrip struct {
	Name   string `json:"name"`
	Stage  string `json:"stage" jsonschema:"input or output"`
	Reason string `json:"reason"`
}

// AgentToolCall is one tool call an agent made.
type AgentToolCall struct {
	Iteration  int    `json:"iteration"`
	ID         string `json:"id"`
	Tool       string `json:"tool"`
	Status     string `json:"status"`
	Arguments  any    `json:"arguments"`
	Result     any    `json:"result"`
	Error      string `json:"error"`
	DurationMs int64  `json:"durationMs"`
}

// Agent is the tool-calling loop the workflow runs.
var Agent = Declare[AgentIn, AgentOut](&Spec{
	Name: "agent", Domain: "generate", Kind: KindAgent,
	Title: "Agent (tool-calling loop)",
	Description: "A model that calls tools in a loop until it answers: each model call is one llm activity and each tool call " +
		"its own activity (or child workflow for \"workflow:NAME\" tools). Calls to tools listed in approve pause for a person.",
	RawInput:    withRaw(chatRaw, agentRaw),
	Lazy:        []string{"instructions", "resume"},
	Timeout:     5 * time.Minute,
	Annotations: Annotations{OpenWorld: true},
	Calls:       func(in map[string]any) Calls { return Calls{LLM: intInput(in, "maxIterations", 10)} },
})

// withRaw joins raw schema maps.
func withRaw(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// Workflow runs another workflow as a child.
var Workflow = Declare[WorkflowIn, any](&Spec{
	Name: "workflow", Domain: "control", Kind: KindChild,
	Title:       "Run another workflow",
	Description: "Run a workflow (a built-in template, or a file next to this one) as a child workflow; its output is this step's output. Reviews inside it are listed under this run.",
	Annotations: Annotations{OpenWorld: true},
})

// WorkflowIn is workflow's input.
type WorkflowIn struct {
	Workflow string         `json:"workflow" jsonschema:"the name of a built-in template or of a file in the workflows directory (or next to this file): a name, not a path" weft:"minLength=1"`
	Inputs   map[string]any `json:"inputs,omitempty"`
}

// WorkflowToolPrefix marks an agent tool that runs another workflow: "workflow:NAME".
const WorkflowToolPrefix = "workflow:"

// MCPToolPrefix marks agent tools from an external MCP server the file declares in mcpServers:
// "mcp:NAME" (every tool of the server) or "mcp:NAME/TOOL" (one).
const MCPToolPrefix = "mcp:"

// Activities agents use to reach external MCP servers. They are not step tools: an agent lists a
// server's tools with the first and calls one with the second.
//
// A server the file declares stateful is reached in a session: the requests carry "session" (the
// run's session id), run on the one worker that holds the server's connection, and
// ActivityMCPClose ({"session": ID}) closes the session's connections when the run ends.
const (
	ActivityMCPList  = "weft.mcp.list"
	ActivityMCPCall  = "weft.mcp.call"
	ActivityMCPClose = "weft.mcp.close"
)

// ActivityBlobsPut stores values in the knowledge store and returns a reference for each
// ({"values": [...]} -> {"refs": [...]}): a large forEach's batch hands back references when its
// items' outputs together are more than a workflow result can carry.
const ActivityBlobsPut = "weft.blobs.put"

// MCPTimeout bounds one list or call of an external MCP server.
const MCPTimeout = 2 * time.Minute
