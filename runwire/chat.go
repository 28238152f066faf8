package runwire

import (
	"strings"

	"github.com/weftworks/weft/workflows/dsl"
)

// ChatSession is a chat's configuration and conversation; it is also the input of each run of
// the chat workflow and the answer of its QueryChat query.
type ChatSession struct {
	Model      string   `json:"model,omitempty"`
	System     string   `json:"system,omitempty"`
	Tools      []string `json:"tools"`
	Approve    []string `json:"approve,omitempty"`
	DB         string   `json:"db,omitempty"`
	Collection string   `json:"collection,omitempty"`
	// MemoryScope, when set, is the scope remember/recall use by default.
	MemoryScope string `json:"memoryScope,omitempty"`
	// MCPServers are external MCP servers whose tools the chat may call (Tools lists "mcp:NAME").
	MCPServers map[string]dsl.MCPServer `json:"mcpServers,omitempty"`
	// Messages is the conversation so far, as the model sees it.
	Messages []any `json:"messages,omitempty"`
	// Turns summarise the turns (the newest last; continued runs keep the last 20).
	Turns []ChatTurn `json:"turns,omitempty"`
	// Usage totals every turn of the session, across continued runs.
	Usage ChatUsage `json:"usage"`
	// TurnsPerRun overrides workflows.DefaultChatTurnsPerRun (tests).
	TurnsPerRun int `json:"turnsPerRun,omitempty"`
	// Continued counts the runs before this one.
	Continued int `json:"continued,omitempty"`
	// Origin and StartedBy: who started the session (RunRequest.origin, started_by). A session a
	// client started reaches only the MCP servers the operator declared and the memory of its
	// own identity; only that identity may send it messages.
	Origin    string `json:"origin,omitempty"`
	StartedBy string `json:"startedBy,omitempty"`
}

// ChatUsage totals tokens and cost.
type ChatUsage struct {
	PromptTokens     int64   `json:"promptTokens"`
	CompletionTokens int64   `json:"completionTokens"`
	TotalTokens      int64   `json:"totalTokens"`
	CostUSD          float64 `json:"costUsd"`
	Calls            int64   `json:"calls"`
}

// ChatTurn is one question and its answer with the tool calls made for it.
type ChatTurn struct {
	N         int       `json:"n"`
	Question  string    `json:"question"`
	Answer    string    `json:"answer"`
	ToolCalls []any     `json:"toolCalls"`
	Usage     ChatUsage `json:"usage"`
	StartedAt string    `json:"startedAt"`
	Ms        int64     `json:"durationMs"`
}

// ChatMessage is what the user sends.
type ChatMessage struct {
	Text string `json:"text"`
	// From is the authenticated identity that sends it ("" : the operator). A session started by
	// one identity takes messages from it and from the operator only.
	From string `json:"from,omitempty"`
}

// ChatReply is a turn's answer.
type ChatReply struct {
	Turn ChatTurn `json:"turn"`
}

// ScopeOwner is the identity a memory scope belongs to: its last ":" segment ("support:ana" is
// ana's). A session (or run) a client started reaches only the memory of its own identity.
func ScopeOwner(scope string) string {
	return scope[strings.LastIndex(scope, ":")+1:]
}
