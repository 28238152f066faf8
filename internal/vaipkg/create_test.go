package vaipkg_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/vaipkg"
)

// TestCreate: a workflow file becomes a package in vai's layout that weft install reads, with the
// category and tools of its steps; what cannot be packaged is refused with nothing written.
func TestCreate(t *testing.T) {
	const retrieval = `{"name": "Docs QA", "description": "Answers from the docs",
		"inputs": {"q": {"type": "string", "required": true, "description": "the question | asked"}},
		"defaults": {"collection": "docs"},
		"steps": [{"id": "find", "name": "Find passages", "tool": "search", "inputs": {"query": "{{ inputs.q }}"}},
			{"id": "ranked", "tool": "rerank", "inputs": {"query": "{{ inputs.q }}", "documents": "{{ find.output.results }}"}}]}`
	const ingest = `{"name": "store", "steps": [{"id": "l", "tool": "loop", "inputs": {"items": ["a"], "as": "x",
		"step": {"tool": "ingest", "inputs": {"text": "{{ x }}", "source": "s", "collection": "c"}}}}]}`
	const weftFormat = `{"$schema": "https://weft.dev/schemas/workflow-v1.json", "name": "t", "steps": [{"id": "a", "tool": "template", "inputs": {"text": "hi"}}]}`
	tests := []struct {
		name, workflow string
		o              vaipkg.CreateOptions
		pkg, category  string
		tools          []string
		warnings       []string
		wantErr        string
	}{
		{name: "retrieval", workflow: retrieval, o: vaipkg.CreateOptions{Author: "Ana"}, pkg: "vai-workflow-docs-qa", category: "retrieval", tools: []string{"rerank", "search"}},
		{name: "a loop's ingest, named", workflow: ingest, o: vaipkg.CreateOptions{Name: "vai-workflow-keeper", Version: "0.2.0"}, pkg: "vai-workflow-keeper", category: "ingestion", tools: []string{"ingest", "loop"}},
		{name: "weft's format", workflow: weftFormat, pkg: "vai-workflow-t", category: "utility", tools: []string{"template"},
			warnings: []string{"the workflow is written in weft's format ($schema names weft): vai reads only its own, weft runs it either way"}},
		{name: "invalid workflow", workflow: `{"name": "x", "steps": [{"id": "a", "tool": "serch"}]}`, wantErr: "is not a valid workflow, so no package was made"},
		{name: "bad name", workflow: retrieval, o: vaipkg.CreateOptions{Name: "Legal Research"}, wantErr: `--name "Legal Research": a package name is vai-workflow- and lowercase letters`},
		{name: "bad version", workflow: retrieval, o: vaipkg.CreateOptions{Version: "one"}, wantErr: `--version "one" is not a version: npm takes MAJOR.MINOR.PATCH, like 1.0.0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Dir = filepath.Join(t.TempDir(), "pkg")
			c, err := vaipkg.Create("w.json", []byte(tc.workflow), tc.o)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.NoDirExists(t, tc.o.Dir, "nothing written")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.pkg, c.Name)
			require.Equal(t, tc.category, c.Category)
			require.Equal(t, tc.tools, c.Tools)
			require.Equal(t, tc.warnings, c.Warnings)
			data, err := os.ReadFile(filepath.Join(tc.o.Dir, "workflow.json"))
			require.NoError(t, err)
			require.Equal(t, tc.workflow, string(data), "the workflow as written")

			store := vaipkg.Store{Dir: filepath.Join(t.TempDir(), "packages")}
			p, err := store.Install(context.Background(), tc.o.Dir, vaipkg.Registry{})
			require.NoError(t, err)
			require.Empty(t, p.Warnings)
			require.Equal(t, tc.pkg, p.Name)
			require.Equal(t, tc.category, p.Vai.Category)
			require.Equal(t, tc.tools, p.Vai.Tools)
			require.Equal(t, "1.0", p.Vai.WorkflowVersion)
			require.Equal(t, "MIT", p.License)
			require.Equal(t, tc.o.Author, p.Author)

			_, err = vaipkg.Create("w.json", []byte(tc.workflow), tc.o)
			require.ErrorContains(t, err, "already exists: give another --output, or --force")
			tc.o.Force = true
			_, err = vaipkg.Create("w.json", []byte(tc.workflow), tc.o)
			require.NoError(t, err)
		})
	}

	dir := filepath.Join(t.TempDir(), "pkg")
	_, err := vaipkg.Create("w.json", []byte(retrieval), vaipkg.CreateOptions{Dir: dir})
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	require.Equal(t, "# vai-workflow-docs-qa\n\nAnswers from the docs\n\n"+
		"## Inputs\n\n| Input | Type | Required | Default | Description |\n|---|---|---|---|---|\n"+
		"| `q` | string | yes |  | the question \\| asked |\n\n"+
		"## Steps\n\n1. `find` (search): Find passages\n1. `ranked` (rerank): ranked\n\n"+
		"## Use\n\n```sh\nweft install vai-workflow-docs-qa   # or: vai workflow install vai-workflow-docs-qa\n"+
		"weft run vai-workflow-docs-qa --input q=...\n```\n", string(readme))
}

// TestCreateForceNeverFollowsLinks: --force replaces the package's files but never writes through
// a link at one of their names (to a file outside the folder): it is refused with nothing written,
// and the file it points to is untouched.
func TestCreateForceNeverFollowsLinks(t *testing.T) {
	const workflow = `{"name": "t", "steps": [{"id": "a", "tool": "template", "inputs": {"text": "hi"}}]}`
	for _, name := range []string{"workflow.json", "package.json", "README.md"} {
		t.Run(name, func(t *testing.T) {
			victim := filepath.Join(t.TempDir(), "victim")
			require.NoError(t, os.WriteFile(victim, []byte("keep me"), 0o600))
			dir := filepath.Join(t.TempDir(), "pkg")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.Symlink(victim, filepath.Join(dir, name)))

			_, err := vaipkg.Create("w.json", []byte(workflow), vaipkg.CreateOptions{Dir: dir, Force: true})
			got, rerr := os.ReadFile(victim)
			require.NoError(t, rerr)
			require.Equal(t, "keep me", string(got), "the file the link points to is untouched")
			require.ErrorContains(t, err, filepath.Join(dir, name)+" is a link: weft create never writes through one, --force included")
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "nothing written beside the link")
		})
	}
}
