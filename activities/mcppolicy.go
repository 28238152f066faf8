package activities

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/weftworks/weft/activities/mcpclient"
	"github.com/weftworks/weft/internal/safefile"
)

// MCPPolicy is the operator's declaration of the external MCP servers agents may reach
// (WEFT_MCP_SERVERS names its file). A workflow file refers to one by name; a definition an
// authenticated client sent may reach no other (docs/security.md).
type MCPPolicy struct {
	// Servers by name: how the worker starts or reaches each, whose key it sends, and whether
	// its tools that change things may run without an approval.
	Servers map[string]MCPPolicyServer `json:"mcpServers"`
}

// MCPPolicyServer is one operator-declared server.
type MCPPolicyServer struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	KeyEnv  string            `json:"keyEnv,omitempty"`
	Trust   bool              `json:"trust,omitempty"`
}

// MaxPolicyBytes bounds the policy file.
const MaxPolicyBytes = 1 << 20

var serverName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,40}$`)

// LoadMCPPolicy reads the operator's MCP server file ("" : none declared). The file is
// {"mcpServers": {"NAME": {"command": ..., "args": [...], "env": {...}} | {"url": ..., "keyEnv": ...}}},
// the same shape as a workflow file's mcpServers, so a declaration can be moved between them.
func LoadMCPPolicy(path string) (MCPPolicy, error) {
	if path == "" {
		return MCPPolicy{}, nil
	}
	data, err := safefile.ReadHint(path, MaxPolicyBytes, "WEFT_MCP_SERVERS", "point WEFT_MCP_SERVERS at the JSON file that declares the servers")
	if err != nil {
		if refused := (*safefile.Error)(nil); errors.As(err, &refused) {
			return MCPPolicy{}, err
		}
		return MCPPolicy{}, fmt.Errorf("WEFT_MCP_SERVERS: %w", err)
	}
	var p MCPPolicy
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return MCPPolicy{}, fmt.Errorf("WEFT_MCP_SERVERS: %s: %w (expected {\"mcpServers\": {\"NAME\": {\"command\": ...} or {\"url\": ...}}})", path, err)
	}
	for _, name := range p.Names() {
		s := p.Servers[name]
		switch {
		case !serverName.MatchString(name):
			return MCPPolicy{}, fmt.Errorf("WEFT_MCP_SERVERS: %s: server name %q: start with a letter, then letters, digits, _ and - (up to 41), as in workflow files", path, name)
		case (s.Command == "") == (s.URL == ""):
			return MCPPolicy{}, fmt.Errorf("WEFT_MCP_SERVERS: %s: server %q needs exactly one of command (stdio) and url (streamable HTTP)", path, name)
		}
	}
	return p, nil
}

// Names lists the declared servers, sorted.
func (p MCPPolicy) Names() []string {
	out := make([]string, 0, len(p.Servers))
	for n := range p.Servers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// errNotDeclared is the refusal of a server the operator did not declare.
func (p MCPPolicy) errNotDeclared(name, why string) error {
	declared := "none are declared"
	if n := p.Names(); len(n) > 0 {
		declared = "declared: " + strings.Join(n, ", ")
	}
	return fmt.Errorf("%w: MCP server %q is not declared by the operator (%s): %s; an operator allows it on purpose by adding it to the worker's WEFT_MCP_SERVERS file", mcpclient.ErrConfig, name, declared, why)
}

// resolveMCPServer decides how the worker reaches the server an agent names. The operator's
// declaration of that name wins over the file's. A definition a client sent ("origin":
// "client") reaches only operator-declared servers; the operator's own files may declare their
// own commands and URLs. trusted reports whether the server's tools may change things without
// an approval. Reached URLs not declared by the operator go through the http tool's
// private-address guard (WEFT_HTTP_ALLOW).
func (t *Tools) resolveMCPServer(in map[string]any) (s mcpclient.Server, trusted, operator bool, err error) {
	fromFile, err := mcpServer(in["server"])
	if err != nil {
		return s, false, false, fmt.Errorf("%w: mcp server: %v", mcpclient.ErrConfig, err)
	}
	if t.mcpPolicyErr != nil {
		return s, false, false, fmt.Errorf("%w: %v", mcpclient.ErrConfig, t.mcpPolicyErr)
	}
	if d, ok := t.mcpPolicy.Servers[fromFile.Name]; ok {
		return mcpclient.Server{Name: fromFile.Name, Command: d.Command, Args: d.Args, Env: d.Env, URL: d.URL, KeyEnv: d.KeyEnv}, d.Trust, true, nil
	}
	origin, _ := in["origin"].(string)
	if origin != "" {
		return s, false, false, t.mcpPolicy.errNotDeclared(fromFile.Name, "a definition sent by a client may not start processes, name environment variables or reach addresses itself")
	}
	if fromFile.Command == "" && fromFile.URL == "" {
		return s, false, false, t.mcpPolicy.errNotDeclared(fromFile.Name, "the workflow file declares it without a command or url, as a reference to the operator's")
	}
	trust, _ := in["trust"].(bool)
	return fromFile, trust, false, nil
}
