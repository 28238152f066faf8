package vaipkg

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/fuzzy"
	"github.com/weftworks/weft/internal/netaddr"
	"github.com/weftworks/weft/workflows/dsl"
)

// Severities of a finding: an error makes `weft check` exit 1.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityNote    = "note"
)

// Finding is one thing Check found: where (the step), what, and what to change.
type Finding struct {
	File     string `json:"file"`
	Step     string `json:"step,omitempty"`
	Severity string `json:"severity"`
	// Check names the rule: unknown-tool, invalid, write-without-review, private-address,
	// no-description, package.
	Check   string `json:"check"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// String is the finding as weft check prints it, one line. Text that comes from the file (a host,
// a field's name) is written with the characters a terminal acts on (Unsafe) as \u escapes.
func (f Finding) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: ", escapeUnsafe(f.File), f.Severity)
	if f.Step != "" {
		fmt.Fprintf(&b, "step %q: ", f.Step)
	}
	b.WriteString(escapeUnsafe(f.Message))
	if f.Fix != "" {
		b.WriteString(" (" + escapeUnsafe(f.Fix) + ")")
	}
	return b.String()
}

// escapeUnsafe writes the runes of s a terminal acts on (Unsafe) as \uXXXX, and a line break as
// \n, so that s prints as one inert line.
func escapeUnsafe(s string) string {
	if !strings.ContainsFunc(s, Unsafe) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case Unsafe(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// writeTool reports whether steps of the tool write to the knowledge store (ingest, code_index,
// remember): what the registry's call estimate counts as a database write.
func writeTool(s *toolspec.Spec) bool {
	return s != nil && s.Kind == toolspec.KindActivity && s.EstimateCalls(nil).DatabaseWrite > 0
}

// Check runs vai's security and quality checks on a workflow file: unknown tools and an invalid
// file are errors; a write to the knowledge store with no review step before it, and an http step
// whose URL (or a code_index step whose repo) is a literal private, loopback or link-local
// address, are warnings (a loop's step
// included); an agent's tools are judged by agentFindings; a workflow, step or input without a
// description is a note.
func Check(file string, data []byte) []Finding {
	return CheckAs(file, data, "")
}

// CheckAs is Check of a file a package says is vai's, vai saying why (Manifest.VaiDialect; ""
// for none): the file is read as LoadWorkflow reads it.
func CheckAs(file string, data []byte, vai string) []Finding {
	w, err := LoadWorkflow(file, data, vai)
	return check(file, data, w, err)
}

// LoadWorkflow compiles a workflow file: in vai's dialect when vai says why it is vai's (a
// package's workflow: Manifest.VaiDialect), else as dsl.Load does. A file's "$schema" naming
// weft still decides (dsl.DetectDialect).
func LoadWorkflow(file string, data []byte, vai string) (*dsl.Workflow, error) {
	if vai != "" {
		return dsl.LoadVai(file, data, vai)
	}
	return dsl.Load(file, data)
}

// CheckPackage runs Check on a package directory before it is installed or published: what an
// install would say of its package.json (scripts, its name, the compatibility fields) as warnings
// of check "package" on DIR/package.json, then Check's findings on its workflow file. A package
// weft could not read (no package.json, a bad name or version, no workflow file, a link) is one
// error finding saying why.
func CheckPackage(dir string) []Finding {
	manifest := filepath.ToSlash(filepath.Join(dir, "package.json"))
	fs, err := readDir(dir)
	if err != nil {
		return []Finding{{File: manifest, Severity: SeverityError, Check: "package", Message: err.Error(),
			Fix: "a workflow package is a package.json (name, version, a \"vai\" field) plus the workflow file its \"main\" names (workflow.json)"}}
	}
	m, err := ParseManifest(fs["package.json"])
	if err != nil { // readDir parsed it already
		return []Finding{{File: manifest, Severity: SeverityError, Check: "package", Message: err.Error()}}
	}
	var out []Finding
	for _, w := range m.warnings() {
		out = append(out, Finding{File: manifest, Severity: SeverityWarning, Check: "package", Message: w})
	}
	return append(out, CheckAs(filepath.ToSlash(filepath.Join(dir, filepath.FromSlash(m.Main))), fs[m.Main], m.VaiDialect())...)
}

// check is Check of a file already loaded (w, or loadErr and the file's data when it is not).
func check(file string, data []byte, w *dsl.Workflow, loadErr error) []Finding {
	var out []Finding
	add := func(step, sev, check, msg, fix string) {
		out = append(out, Finding{File: file, Step: step, Severity: sev, Check: check, Message: msg, Fix: fix})
	}
	var def dsl.Definition
	if w != nil {
		def = *w.Def
	} else if err := json.Unmarshal(data, &def); err != nil {
		var raw map[string]any
		if json.Unmarshal(data, &raw) != nil {
			add("", SeverityError, "invalid", "not a JSON workflow file: "+firstLine(loadErr), "weft validate "+file+" shows where")
			return out
		}
		// a field of the wrong type: the checks below see what decodes; validate's errors follow
	}

	if strings.TrimSpace(def.Description) == "" {
		add("", SeverityNote, "no-description", `the workflow has no "description"`,
			`add one saying what it does and what it needs: weft list, weft info and MCP clients show it`)
	}
	inputs := make([]string, 0, len(def.Inputs))
	for name := range def.Inputs {
		inputs = append(inputs, name)
	}
	sort.Strings(inputs)
	for _, name := range inputs {
		if strings.TrimSpace(def.Inputs[name].Description) == "" {
			add("", SeverityNote, "no-description", fmt.Sprintf("input %q has no \"description\"", name),
				"say what to give: weft run asks for it with this text, and MCP clients show it")
		}
	}

	reported := map[string]bool{} // where validate's errors say what a finding here said already
	for i, st := range def.Steps {
		spec, known := toolspec.Lookup(st.Tool)
		switch {
		case st.Tool == "":
			add(st.ID, SeverityError, "unknown-tool", `the step names no "tool"`, "name one of weft tools' tools")
		case !known:
			reported[fmt.Sprintf("steps[%d].tool", i)] = true
			fix := "weft tools lists the tools there are"
			if near := fuzzy.Nearest(st.Tool, toolspec.Names()); near != "" {
				fix = fmt.Sprintf("did you mean %q? %s", near, fix)
			}
			add(st.ID, SeverityError, "unknown-tool", fmt.Sprintf("unknown tool %q", st.Tool), fix)
		}
		writes := st.Tool
		reach, url := addressed(st.Tool, st.Inputs)
		if nested, _ := st.Inputs["step"].(map[string]any); spec == toolspec.Loop.Spec && nested != nil { // a loop's step
			tool, _ := nested["tool"].(string)
			if ns, ok := toolspec.Lookup(tool); ok && writeTool(ns) {
				spec, writes = ns, st.Tool+"'s "+tool
			}
			in, _ := nested["inputs"].(map[string]any)
			if r, u := addressed(tool, in); u != "" {
				reach, url = r, u
			}
		}
		if w != nil && writeTool(spec) && !reviewedBefore(w, st.ID) {
			add(st.ID, SeverityWarning, "write-without-review",
				fmt.Sprintf("%s writes to the knowledge store and no review step runs before it", writes),
				fmt.Sprintf(`add a review step (tool "review") that shows what will be written, and name it in %q's "dependsOn" or use its output`, st.ID))
		}
		if host, private := privateHost(url); private {
			fix := "point the step at a public URL: the worker refuses this address unless its WEFT_HTTP_ALLOW names it"
			if reach != "http to" {
				fix = "clone from a public host: the worker refuses this address unless its WEFT_CODE_GIT_ALLOW names it (and WEFT_CODE_GIT_HOSTS lists the host); WEFT_HTTP_ALLOW, the http tool's, does not open it to code_index"
			}
			add(st.ID, SeverityWarning, "private-address",
				fmt.Sprintf("%s %s, a private, loopback or link-local address", reach, host), fix)
		}
		if spec == toolspec.Agent.Spec {
			for _, f := range agentFindings(i, st, reported) {
				add(st.ID, f.Severity, f.Check, f.Message, f.Fix)
			}
		}
		if strings.TrimSpace(st.Name) == "" {
			add(st.ID, SeverityNote, "no-description", `the step has no "name"`,
				"add a short one saying what it does: plans, weft status and the Temporal UI show it")
		}
	}

	var ds dsl.Diagnostics
	if loadErr != nil && !errors.As(loadErr, &ds) {
		add("", SeverityError, "invalid", firstLine(loadErr), "weft validate "+file+" shows every problem")
	}
	for _, d := range ds.Errors() {
		if reported[d.Where] {
			continue // reported above, by step
		}
		msg := d.Message
		if d.Where != "" {
			msg = d.Where + ": " + msg
		}
		fix := d.Hint
		if fix == "" {
			fix = fmt.Sprintf("line %d:%d; weft validate %s shows every problem", d.Line, d.Col, file)
		} else {
			fix = fmt.Sprintf("%s; line %d:%d", fix, d.Line, d.Col)
		}
		add("", SeverityError, "invalid", msg, fix)
	}
	return out
}

