package client

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/workflows/dsl"
)

// CatalogEntry is one workflow offered by name: a built-in template or a file of a workflows
// directory.
type CatalogEntry struct {
	Name string
	// Path is the file it was read from ("" for a built-in).
	Path string
	// Data is the file as written.
	Data []byte
	// Workflow is the compiled workflow; nil when Err is set.
	Workflow *dsl.Workflow
	// Err says why the file does not load (with FILE:LINE:COL diagnostics).
	Err error
}

// Catalog lists the built-in templates (when builtins is set) and the workflow files in dir
// (*.json, not *.test.json fixtures), sorted by name; a file overrides a built-in of the same name.
// The MCP gateway offers these as tools and the console draws them.
func Catalog(dir string, builtins bool) []CatalogEntry {
	byName := map[string]CatalogEntry{}
	if builtins {
		for _, t := range templates.All() {
			w, err := dsl.Load(t.Name, t.Data)
			byName[t.Name] = CatalogEntry{Name: t.Name, Data: t.Data, Workflow: w, Err: err}
		}
	}
	if dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range files {
			if strings.HasSuffix(f, ".test.json") {
				continue
			}
			name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".json"), ".weft")
			e := CatalogEntry{Name: name, Path: f}
			// bounded: a FIFO, a device or a huge *.json here is refused, not read. The file
			// is named by its name in the directory, so its problems and its runs' Source
			// ("x.json:3:4: ...", read by clients) do not carry the worker's paths.
			if e.Data, e.Err = dsl.ReadFile(f); e.Err == nil {
				e.Workflow, e.Err = dsl.Load(filepath.Base(f), e.Data)
			} else {
				e.Err = &namedError{err: e.Err, msg: strings.ReplaceAll(e.Err.Error(), f, filepath.Base(f))}
			}
			if e.Err != nil {
				e.Workflow = nil
			}
			byName[name] = e
		}
	}
	out := make([]CatalogEntry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// namedError is a catalog file's error with the file named as in its directory (msg), keeping
// the error it came from for errors.Is and errors.As.
type namedError struct {
	err error
	msg string
}

func (e *namedError) Error() string { return e.msg }
func (e *namedError) Unwrap() error { return e.err }
