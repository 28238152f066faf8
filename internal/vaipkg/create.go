package vaipkg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
)

// CreateOptions say what Create makes of a workflow file.
type CreateOptions struct {
	// Name is the package's name without vai-workflow- (default: the workflow's name as a slug).
	Name string
	// Author and Version go into package.json (Version default 1.0.0).
	Author, Version string
	// Dir is where the package folder is made (default: ./vai-workflow-NAME); Force replaces the
	// files Create writes when it exists.
	Dir   string
	Force bool
}

// Created is what Create wrote.
type Created struct {
	Dir      string   `json:"dir"`
	Name     string   `json:"name"`
	Files    []string `json:"files"`
	Category string   `json:"category"`
	Tools    []string `json:"tools"`
	// Warnings are what a vai user of the package should know (a workflow in weft's format).
	Warnings []string `json:"warnings,omitempty"`
}

// Category of a workflow, as the package's "vai.category" says it: ingestion when a step writes to
// the knowledge store, integration when it calls http, analysis when a model writes the answer,
// retrieval when it searches, utility otherwise (the first that applies).
func Category(w *dsl.Workflow) string {
	has := func(ok func(s *toolspec.Spec) bool) bool {
		for _, cs := range w.Steps {
			if cs.Spec != nil && ok(cs.Spec) || cs.Nested() != nil && ok(cs.Nested().Spec) {
				return true
			}
		}
		return false
	}
	switch {
	case has(writeTool):
		return "ingestion"
	case has(func(s *toolspec.Spec) bool { return s == toolspec.HTTP.Spec }):
		return "integration"
	case has(func(s *toolspec.Spec) bool { return s.EstimateCalls(nil).LLM > 0 }):
		return "analysis"
	case has(func(s *toolspec.Spec) bool { return s.NeedsCollection }):
		return "retrieval"
	}
	return "utility"
}

// Create makes a workflow package in vai's layout from a workflow file (file names it, data is its
// text): DIR/package.json (name vai-workflow-NAME, version, description, main, keywords, author,
// license MIT, and the "vai" field: workflowVersion 1.0, category, the tools the steps use),
// DIR/workflow.json (the file as written) and DIR/README.md (what it does, its inputs, how to
// install and run it). The workflow must be valid; the package is checked as weft install reads
// it before anything is written, and never written through a link (writePackage). Nothing is
// published and no LICENSE file is written.
func Create(file string, data []byte, o CreateOptions) (*Created, error) {
	w, err := dsl.Load(file, data)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid workflow, so no package was made (weft validate shows why):\n%w", file, err)
	}
	short := strings.TrimPrefix(o.Name, "vai-workflow-")
	if short == "" {
		short = dsl.Slug(w.Def.Name, "")
	}
	if short == "" {
		return nil, fmt.Errorf("%s: the workflow's name makes no package name: give one with --name", file)
	}
	name := "vai-workflow-" + short
	if CheckName(name) != nil {
		return nil, fmt.Errorf("--name %q: a package name is vai-workflow- and lowercase letters, digits and hyphens (legal-research)", short)
	}
	version := o.Version
	if version == "" {
		version = "1.0.0"
	}
	if _, err := semver.StrictNewVersion(version); err != nil {
		return nil, fmt.Errorf("--version %q is not a version: npm takes MAJOR.MINOR.PATCH, like 1.0.0", version)
	}
	dir := o.Dir
	if dir == "" {
		dir = name
	}
	tools := usedTools(w)
	category := Category(w)
	type vaiField struct {
		WorkflowVersion string   `json:"workflowVersion"`
		Category        string   `json:"category"`
		Tools           []string `json:"tools"`
	}
	pkg := struct { // npm's order: name and version first
		Name        string   `json:"name"`
		Version     string   `json:"version"`
		Description string   `json:"description,omitempty"`
		Main        string   `json:"main"`
		Keywords    []string `json:"keywords"`
		Author      string   `json:"author,omitempty"`
		License     string   `json:"license"`
		Vai         vaiField `json:"vai"`
	}{name, version, Line(w.Def.Description), DefaultMain, append([]string{"vai-workflow"}, tools...), Line(o.Author), "MIT",
		vaiField{"1.0", category, tools}}
	manifest, err := marshalIndent(pkg)
	if err != nil {
		return nil, err
	}
	made := files{"package.json": manifest, DefaultMain: data, "README.md": readme(name, w)}
	names := []string{"README.md", "package.json", DefaultMain}
	// checked before anything is written: what weft install would refuse
	_, mw, err := prepare(made, dir)
	if err != nil {
		return nil, fmt.Errorf("internal: the package made does not check: %w", err)
	}
	for _, f := range check(filepath.ToSlash(filepath.Join(dir, DefaultMain)), data, mw, nil) {
		if f.Severity == SeverityError {
			return nil, errors.New("internal: the package made does not check: " + f.String())
		}
	}
	if err := writePackage(dir, names, made, o.Force); err != nil {
		return nil, err
	}
	c := &Created{Dir: dir, Name: name, Files: names, Category: category, Tools: tools}
	if w.Dialect == dsl.DialectWeft && w.DialectReason != "" {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the workflow is written in weft's format (%s): vai reads only its own, weft runs it either way", w.DialectReason))
	}
	return c, nil
}

