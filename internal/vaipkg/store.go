package vaipkg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/weftworks/weft/workflows/dsl"
)

// Store is the directory installed packages live in: DIR/NAME/VERSION, one version per name.
type Store struct {
	Dir string
}

// Package is an installed (or about to be installed) package.
type Package struct {
	Manifest
	Tier string `json:"tier"`
	// Dir is the package's directory in the store; WorkflowPath its workflow file.
	Dir          string `json:"dir,omitempty"`
	WorkflowPath string `json:"workflowPath,omitempty"`
	// Source says where it came from: the registry's tarball URL, a .tgz or a directory.
	Source string `json:"source"`
	// Integrity is the checked hash of a registry tarball (SRI), empty for local sources.
	Integrity   string    `json:"integrity,omitempty"`
	InstalledAt time.Time `json:"installedAt"`
	// Warnings are what the install noticed but accepted (scripts not run, an unusual name).
	Warnings []string `json:"warnings,omitempty"`
	// Findings are weft check's findings on the workflow (warnings and notes: a workflow with
	// errors is not installed), set by Install only: the store does not keep them.
	Findings []Finding `json:"findings,omitempty"`
}

// record is the file the store keeps beside a package's own files.
const record = ".weft-install.json"

// ErrNotInstalled is wrapped by the errors for a package the store does not have.
var ErrNotInstalled = errors.New("package not installed")

// prepare reads and checks a package's files: the manifest, and its workflow compiled as
// `weft validate` compiles it, in vai's dialect when the manifest says the package is vai's
// (LoadWorkflow; returned, for Check's findings: compiled once). Nothing is written.
func prepare(fs files, source string) (*Package, *dsl.Workflow, error) {
	mf, ok := fs["package.json"]
	if !ok {
		return nil, nil, fmt.Errorf("%s has no package.json: a workflow package is a package.json plus workflow.json", source)
	}
	m, err := ParseManifest(mf)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	wf, ok := fs[m.Main]
	if !ok {
		return nil, nil, fmt.Errorf("%s (%s@%s) has no workflow file %s: a workflow package holds workflow.json (or the .json file package.json's \"main\" names)", source, m.Name, m.Version, m.Main)
	}
	if len(wf) > dsl.MaxFileSize {
		return nil, nil, fmt.Errorf("%s@%s: %s has %d bytes, over the %d a workflow file may have", m.Name, m.Version, m.Main, len(wf), dsl.MaxFileSize)
	}
	w, err := LoadWorkflow(m.Name+"/"+m.Main, wf, m.VaiDialect())
	if err != nil {
		return nil, nil, fmt.Errorf("%s@%s: its workflow is invalid, nothing installed (weft check or weft validate on the file says more):\n%w", m.Name, m.Version, err)
	}
	p := &Package{Manifest: *m, Tier: m.Tier(), Source: source, Warnings: m.warnings()}
	return p, w, nil
}

// warnings are what an install notices in package.json and accepts: scripts (never run), a name
// that is not vai's kind, and the compatibility fields (Compatibility).
func (m *Manifest) warnings() []string {
	var out []string
	if len(m.Scripts) > 0 {
		out = append(out, fmt.Sprintf("package.json declares scripts (%s): weft never runs them", strings.Join(m.Scripts, ", ")))
	}
	if !m.VaiNamed() {
		out = append(out, fmt.Sprintf("%s is not named like a vai workflow package (vai-workflow-NAME or @vaicli/NAME)", m.Name))
	}
	return append(out, m.Compatibility()...)
}

// install writes a prepared package into the store: into a staging folder first, renamed into
// place when complete; other versions of the package are removed after.
func (s Store) install(p *Package, fs files) (*Package, error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("package store %s: %w", s.Dir, err)
	}
	s.sweepStaging(time.Now())
	stage, err := os.MkdirTemp(s.Dir, ".staging-")
	if err != nil {
		return nil, fmt.Errorf("package store %s: %w", s.Dir, err)
	}
	defer os.RemoveAll(stage)
	keep := []string{"package.json", p.Main}
	if _, ok := fs["README.md"]; ok {
		keep = append(keep, "README.md")
	}
	for _, rel := range keep {
		dst := filepath.Join(stage, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, fs[rel], 0o644); err != nil {
			return nil, fmt.Errorf("package store %s: %w", s.Dir, err)
		}
	}
	p.InstalledAt = time.Now().UTC().Truncate(time.Second)
	p.Dir, p.WorkflowPath = "", ""
	rec, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(stage, record), rec, 0o644); err != nil {
		return nil, fmt.Errorf("package store %s: %w", s.Dir, err)
	}
	nameDir := filepath.Join(s.Dir, filepath.FromSlash(p.Name))
	if err := os.MkdirAll(nameDir, 0o755); err != nil {
		return nil, fmt.Errorf("package store %s: %w", s.Dir, err)
	}
	final := filepath.Join(nameDir, p.Version)
	if err := os.RemoveAll(final); err != nil { // the same version again: replaced
		return nil, fmt.Errorf("replacing %s: %w", final, err)
	}
	if err := os.Rename(stage, final); err != nil {
		return nil, fmt.Errorf("package store %s: %w", s.Dir, err)
	}
	entries, _ := os.ReadDir(nameDir)
	for _, e := range entries {
		if e.Name() != p.Version {
			_ = os.RemoveAll(filepath.Join(nameDir, e.Name()))
		}
	}
	return s.Get(p.Name)
}