// addressed is the literal address a step of tool reaches over the network, and how the finding
// says so: an http step's url, a code_index step's repo (a Git repository it clones).
func addressed(tool string, inputs map[string]any) (reach, url string) {
	switch tool {
	case "http":
		url, _ = inputs["url"].(string)
		return "http to", url
	case "code_index":
		url, _ = inputs["repo"].(string)
		return "code_index clones from", url
	}
	return "", ""
}

// agentFindings are the checks on the tools an agent step (step i of the file) may call, its
// own and those of the agents it may hand off to: a tool weft does not have is an error, and a
// tool that writes to the knowledge store is a warning unless its calls wait for a person
// (approve). A review step before the agent does not count: it cannot show what the model will
// decide to write. Tools of MCP servers and workflow:NAME are not judged here (the called
// workflow is checked on its own). The pointers of unknown tools go into reported.
func agentFindings(i int, st dsl.Step, reported map[string]bool) []Finding {
	var out []Finding
	stepApprove := approvals(st.Inputs["approve"])
	judge := func(who, where, approveIn string, tools any, approved map[string]bool) {
		list, _ := tools.([]any)
		for j, t := range list {
			name, ok := t.(string)
			if !ok || strings.Contains(name, "{{") || strings.Contains(name, ":") {
				continue
			}
			spec, known := toolspec.Lookup(name)
			if !known || spec.Kind != toolspec.KindActivity {
				reported[fmt.Sprintf("%s[%d]", where, j)] = true
				fix := "weft tools lists the tools there are; agents call activity tools, workflow:NAME or mcp:SERVER"
				if near := fuzzy.Nearest(name, dsl.AgentToolNames()); near != "" {
					fix = fmt.Sprintf("did you mean %q? %s", near, fix)
				}
				out = append(out, Finding{Severity: SeverityError, Check: "unknown-tool",
					Message: fmt.Sprintf("%s lists %q, which is not a tool an agent can call", who, name), Fix: fix})
				continue
			}
			if writeTool(spec) && !approved[name] && !approved["*"] {
				out = append(out, Finding{Severity: SeverityWarning, Check: "write-without-review",
					Message: fmt.Sprintf("%s may call %s, which writes to the knowledge store, and its calls do not wait for a person", who, name),
					Fix:     fmt.Sprintf(`add %q to %s "approve": each call then waits for a person to approve what it writes`, name, approveIn)})
			}
		}
	}
	judge("the agent", fmt.Sprintf("steps[%d].inputs.tools", i), "the step's", st.Inputs["tools"], stepApprove)
	handoffs, _ := st.Inputs["handoffs"].([]any)
	for k, h := range handoffs {
		m, _ := h.(map[string]any)
		agent, _ := m["agent"].(map[string]any)
		name, _ := m["name"].(string)
		approved := approvals(agent["approve"]) // the step's approvals hold for every agent of the step
		for a := range stepApprove {
			approved[a] = true
		}
		judge(fmt.Sprintf("handoff %q's agent", name), fmt.Sprintf("steps[%d].inputs.handoffs[%d].agent.tools", i, k),
			"the handoff's agent's", agent["tools"], approved)
	}
	return out
}