// writePackage writes the named files into dir, never through a link: each goes to a new file in
// dir first, renamed over its name when all are written. A name that exists is refused without
// force; with force a link or anything but a regular file still is (replacing it would follow it,
// or drop what the user linked), and each file replaced is kept (a second link to it, or a copy)
// until all are renamed. On failure the files replaced get their former content back, the new
// files are removed, and dir when it made it.
func writePackage(dir string, names []string, made files, force bool) (err error) {
	existed := map[string]bool{}
	for _, n := range names {
		path := filepath.Join(dir, n)
		fi, err := os.Lstat(path)
		switch {
		case errors.Is(err, iofs.ErrNotExist):
			continue
		case err != nil:
			return err
		case !force:
			return fmt.Errorf("%s already exists: give another --output, or --force to replace the package's files", path)
		case fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%s is a link: weft create never writes through one, --force included: remove the link, or give another --output", path)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file: remove it, or give another --output", path)
		}
		existed[n] = true
	}
	_, statErr := os.Lstat(dir)
	madeDir := errors.Is(statErr, iofs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var temps, renamed []string
	backups := map[string]string{} // name -> its former content, kept beside it
	defer func() {
		if err == nil {
			for _, b := range backups {
				_ = os.Remove(b)
			}
			return
		}
		for _, t := range temps {
			if t != "" {
				_ = os.Remove(t)
			}
		}
		var lost []string
		for i := len(renamed) - 1; i >= 0; i-- {
			n := renamed[i]
			path := filepath.Join(dir, n)
			if !existed[n] {
				_ = os.Remove(path)
				continue
			}
			if rerr := rename(backups[n], path); rerr != nil {
				lost = append(lost, fmt.Sprintf("%s (its former content is in %s: %v)", path, backups[n], rerr))
				continue
			}
			delete(backups, n)
		}
		for n, b := range backups {
			if !slices.Contains(renamed, n) {
				_ = os.Remove(b) // never replaced: the file itself is as it was
			}
		}
		if len(lost) > 0 {
			err = fmt.Errorf("%w; and putting back what it replaced failed for %s", err, strings.Join(lost, ", "))
		} else if len(renamed) > 0 || len(existed) > 0 {
			err = fmt.Errorf("%w (nothing was written: the package's former files are back as they were)", err)
		}
		if madeDir {
			_ = os.Remove(dir) // only when empty
		}
	}()
	for _, n := range names {
		f, err := os.CreateTemp(dir, ".weft-create-*")
		if err != nil {
			return err
		}
		temps = append(temps, f.Name())
		_, werr := f.Write(made[n])
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(f.Name(), 0o644)
		}
		if werr != nil {
			return werr
		}
	}
	for _, n := range names {
		if !existed[n] {
			continue
		}
		b, err := keep(dir, filepath.Join(dir, n))
		if err != nil {
			return fmt.Errorf("keeping %s until its replacement is in place: %w", filepath.Join(dir, n), err)
		}
		backups[n] = b
	}
	for i, n := range names {
		if err := rename(temps[i], filepath.Join(dir, n)); err != nil { // a rename replaces a name, never follows it
			return err
		}
		renamed = append(renamed, n)
		temps[i] = ""
	}
	return nil
}

// keep makes a second name in dir for the regular file path (a hard link, or where the file
// system has none a copy with its mode), so that its content survives a rename over path.
func keep(dir, path string) (string, error) {
	f, err := os.CreateTemp(dir, ".weft-create-old-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	_ = f.Close()
	if err := os.Remove(name); err != nil {
		return "", err
	}
	if err := os.Link(path, name); err == nil {
		return name, nil
	}
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return "", err
	}
	dst, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", err
	}
	return name, nil
}

// rename is os.Rename; tests make it fail.
var rename = os.Rename

// usedTools are the tools the workflow's steps (and loops' steps) name, sorted.
func usedTools(w *dsl.Workflow) []string {
	seen := map[string]bool{}
	for _, cs := range w.Steps {
		if cs.Spec != nil {
			seen[cs.Spec.Name] = true
		}
		if cs.Nested() != nil && cs.Nested().Spec != nil {
			seen[cs.Nested().Spec.Name] = true
		}
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func marshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// readme is the package's README.md: what the workflow does, its inputs, its steps, and the
// commands that install and run it.
func readme(name string, w *dsl.Workflow) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", name)
	if d := Paragraphs(w.Def.Description); d != "" {
		fmt.Fprintf(&b, "%s\n\n", d)
	}
	if len(w.Def.Inputs) > 0 {
		b.WriteString("## Inputs\n\n| Input | Type | Required | Default | Description |\n|---|---|---|---|---|\n")
		for _, n := range slices.Sorted(maps.Keys(w.Def.Inputs)) {
			in := w.Def.Inputs[n]
			def := ""
			if in.Default != nil {
				if j, err := json.Marshal(in.Default); err == nil {
					def = "`" + string(j) + "`"
				}
			}
			req := "no"
			if in.Required {
				req = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", n, in.Type, req, cell(def), cell(Line(in.Description)))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Steps\n\n")
	for _, cs := range w.Steps {
		label := Line(cs.Step.Name)
		if label == "" {
			label = cs.ID
		}
		fmt.Fprintf(&b, "1. `%s` (%s): %s\n", cs.ID, cs.Step.Tool, cell(label))
	}
	fmt.Fprintf(&b, "\n## Use\n\n```sh\nweft install %s   # or: vai workflow install %s\nweft run %s", name, name, name)
	for _, n := range sortedRequired(w) {
		fmt.Fprintf(&b, " --input %s=...", n)
	}
	b.WriteString("\n```\n")
	return []byte(b.String())
}

func sortedRequired(w *dsl.Workflow) []string {
	var out []string
	for n, in := range w.Def.Inputs {
		if in.Required && in.Default == nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// cell keeps text inside one Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