// StagingTTL is how old a staging folder must be before an install removes it: one left by an
// install that was killed before it could clean up. Younger ones may be another install's.
const StagingTTL = time.Hour

// sweepStaging removes the store's staging folders older than StagingTTL.
func (s Store) sweepStaging(now time.Time) {
	entries, _ := os.ReadDir(s.Dir)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), ".staging-") {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > StagingTTL {
			_ = os.RemoveAll(filepath.Join(s.Dir, e.Name()))
		}
	}
}

// Get returns the installed package named name.
func (s Store) Get(name string) (*Package, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	nameDir := filepath.Join(s.Dir, filepath.FromSlash(name))
	entries, err := os.ReadDir(nameDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("package store %s: %w", s.Dir, err)
	}
	var versions []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if _, err := os.Stat(filepath.Join(nameDir, e.Name(), record)); err == nil {
				versions = append(versions, e.Name())
			}
		}
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("%s: %w in %s (weft list --packages shows what is; weft install %s adds it)", name, ErrNotInstalled, s.Dir, name)
	}
	sort.Strings(versions)
	dir := filepath.Join(nameDir, versions[len(versions)-1])
	data, err := os.ReadFile(filepath.Join(dir, record))
	if err != nil {
		return nil, fmt.Errorf("package %s: %w", name, err)
	}
	var p Package
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("package %s: %s is damaged (%v): weft install it again", name, filepath.Join(dir, record), err)
	}
	p.Manifest.clean() // a record written before ParseManifest cleaned its text
	p.Warnings, p.Source = lines(p.Warnings), Line(p.Source)
	p.Dir = dir
	p.WorkflowPath = filepath.Join(dir, filepath.FromSlash(p.Main))
	return &p, nil
}

// Workflow returns the installed package's workflow file: its path (for messages) and bytes.
func (s Store) Workflow(name string) (string, []byte, error) {
	p, err := s.Get(name)
	if err != nil {
		return "", nil, err
	}
	data, err := dsl.ReadFile(p.WorkflowPath)
	if err != nil {
		return "", nil, err
	}
	return p.WorkflowPath, data, nil
}

// vaiSchema is the "$schema" MarkVai gives a vai package's workflow.
const vaiSchema = "vai workflow (installed vai package)"

// MarkVai gives a vai package's workflow text a "$schema" naming vai when it has none, so that
// the text says itself what its package says: a run request carries the text, and the worker, a
// retry or a fork compile it with nothing but the text (dsl.DetectDialect). weft run marks what
// it sends; the file in the store stays as the package has it. It is added at the
// start of the object, on the first line, so that lines named in messages stay where they were.
// Text that is not an object, or has a "$schema" already, is returned as it is.
func MarkVai(data []byte) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return data
	}
	if _, has := top["$schema"]; has {
		return data
	}
	i := bytes.IndexByte(data, '{')
	if i < 0 {
		return data
	}
	mark, _ := json.Marshal(vaiSchema)
	out := make([]byte, 0, len(data)+len(mark)+12)
	out = append(out, data[:i+1]...)
	out = append(out, `"$schema":`...)
	out = append(out, mark...)
	if rest := bytes.TrimSpace(data[i+1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, data[i+1:]...)
}

// List returns the installed packages, sorted by name.
func (s Store) List() ([]*Package, error) {
	top, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("package store %s: %w", s.Dir, err)
	}
	var names []string
	for _, e := range top {
		switch {
		case !e.IsDir() || strings.HasPrefix(e.Name(), "."):
		case strings.HasPrefix(e.Name(), "@"):
			sub, _ := os.ReadDir(filepath.Join(s.Dir, e.Name()))
			for _, se := range sub {
				if se.IsDir() {
					names = append(names, e.Name()+"/"+se.Name())
				}
			}
		default:
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var out []*Package
	for _, n := range names {
		p, err := s.Get(n)
		if errors.Is(err, ErrNotInstalled) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Uninstall removes the package named name.
func (s Store) Uninstall(name string) (*Package, error) {
	p, err := s.Get(name)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(filepath.Join(s.Dir, filepath.FromSlash(name))); err != nil {
		return nil, fmt.Errorf("removing %s: %w", name, err)
	}
	if scope, _, ok := strings.Cut(name, "/"); ok {
		_ = os.Remove(filepath.Join(s.Dir, scope)) // only when empty
	}
	return p, nil
}
