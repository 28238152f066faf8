package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/weftworks/weft/activities/provider"
)

// Server is how to reach one MCP server: a command for stdio, or a URL whose bearer key is read
// from the environment variable KeyEnv on the worker (never from the file).
type Server struct {
	Name    string            `json:"name"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	KeyEnv  string            `json:"keyEnv,omitempty"`
	// HTTPClient, when set, is the client URL servers are reached with (the worker's
	// private-address guard); nil: http.DefaultClient's behaviour.
	HTTPClient *http.Client `json:"-"`
}

// Tool is one tool a server offers.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	InputSchema any    `json:"inputSchema"`
	ReadOnly    bool   `json:"readOnly"`
	Destructive bool   `json:"destructive"`
}

// MaxResultBytes caps a tool result: results go into workflow history.
const MaxResultBytes = 1 << 20

// ErrConfig marks a server that cannot work as configured (no retry helps).
var ErrConfig = errors.New("MCP server configuration")

func (s Server) label() string { return "MCP server " + s.Name }

func connect(ctx context.Context, s Server, getenv func(string) string) (*client.Client, error) {
	var c *client.Client
	var err error
	switch {
	case s.Command != "":
		if _, lerr := exec.LookPath(s.Command); lerr != nil {
			return nil, fmt.Errorf("%w: %s: command %q not found on the worker (%v): install it or fix mcpServers.%s.command", ErrConfig, s.label(), s.Command, lerr, s.Name)
		}
		env := make([]string, 0, len(s.Env))
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+s.Env[k])
		}
		c, err = client.NewStdioMCPClient(s.Command, env, s.Args...)
	case s.URL != "":
		var opts []transport.StreamableHTTPCOption
		if s.KeyEnv != "" {
			key := getenv(s.KeyEnv)
			if key == "" {
				return nil, fmt.Errorf("%w: %s needs a key: set %s on the worker", ErrConfig, s.label(), s.KeyEnv)
			}
			opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
		}
		if s.HTTPClient != nil {
			opts = append(opts, transport.WithHTTPBasicClient(s.HTTPClient))
		}
		c, err = client.NewStreamableHttpClient(s.URL, opts...)
		if err == nil {
			err = c.Start(ctx)
		}
	default:
		return nil, fmt.Errorf("%w: %s has neither command nor url", ErrConfig, s.label())
	}
	if err != nil {
		return nil, &provider.Error{Provider: s.label(), Retryable: true, Msg: "cannot start: " + err.Error(), Err: err}
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "weft", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		_ = c.Close()
		return nil, down(s, "initialize", err)
	}
	return c, nil
}

func down(s Server, what string, err error) error {
	return &provider.Error{Provider: s.label(), Retryable: true, Msg: what + " failed (is the server up?): " + err.Error(), Err: err}
}

// ListTools returns the server's tools, sorted by name, over a connection of its own.
func ListTools(ctx context.Context, s Server, getenv func(string) string) ([]Tool, error) {
	c, err := connect(ctx, s, getenv)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return listTools(ctx, s, c)
}

func listTools(ctx context.Context, s Server, c *client.Client) ([]Tool, error) {
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, down(s, "tools/list", err)
	}
	out := make([]Tool, 0, len(res.Tools))
	for _, t := range res.Tools {
		var schema any
		b, _ := json.Marshal(t.InputSchema)
		_ = json.Unmarshal(b, &schema)
		tool := Tool{Name: t.Name, Description: t.Description, InputSchema: schema, Destructive: true}
		// MCP's defaults: a tool that does not say it is read-only may change things, and one
		// that does not say otherwise may destroy them.
		if t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint {
			tool.ReadOnly, tool.Destructive = true, false
		} else if t.Annotations.DestructiveHint != nil {
			tool.Destructive = *t.Annotations.DestructiveHint
		}
		out = append(out, tool)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Result is a tool call's answer.
type Result struct {
	Text       string `json:"text"`
	Structured any    `json:"structured,omitempty"`
	IsError    bool   `json:"isError,omitempty"`
}

// Call calls one tool over a connection of its own.
func Call(ctx context.Context, s Server, tool string, args map[string]any, getenv func(string) string) (*Result, error) {
	c, err := connect(ctx, s, getenv)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return call(ctx, s, c, tool, args)
}

func call(ctx context.Context, s Server, c *client.Client, tool string, args map[string]any) (*Result, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, down(s, "tools/call "+tool, err)
	}
	var b strings.Builder
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
		if b.Len() > MaxResultBytes {
			break
		}
	}
	if b.Len() > MaxResultBytes {
		return nil, fmt.Errorf("%w: %s: %s returned more than %d KiB, which weft does not keep in history: ask the tool for less", ErrTooLarge, s.label(), tool, MaxResultBytes>>10)
	}
	out := &Result{Text: b.String(), Structured: res.StructuredContent, IsError: res.IsError}
	if sb, err := json.Marshal(res.StructuredContent); err == nil && len(sb) > MaxResultBytes {
		out.Structured = nil
	}
	return out, nil
}

// ErrTooLarge marks a result too large to keep.
var ErrTooLarge = errors.New("result too large")
