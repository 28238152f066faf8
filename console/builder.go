package console

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
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

// SaveAccess says whether the builder's Save (PUT /v1/workflows/{name}, which needs the admin
// role and a workflows folder) is the viewer's to use, and when not, why and who may.
type SaveAccess struct {
	May bool   `json:"may"`
	Why string `json:"why,omitempty"`
}

func (s *Server) saveAccess(sess *session) SaveAccess {
	if s.o.WorkflowsDir == "" {
		return SaveAccess{Why: "this console has no workflows folder to save into (weft console --workflows-dir DIR): Download the file instead"}
	}
	if id, ok := sess.identity(); ok && !id.Has(auth.RoleAdmin) {
		return SaveAccess{Why: "Saving into the workflows folder is for an admin (a saved file is the operator's own) or the operator on the console's machine: " +
			id.Refusal("saving", auth.RoleAdmin) + ". Download the file and hand it to them instead."}
	}
	return SaveAccess{May: true}
}

// builderPage is the visual builder (with the registry and how an edge between two of its tools
// is written, Wiring): empty, or the catalog workflow ?from=NAME ("Edit" on a
// workflow page) with its latest saved version (the base of the next Save). The definition goes
// to the page script in a data attribute (escaped).
func (s *Server) builderPage(w http.ResponseWriter, r *http.Request, sess *session) {
	d := s.base(sess, "Build", "build")
	from := r.URL.Query().Get("from")
	start := map[string]any{"tools": Tools(), "wiring": Wiring(), "save": s.saveAccess(sess)}
	if from != "" {
		e, ok := s.entry(from)
		if !ok {
			d.Error = fmt.Sprintf("no workflow %q to edit: the workflows page lists the built-in templates and the files of --workflows-dir", from)
			d.Data = mustJSON(start)
			s.render(w, "build", d, http.StatusNotFound)
			return
		}
		start["name"], start["source"], start["version"] = e.Name, string(e.Data), 0
		if e.Path != "" && s.o.WorkflowsDir != "" {
			v, err := weftclient.NewWorkflowFiles(s.o.WorkflowsDir).CurrentVersion(e.Name)
			if err != nil {
				d.Error = fmt.Sprintf("the saved versions of %q cannot be read (%v): a Save is refused until they can", e.Name, err)
			}
			start["version"] = v.ID
		}
		d.Workflow = e.Name
	}
	d.Data = mustJSON(start)
	s.render(w, "build", d, http.StatusOK)
}
