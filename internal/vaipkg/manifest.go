package vaipkg

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/weftworks/weft/activities/toolspec"
)

// Tiers of a package.
const (
	TierOfficial  = "official"  // @vaicli/*
	TierCommunity = "community" // everything else
)

// OfficialScope is the npm scope of vai's own packages.
const OfficialScope = "@vaicli/"

// Tier is the tier of the package named name.
func Tier(name string) string {
	if strings.HasPrefix(name, OfficialScope) {
		return TierOfficial
	}
	return TierCommunity
}

// VaiMeta is package.json's "vai" field, as far as it is there.
type VaiMeta struct {
	WorkflowVersion string   `json:"workflowVersion,omitempty"`
	Category        string   `json:"category,omitempty"`
	Tags            []string `json:"tags,omitempty"`
	MinVaiVersion   string   `json:"minVaiVersion,omitempty"`
	// Tools are the tools the package says its workflow uses (vai's "tools").
	Tools []string `json:"tools,omitempty"`
	// Raw is the whole field as written (other keys included).
	Raw map[string]any `json:"raw,omitempty"`
}

// Manifest is what weft reads of a package.json. Fields of the wrong type are left empty rather
// than refused: only name and version are required.
type Manifest struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description,omitempty"`
	Author      string   `json:"author,omitempty"`
	License     string   `json:"license,omitempty"`
	Keywords    []string `json:"keywords,omitempty"`
	// Main is the workflow file's path inside the package (package.json's "main", default workflow.json).
	Main string  `json:"main"`
	Vai  VaiMeta `json:"vai"`
	// Scripts are the names of package.json's scripts: recorded, never run.
	Scripts []string `json:"scripts,omitempty"`
	// Dependencies are the names in package.json's dependencies and peerDependencies: never
	// installed (a workflow package needs none).
	Dependencies []string `json:"dependencies,omitempty"`
}

// DefaultMain is the workflow file of a package whose package.json names none.
const DefaultMain = "workflow.json"

var (
	nameRE    = regexp.MustCompile(`^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)
	versionRE = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z.+-]*$`)
)

// CheckName says what is wrong with an npm package name, or nil.
func CheckName(name string) error {
	if len(name) > 214 || !nameRE.MatchString(name) {
		return fmt.Errorf("%q is not an npm package name (lowercase letters, digits, - . _ ~, optionally @scope/ first)", name)
	}
	return nil
}

func checkVersion(v string) error {
	if len(v) > 64 || !versionRE.MatchString(v) || strings.Contains(v, "..") {
		return fmt.Errorf("%q is not a version (e.g. 1.2.0)", v)
	}
	return nil
}

// ParseManifest reads a package.json leniently.
func ParseManifest(data []byte) (*Manifest, error) {
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("package.json is not a JSON object: %w", err)
	}
	str := func(k string) string { s, _ := raw[k].(string); return strings.TrimSpace(s) }
	m := &Manifest{Name: str("name"), Version: str("version"), Description: str("description"), License: str("license"), Main: str("main")}
	if m.Name == "" {
		return nil, fmt.Errorf("package.json has no \"name\": a workflow package is named vai-workflow-NAME or @vaicli/NAME")
	}
	if err := CheckName(m.Name); err != nil {
		return nil, fmt.Errorf("package.json \"name\": %w", err)
	}
	if m.Version == "" {
		return nil, fmt.Errorf("package.json of %s has no \"version\"", m.Name)
	}
	if err := checkVersion(m.Version); err != nil {
		return nil, fmt.Errorf("package.json of %s, \"version\": %w", m.Name, err)
	}
	switch a := raw["author"].(type) {
	case string:
		m.Author = a
	case map[string]any:
		n, _ := a["name"].(string)
		if e, _ := a["email"].(string); e != "" {
			n = strings.TrimSpace(n + " <" + e + ">")
		}
		m.Author = n
	}
	if m.License == "" {
		if l, ok := raw["license"].(map[string]any); ok {
			m.License, _ = l["type"].(string)
		}
	}
	m.Keywords = strings_(raw["keywords"])
	if s, ok := raw["scripts"].(map[string]any); ok {
		for k := range s {
			m.Scripts = append(m.Scripts, k)
		}
		sort.Strings(m.Scripts)
	}
	for _, k := range []string{"dependencies", "peerDependencies"} {
		if d, ok := raw[k].(map[string]any); ok {
			for name := range d {
				m.Dependencies = append(m.Dependencies, name)
			}
		}
	}
	sort.Strings(m.Dependencies)
	if v, ok := raw["vai"].(map[string]any); ok {
		m.Vai.Raw = v
		m.Vai.WorkflowVersion = scalar(v["workflowVersion"])
		m.Vai.Category, _ = v["category"].(string)
		m.Vai.Tags = strings_(v["tags"])
		m.Vai.MinVaiVersion = scalar(v["minVaiVersion"])
		m.Vai.Tools = strings_(v["tools"])
	}
	m.clean()
	if m.Main == "" || !strings.HasSuffix(strings.ToLower(m.Main), ".json") {
		m.Main = DefaultMain // "main" may name a JS entry point of a package that also holds workflow.json
	}
	main, err := cleanPath(m.Main)
	if err == nil && Line(m.Main) != m.Main {
		err = fmt.Errorf("%q holds control or bidi characters: name the workflow file plainly", m.Main)
	}
	if err != nil {
		return nil, fmt.Errorf("package.json of %s, \"main\": %w", m.Name, err)
	}
	m.Main = main
	return m, nil
}

