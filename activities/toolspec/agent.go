package toolspec

import "time"

// chatInputs are the inputs llm and agent share, as JSON Schema properties.
const chatInputs = `
  "model":{"type":"string","minLength":1,"description":"model name or alias (fast, smart, ...); default WEFT_CHAT_MODEL"},
  "system":{"type":"string","maxLength":100000},
  "prompt":{"type":"string","minLength":1,"maxLength":400000},
  "messages":{"type":"array","maxItems":4000,"items":{"type":"object","required":["role"],"properties":{
    "role":{"enum":["system","user","assistant","tool"]},"content":{"type":"string"},
    "toolCalls":{"type":"array"},"toolCallId":{"type":"string"},"name":{"type":"string"}}}},
  "context":{"description":"text, documents (rendered as a numbered list), any value as JSON, or \"auto\": the outputs of the steps this one depends on"},
  "temperature":{"type":"number","minimum":0,"maximum":2},
  "maxTokens":{"type":"integer","minimum":1,"maximum":200000},
  "responseFormat":{"description":"text (default), json, or a JSON Schema the answer must satisfy","anyOf":[{"enum":["text","json"]},{"type":"object"}]},
  "maxRepairs":{"type":"integer","minimum":0,"maximum":5,"default":2,"description":"how often an answer that is not valid JSON for responseFormat is sent back to the model with the error"}`

// LLMOutput is the output shape of llm (and the per-iteration answer of agent).
const LLMOutput = `{"type":"object","properties":{"text":{"type":"string"},"json":{},
  "toolCalls":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"},"arguments":{"type":"string"}}}},
  "finishReason":{"type":"string"},"model":{"type":"string"},
  "usage":{"type":"object","properties":{"promptTokens":{"type":"integer"},"completionTokens":{"type":"integer"},"totalTokens":{"type":"integer"},"costUsd":{"type":"number"}}}}}`

// LLM is the model-call tool agents call once per iteration.
const LLM = "llm"

func init() {
	register(&Spec{
		Name: LLM, Domain: "generate", Kind: KindActivity, ModelCall: true,
		Title: "One chat completion",
		Description: "Send a prompt or messages to an OpenAI-compatible chat model. With tools the model may propose calls " +
			"(returned in toolCalls, not run); responseFormat json or a JSON Schema makes the answer parsed and validated. Streams its text while it runs.",
		Input: `{"type":"object","additionalProperties":false,"properties":{` + chatInputs + `,
		  "tools":{"type":"array","maxItems":128,"items":{"anyOf":[{"type":"string","minLength":1},
		    {"type":"object","required":["name"],"properties":{"name":{"type":"string","pattern":"^[a-zA-Z0-9_-]{1,64}$"},"description":{"type":"string"},"parameters":{"type":"object"}}}]}},
		  "toolChoice":{"enum":["auto","none","required"]},
		  "parallelToolCalls":{"type":"boolean"}}}`,
		Output:  LLMOutput,
		Timeout: 5 * time.Minute,
		// llm heartbeats the text streamed so far; the workflow gives it LLMHeartbeatTimeout.
		Heartbeat: 30 * time.Second, HeartbeatsItself: true,
		Annotations: Annotations{OpenWorld: true},
		Calls:       func(map[string]any) Calls { return Calls{LLM: 1} },
	})
	register(&Spec{
		Name: "agent", Domain: "generate", Kind: KindAgent,
		Title: "Agent (tool-calling loop)",
		Description: "A model that calls tools in a loop until it answers: each model call is one llm activity and each tool call " +
			"its own activity (or child workflow for \"workflow:NAME\" tools). Calls to tools listed in approve pause for a person.",
		Input: `{"type":"object","additionalProperties":false,"properties":{` + chatInputs + `,
		  "tools":{"type":"array","maxItems":64,"items":{"type":"string","minLength":1},"description":"weft tool names, or workflow:NAME for another workflow"},
		  "maxIterations":{"type":"integer","minimum":1,"maximum":100,"default":10},
		  "parallelToolCalls":{"type":"boolean","default":true},
		  "approve":{"type":"array","items":{"type":"string","minLength":1},"description":"tools whose calls wait for a person (\"*\": every tool)"},
		  "toolResultLimit":{"type":"integer","minimum":100,"maximum":1000000,"default":8000,"description":"characters of a tool result the model sees"},
		  "onLimit":{"enum":["fail","return"],"default":"fail","description":"at maxIterations: fail the step, or return with stopReason max_iterations"}}}`,
		Output: `{"type":"object","properties":{"text":{"type":"string"},"json":{},"messages":{"type":"array"},
		  "toolCalls":{"type":"array","items":{"type":"object","properties":{"iteration":{"type":"integer"},"tool":{"type":"string"},"arguments":{},"result":{},"error":{"type":"string"},"durationMs":{"type":"integer"}}}},
		  "iterations":{"type":"integer"},"stopReason":{"type":"string"},
		  "usage":{"type":"object","properties":{"promptTokens":{"type":"integer"},"completionTokens":{"type":"integer"},"totalTokens":{"type":"integer"},"costUsd":{"type":"number"}}}}}`,
		Timeout:     5 * time.Minute,
		Annotations: Annotations{OpenWorld: true},
		Calls:       func(in map[string]any) Calls { return Calls{LLM: intInput(in, "maxIterations", 10)} },
	})
	register(&Spec{
		Name: "workflow", Domain: "control", Kind: KindChild,
		Title:       "Run another workflow",
		Description: "Run a workflow (a built-in template, or a file next to this one) as a child workflow; its output is this step's output. Reviews inside it are listed under this run.",
		Input: `{"type":"object","required":["workflow"],"additionalProperties":false,"properties":{
		  "workflow":{"type":"string","minLength":1,"description":"the name of a built-in template or of a file in the workflows directory (or next to this file): a name, not a path"},
		  "inputs":{"type":"object"}}}`,
		Output:      `{}`,
		Annotations: Annotations{OpenWorld: true},
	})
}

// WorkflowToolPrefix marks an agent tool that runs another workflow: "workflow:NAME".
const WorkflowToolPrefix = "workflow:"

// MCPToolPrefix marks agent tools from an external MCP server the file declares in mcpServers:
// "mcp:NAME" (every tool of the server) or "mcp:NAME/TOOL" (one).
const MCPToolPrefix = "mcp:"

// Activities agents use to reach external MCP servers. They are not step tools: an agent lists a
// server's tools with the first and calls one with the second.
const (
	ActivityMCPList = "weft.mcp.list"
	ActivityMCPCall = "weft.mcp.call"
)

// ActivityBlobsPut stores values in the knowledge store and returns a reference for each
// ({"values": [...]} -> {"refs": [...]}): a large forEach's batch hands back references when its
// items' outputs together are more than a workflow result can carry.
const ActivityBlobsPut = "weft.blobs.put"

// MCPTimeout bounds one list or call of an external MCP server.
const MCPTimeout = 2 * time.Minute
