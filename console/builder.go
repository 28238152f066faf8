package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows/dsl"
)

// ToolInfo is one tool of the registry as the builder's palette and node forms use it: every
// field comes from activities/toolspec, nothing is written here.
type ToolInfo struct {
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	Category    string               `json:"category"`
	Kind        string               `json:"kind"`
	Input       json.RawMessage      `json:"input,omitempty"`
	Output      json.RawMessage      `json:"output,omitempty"`
	Lazy        []string             `json:"lazy,omitempty"`
	Branches    bool                 `json:"branches,omitempty"`
	Annotations toolspec.Annotations `json:"annotations"`
}

// Tools lists the registry (toolspec.All), sorted by name.
func Tools() []ToolInfo {
	all := toolspec.All()
	out := make([]ToolInfo, 0, len(all))
	for _, s := range all {
		t := ToolInfo{Name: s.Name, Title: s.Title, Description: s.Description, Category: s.Category(), Kind: string(s.Kind),
			Lazy: s.Lazy, Branches: s.Branches, Annotations: s.Annotations}
		if in := s.InputJSON(); json.Valid([]byte(in)) {
			t.Input = json.RawMessage(in)
		}
		if out := s.OutputSchema(); out != nil {
			if b, err := json.Marshal(out); err == nil {
				t.Output = b
			}
		}
		out = append(out, t)
	}
	return out
}

func (s *Server) apiTools(w http.ResponseWriter, _ *http.Request, _ *session) {
	writeJSON(w, http.StatusOK, map[string]any{"tools": Tools(), "wiring": Wiring()})
}

// builderPage is the visual builder (with the registry and how an edge between two of its tools
// is written, Wiring): empty, or the catalog workflow ?from=NAME ("Edit" on a
// workflow page). The definition goes to the page script in a data attribute (escaped).
func (s *Server) builderPage(w http.ResponseWriter, r *http.Request, sess *session) {
	d := s.base(sess, "Build", "build")
	from := r.URL.Query().Get("from")
	start := map[string]any{"tools": Tools(), "wiring": Wiring()}
	if from != "" {
		e, ok := s.entry(from)
		if !ok {
			d.Error = fmt.Sprintf("no workflow %q to edit: the workflows page lists the built-in templates and the files of --workflows-dir", from)
			d.Data = mustJSON(start)
			s.render(w, "build", d, http.StatusNotFound)
			return
		}
		start["name"], start["source"] = e.Name, string(e.Data)
		d.Workflow = e.Name
	}
	d.Data = mustJSON(start)
	s.render(w, "build", d, http.StatusOK)
}

// apiStartDefinition starts a run of a definition the page sends: the playground's edited text or
// the builder's workflow. It is the person's own definition, so it is client-origin
// (docs/security.md: dsl.CheckClientDefinition refuses MCP server commands, URLs and environment
// names before anything starts), even on loopback, as stdio MCP's inline definitions are.
func (s *Server) apiStartDefinition(w http.ResponseWriter, r *http.Request, sess *session) {
	if !s.may(w, sess, "starting a run", auth.RoleRunner) {
		return
	}
	var b struct {
		Name   string         `json:"name"`
		Source string         `json:"source"`
		Inputs map[string]any `json:"inputs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		writeError(w, http.StatusBadRequest, "send {\"source\": \"...workflow JSON...\", \"inputs\": {...}}: "+err.Error())
		return
	}
	if strings.TrimSpace(b.Source) == "" {
		writeError(w, http.StatusBadRequest, "the workflow text is empty: send it as \"source\"")
		return
	}
	file := b.Name
	if file == "" {
		file = "editor"
	}
	wf, err := dsl.Load(file, []byte(b.Source))
	if err != nil {
		var ds dsl.Diagnostics
		if errors.As(err, &ds) {
			writeError(w, http.StatusBadRequest, "the edited workflow does not compile: fix what the editor lists, then start it:\n"+ds.Error())
			return
		}
		writeError(w, http.StatusBadRequest, "the edited workflow does not compile: "+err.Error())
		return
	}
	o := weftclient.StartOptions{Source: "console:edited", Inputs: b.Inputs, Resolver: weftclient.FileResolver(s.o.WorkflowsDir),
		Origin: weftclient.OriginClient}
	if id, ok := sess.identity(); ok {
		o.StartedBy = id.Name
	}
	run, err := s.o.Client.Start(r.Context(), wf, o)
	if err != nil {
		clientError(w, err)
		return
	}
	s.o.Log.Info("console: edited definition started", "run", run.ID, "workflow", wf.Def.Name, "by", sess.name, "authenticated", sess.authenticated)
	writeJSON(w, http.StatusOK, map[string]string{"id": run.ID, "url": "/runs/" + url.PathEscape(run.ID)})
}
