package dsl

import (
	"strings"

	"github.com/weftworks/weft/internal/webhook"
)

// Definition is a workflow file in the step format. Field order and JSON names are the file
// format; ToJSON/FromJSON in builder.go round-trip it exactly.
type Definition struct {
	Schema      string           `json:"$schema,omitempty"`
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Version     string           `json:"version,omitempty"`
	Inputs      map[string]Input `json:"inputs,omitempty"`
	Defaults    map[string]any   `json:"defaults,omitempty"`
	Steps       []Step           `json:"steps"`
	Output      any              `json:"output,omitempty"`
	MCP         *MCPOptions      `json:"mcp,omitempty"`
	// Branding ({icon, color}) and Formatters ({default, title, arrayField, fields, ...}) are
	// presentation fields of vai files: kept as written, used by weft run and plan.
	Branding   map[string]any `json:"branding,omitempty"`
	Formatters map[string]any `json:"formatters,omitempty"`
	// MCPServers are external MCP servers whose tools agents may call ("mcp:NAME").
	MCPServers map[string]MCPServer `json:"mcpServers,omitempty"`
	// Schedule is when `weft schedule create ID FILE` runs the workflow unless flags say otherwise.
	Schedule *Schedule `json:"schedule,omitempty"`
	// Notify sends the run's events to webhooks: names the operator declared (WEFT_WEBHOOKS)
	// or, in the operator's own files, URLs (notify.go).
	Notify []webhook.Entry `json:"notify,omitempty"`
	// Budget bounds what the run's model calls may use in all (budget.go).
	Budget *Budget `json:"budget,omitempty"`
}

// Budget bounds the tokens and the cost of model calls: the file's (the whole run) or an agent or
// llm step's. A model call is not made when it would pass a limit (docs/agents.md says how it is
// estimated); zero fields are unset.
type Budget struct {
	MaxTokens  int64   `json:"maxTokens,omitempty"`
	MaxCostUSD float64 `json:"maxCostUsd,omitempty"`
}

// Schedule declares when a workflow runs: a cron expression or an interval, with its inputs.
type Schedule struct {
	Cron    string         `json:"cron,omitempty"`
	Every   string         `json:"every,omitempty"`
	Overlap string         `json:"overlap,omitempty"`
	Inputs  map[string]any `json:"inputs,omitempty"`
}

// MCPServer is how the worker reaches an external MCP server: a command (stdio) or a URL with a
// bearer key read from the worker's environment variable KeyEnv.
type MCPServer struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	KeyEnv  string            `json:"keyEnv,omitempty"`
	// Trust lets the agent call the server's tools that may change or destroy things without an
	// approval; by default such calls wait for a person.
	Trust bool `json:"trust,omitempty"`
	// Stateful keeps one connection to the server (one process for a command) for the whole run
	// or chat, on one worker, so the server keeps its state between the run's calls; by default
	// every call gets a fresh connection.
	Stateful bool `json:"stateful,omitempty"`
}

// Input declares one workflow parameter.
type Input struct {
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Default     any    `json:"default,omitempty"`
}

// Step is one node of the pipeline.
type Step struct {
	ID              string         `json:"id"`
	Name            string         `json:"name,omitempty"`
	Tool            string         `json:"tool"`
	Inputs          map[string]any `json:"inputs"`
	Condition       string         `json:"condition,omitempty"`
	ForEach         string         `json:"forEach,omitempty"`
	Concurrency     int            `json:"concurrency,omitempty"`
	ContinueOnError bool           `json:"continueOnError,omitempty"`
	// Batch false runs a forEach or loop over a batching tool (embed) one call per item instead of
	// grouping its items into provider requests (nil: batch).
	Batch     *bool    `json:"batch,omitempty"`
	DependsOn []string `json:"dependsOn,omitempty"`
	Timeout   string   `json:"timeout,omitempty"`
	Retry     *Retry   `json:"retry,omitempty"`
	// Budget bounds the model calls of an agent or llm step (Definition.Budget).
	Budget *Budget `json:"budget,omitempty"`
}

// Retry overrides a step's retry policy; zero fields keep the tool's defaults.
type Retry struct {
	MaxAttempts     int     `json:"maxAttempts,omitempty"`
	InitialInterval string  `json:"initialInterval,omitempty"`
	Backoff         float64 `json:"backoff,omitempty"`
	MaxInterval     string  `json:"maxInterval,omitempty"`
}

// MCPOptions controls how the gateway offers the workflow to agents.
type MCPOptions struct {
	Expose      bool   `json:"expose,omitempty"`
	Description string `json:"description,omitempty"`
}

// Title returns the step's display name: its name, or its id.
func (s *Step) Title() string {
	if s.Name != "" {
		return s.Name
	}
	return s.ID
}

// InputTypes are the declared types a workflow input may have.
var InputTypes = []string{"string", "number", "boolean", "array", "object"}

// Slug turns a workflow name into lower-case letters, digits and dashes (at most 40), for file
// names and run ids; fallback when nothing is left.
func Slug(name, fallback string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 40 {
		out = strings.Trim(out[:40], "-")
	}
	if out == "" {
		return fallback
	}
	return out
}