// clean makes the manifest's text safe to print (see Line): the description keeps its line
// breaks, the other fields are one line each; list items that clean to nothing are dropped. Name
// and Version are checked, not cleaned; Main is a path, refused rather than changed.
func (m *Manifest) clean() {
	m.Description = Paragraphs(m.Description)
	m.Author, m.License = Line(m.Author), Line(m.License)
	m.Keywords, m.Scripts, m.Dependencies = lines(m.Keywords), lines(m.Scripts), lines(m.Dependencies)
	m.Vai.WorkflowVersion, m.Vai.Category, m.Vai.MinVaiVersion = Line(m.Vai.WorkflowVersion), Line(m.Vai.Category), Line(m.Vai.MinVaiVersion)
	m.Vai.Tags, m.Vai.Tools = lines(m.Vai.Tags), lines(m.Vai.Tools)
	if m.Vai.Raw != nil {
		m.Vai.Raw, _ = CleanJSON(m.Vai.Raw).(map[string]any)
	}
}

// lines cleans each of list with Line, dropping those left empty.
func lines(list []string) []string {
	var out []string
	for _, s := range list {
		if s = Line(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// CleanJSON is a decoded JSON value with every string cleaned: keys with Line, values with
// Paragraphs. v is not changed.
func CleanJSON(v any) any {
	switch x := v.(type) {
	case string:
		return Paragraphs(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = CleanJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[Line(k)] = CleanJSON(e)
		}
		return out
	}
	return v
}

// Compatibility says what in package.json's compatibility fields weft cannot honour or read, one
// warning each, naming the field and what to change; a package is installed with them. vai's
// fields: "vai.workflowVersion" (the workflow format: vai and weft read 1.x), "vai.minVaiVersion"
// (the vai release the workflow needs: a version; weft is no vai release, so it is not compared:
// weft compiles the workflow instead, which refuses a tool or field weft does not have),
// "vai.tools" (the tools the workflow uses), and dependencies, which a workflow package has none of.
func (m *Manifest) Compatibility() []string {
	var out []string
	if wv := m.Vai.WorkflowVersion; wv != "" {
		if v, err := semver.NewVersion(wv); err != nil {
			out = append(out, fmt.Sprintf(`package.json "vai.workflowVersion" is %q, not a version: write the workflow format the file is in, "1.0"`, wv))
		} else if v.Major() != 1 {
			out = append(out, fmt.Sprintf(`package.json "vai.workflowVersion" is %q: weft reads workflow format 1.x, so the workflow may rely on what weft does not do (weft check says what it finds)`, wv))
		}
	}
	if mv := m.Vai.MinVaiVersion; mv != "" {
		if _, err := semver.NewVersion(mv); err != nil {
			out = append(out, fmt.Sprintf(`package.json "vai.minVaiVersion" is %q, not a version: write the vai release the workflow needs, like 1.27.0`, mv))
		}
	}
	var unknown []string
	for _, t := range m.Vai.Tools {
		if _, ok := toolspec.Lookup(t); !ok {
			unknown = append(unknown, t)
		}
	}
	if len(unknown) > 0 {
		out = append(out, fmt.Sprintf(`package.json "vai.tools" names %s, which weft does not have: list the tools the workflow's steps use (weft tools lists weft's)`, quoteList(unknown)))
	}
	if len(m.Dependencies) > 0 {
		out = append(out, fmt.Sprintf("package.json lists dependencies (%s): weft installs none, and a workflow package needs none", strings.Join(m.Dependencies, ", ")))
	}
	return out
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// Tier is the package's tier.
func (m *Manifest) Tier() string { return Tier(m.Name) }

// VaiNamed reports whether the name follows vai's convention (vai-workflow-* or @vaicli/*).
func (m *Manifest) VaiNamed() bool { return VaiNamed(m.Name) }

// VaiDialect says why the package's workflow is vai's (a package.json with a "vai" field, or
// named as vai names its packages, is vai's by definition), or "" when nothing in the manifest
// says so. LoadWorkflow reads the workflow in vai's dialect then.
func (m *Manifest) VaiDialect() string {
	switch {
	case m.Vai.Raw != nil:
		return "it is the workflow of package " + m.Name + ", whose package.json has a \"vai\" field"
	case m.VaiNamed():
		return "it is the workflow of package " + m.Name + ", named as vai names its packages"
	}
	return ""
}

// VaiNamed reports whether a package name follows vai's convention: @vaicli/* or vai-workflow-*
// (under any scope).
func VaiNamed(name string) bool {
	base := name
	if i := strings.LastIndex(base, "/"); i >= 0 {
		base = base[i+1:]
	}
	return strings.HasPrefix(name, OfficialScope) || strings.HasPrefix(base, "vai-workflow-")
}

func strings_(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprint(x)
	}
	return ""
}

// cleanPath checks a path inside a package: relative, slash-separated, never leaving the package.
func cleanPath(p string) (string, error) {
	if p == "" || strings.Contains(p, "\\") || strings.ContainsRune(p, 0) || path.IsAbs(p) {
		return "", fmt.Errorf("%q is not a relative path inside the package", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Errorf("%q leaves the package (..)", p)
		}
	}
	c := path.Clean(p)
	if c == "." {
		return "", fmt.Errorf("%q names no file", p)
	}
	return c, nil
}