// approvals is an agent's approve list as a set.
func approvals(v any) map[string]bool {
	out := map[string]bool{}
	list, _ := v.([]any)
	for _, a := range list {
		if s, ok := a.(string); ok {
			out[s] = true
		}
	}
	return out
}

// reviewedBefore reports whether a review step is among the steps id waits for, directly or not.
func reviewedBefore(w *dsl.Workflow, id string) bool {
	seen := map[string]bool{}
	stack := []string{id}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		cs, ok := w.Step(cur)
		if !ok {
			continue
		}
		for _, dep := range cs.Deps {
			if seen[dep] {
				continue
			}
			seen[dep] = true
			if ds, ok := w.Step(dep); ok && ds.Spec != nil && ds.Spec.Kind == toolspec.KindReview {
				return true
			}
			stack = append(stack, dep)
		}
	}
	return false
}

// privateHost reports the host of a literal URL when it is an IP address that is not public (as
// the http tool's guard classifies it) or localhost. Templated hosts are not judged.
func privateHost(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", false
	}
	host := u.Hostname()
	if strings.Contains(host, "{{") {
		return "", false
	}
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return host, true
	}
	ip, err := netip.ParseAddr(strings.Split(host, "%")[0])
	if err != nil {
		return "", false
	}
	return host, !netaddr.Public(ip)
}

func firstLine(err error) string {
	if err == nil {
		return ""
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// Failed reports whether any finding is an error.
func Failed(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}
