package vaipkg_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/vaipkg"
	"github.com/weftworks/weft/internal/vaipkg/vaipkgtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestCheckGolden: the findings of weft check on files that trip each rule (and one that trips
// none), worded as testdata/check.golden says.
func TestCheckGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/check/*.json")
	require.NoError(t, err)
	require.Len(t, files, 4)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, fd := range vaipkg.Check(filepath.ToSlash(f), data) {
			b.WriteString(fd.String() + "\n")
		}
	}
	if *update {
		require.NoError(t, os.WriteFile("testdata/check.golden", []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile("testdata/check.golden")
	require.NoError(t, err)
	require.Equal(t, string(want), b.String())
}

// TestCheckPackage: a package directory is checked as install reads it: package.json's warnings
// (compatibility fields included) as findings of check "package", then the workflow's findings.
func TestCheckPackage(t *testing.T) {
	files := vaipkgtest.Package("vai-workflow-greet", "1.0.0")
	files["package.json"] = vaipkgtest.Manifest("vai-workflow-greet", "1.0.0", map[string]any{
		"vai": map[string]any{"workflowVersion": "1.0", "tools": []string{"template", "teleport"}}})
	files["workflow.json"] = `{"name": "store", "steps": [{"id": "store", "tool": "ingest", "inputs": {"text": "t", "source": "s", "collection": "docs"}}]}`
	dir := vaipkgtest.Dir(t, files)
	var got []string
	for _, f := range vaipkg.CheckPackage(dir) {
		got = append(got, strings.TrimPrefix(f.String(), filepath.ToSlash(dir)+"/"))
	}
	require.Equal(t, []string{
		`package.json: warning: package.json "vai.tools" names "teleport", which weft does not have: list the tools the workflow's steps use (weft tools lists weft's)`,
		`workflow.json: note: the workflow has no "description" (add one saying what it does and what it needs: weft list, weft info and MCP clients show it)`,
		`workflow.json: warning: step "store": ingest writes to the knowledge store and no review step runs before it (add a review step (tool "review") that shows what will be written, and name it in "store"'s "dependsOn" or use its output)`,
		`workflow.json: note: step "store": the step has no "name" (add a short one saying what it does: plans, weft status and the Temporal UI show it)`,
	}, got)
}

// TestFindingTextIsInert: what a finding quotes from the file (here a host with a bidi override
// and an escape sequence) prints escaped, never raw.
func TestFindingTextIsInert(t *testing.T) {
	file := "{\"name\":\"x\",\"description\":\"d\",\"steps\":[{\"id\":\"a\\u001b[2J\",\"name\":\"n\",\"tool\":\"http\",\"inputs\":{\"url\":\"http://\\u202eevil.localhost/x\"}}]}"
	fs := vaipkg.Check("w.json", []byte(file))
	require.NotEmpty(t, fs)
	var all strings.Builder
	for _, f := range fs {
		all.WriteString(f.String() + "\n")
	}
	out := all.String()
	require.False(t, strings.ContainsFunc(out, func(r rune) bool { return r != '\n' && vaipkg.Unsafe(r) }), out)
	require.Contains(t, out, `step "a\x1b[2J": http to \u202Eevil.localhost, a private, loopback or link-local address`)
}

// TestCheckCodeIndexRepoPrivate: a code_index step (a loop's too) whose repo is a literal private,
// loopback or link-local address is flagged as an http step's URL is; a public or templated repo
// and a local path are not.
func TestCheckCodeIndexRepoPrivate(t *testing.T) {
	step := func(inputs string) string {
		return `{"name": "x", "description": "d", "steps": [{"id": "s", "name": "n", "tool": "review", "inputs": {"content": "c"}},` +
			`{"id": "idx", "name": "n", "tool": "code_index", "dependsOn": ["s"], "inputs": ` + inputs + `}]}`
	}
	loop := `{"name": "x", "description": "d", "inputs": {"repos": {"type": "array", "description": "d"}}, "steps": [{"id": "s", "name": "n", "tool": "review", "inputs": {"content": "c"}},` +
		`{"id": "each", "name": "n", "tool": "loop", "dependsOn": ["s"], "inputs": {"items": "{{ inputs.repos }}", "step": {"tool": "code_index", "inputs": {"repo": "http://[::1]/x.git"}}}}]}`
	cases := []struct {
		name string
		file string
		want string
	}{
		{"private address", step(`{"repo": "http://10.0.0.5/team/x.git"}`), `code_index clones from 10.0.0.5, a private, loopback or link-local address`},
		{"localhost", step(`{"repo": "https://localhost:3000/x.git", "ref": "main"}`), `code_index clones from localhost`},
		{"a loop's step", loop, `code_index clones from ::1`},
		{"public host", step(`{"repo": "https://github.com/weftworks/weft"}`), ""},
		{"templated host", step(`{"repo": "https://{{ inputs.host }}/x.git"}`), ""},
		{"a directory", step(`{"path": "/srv/repos/x"}`), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var private []string
			for _, f := range vaipkg.Check("w.json", []byte(c.file)) {
				if f.Check == "private-address" {
					private = append(private, f.String())
				}
			}
			if c.want == "" {
				require.Empty(t, private)
				return
			}
			require.Len(t, private, 1)
			require.Contains(t, private[0], c.want)
			require.Contains(t, private[0], "WEFT_CODE_GIT_HOSTS")
			require.Contains(t, private[0], "unless its WEFT_CODE_GIT_ALLOW names it", "code_index has its own address allowance")
		})
	}
}
