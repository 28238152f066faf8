package starter_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readme returns the repository's README.
func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	return string(data)
}

// docPage is one page of the documentation: the README or a page of docs/.
type docPage struct {
	path string // from the repository's root: README.md, docs/cli.md
	text string
}

// docPages returns the README and the hand-written pages of docs/ (the generated reference under
// docs/cli is TestCLIReference's).
func docPages(t *testing.T) []docPage {
	t.Helper()
	pages := []docPage{{"README.md", readme(t)}}
	files, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, files, "docs/ holds the documentation")
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		pages = append(pages, docPage{strings.TrimPrefix(filepath.ToSlash(f), "../"), string(data)})
	}
	return pages
}

// docFile returns one page of the documentation by its path from the repository's root.
func docFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", path))
	require.NoError(t, err)
	return string(data)
}

// docParagraph returns the paragraph of the page at path that starts with prefix.
func docParagraph(t *testing.T, path, prefix string) string {
	t.Helper()
	s := docFile(t, path)
	i := strings.Index(s, "\n"+prefix)
	require.GreaterOrEqual(t, i, 0, "%s has a paragraph starting %q", path, prefix)
	s = s[i+1:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	return strings.Join(strings.Fields(s), " ")
}

// TestReadmeListsWhatCIRunInstalls: everything .ci/run installs on a fresh machine is in the
// list of what `make test` needs (docs/maintainers.md, where the README points), and the list
// names .ci/run as the fresh-machine command (issue 21: make test needed PostgreSQL, python3,
// curl, runuser and Node 20 unlisted).
func TestReadmeListsWhatCIRunInstalls(t *testing.T) {
	data, err := os.ReadFile("../.ci/run")
	require.NoError(t, err)
	script := string(data)
	require.Contains(t, script, "make test", ".ci/run runs the suite")
	needs := docParagraph(t, "docs/maintainers.md", "What `make test` needs")
	require.Contains(t, needs, "`.ci/run`", "docs/maintainers.md names the fresh-machine command")
	require.Contains(t, readme(t), "(docs/maintainers.md)", "the README points to what make test needs")

	var found []string
	for _, m := range regexp.MustCompile(`(?m)^need (\S+) (\S+)`).FindAllStringSubmatch(script, -1) {
		found = append(found, m[1])
		require.True(t, strings.Contains(needs, m[1]) || strings.Contains(needs, m[2]),
			".ci/run installs %s (%s); docs/maintainers.md's list of what make test needs does not say so:\n%s", m[1], m[2], needs)
	}
	for _, m := range regexp.MustCompile(`(?m)\|\| apt_install ([a-z0-9-]+)$`).FindAllStringSubmatch(script, -1) {
		found = append(found, m[1])
		require.Contains(t, strings.ToLower(needs), m[1], ".ci/run installs %s", m[1])
	}
	if m := regexp.MustCompile(`NODE_VERSION=(\d+)\.`).FindStringSubmatch(script); m != nil {
		found = append(found, "node")
		require.Contains(t, needs, "Node.js "+m[1]+" or later", ".ci/run installs Node.js %s", m[1])
	}
	for _, want := range []string{"make", "gcc", "curl", "python3", "runuser", "chromium", "postgresql", "node"} {
		require.Contains(t, found, want, ".ci/run checks for %s", want)
	}
}

// TestMakefileGoTestLinesSetTimeouts: every go test line that runs tests says how long its
// packages may take, instead of go test's 10-minute default (issue 21).
func TestMakefileGoTestLinesSetTimeouts(t *testing.T) {
	data, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, "$(GO) test") || strings.Contains(line, "-fuzz ") || strings.Contains(line, "-bench ") {
			continue // fuzzing and benchmarks run after the test alarm stops
		}
		n++
		require.Regexp(t, `-timeout \S+`, line, "a go test line without -timeout")
	}
	require.GreaterOrEqual(t, n, 2, "the Makefile's test lines were found")
}

// docBlock is one fenced block of a documentation page.
type docBlock struct {
	where string // PAGE:LINE of the block's first line
	text  string
}

// docBlocks returns the blocks fenced as lang (```json, ```sh) of the README and docs/.
func docBlocks(t *testing.T, lang string) []docBlock {
	t.Helper()
	var out []docBlock
	for _, p := range docPages(t) {
		lines := strings.Split(p.text, "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```"+lang {
				continue
			}
			start := i + 1
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			}
			out = append(out, docBlock{where: fmt.Sprintf("%s:%d", p.path, start+1), text: strings.Join(lines[start:i], "\n")})
		}
	}
	return out
}

// TestReadmeJSONSnippetsValidate: every JSON block of the README and docs/ is what weft accepts: workflow
// files and steps pass `weft validate`, a fragment of a workflow file validates inside one, and a
// fixture passes `weft test` (issue 21: the README's child-workflow step was refused by the
// validator). MCP client configurations are only parsed.
func TestReadmeJSONSnippetsValidate(t *testing.T) {
	blocks := docBlocks(t, "json")
	require.GreaterOrEqual(t, len(blocks), 8, "the JSON blocks of the README and docs/ were found")
	kinds := map[string]int{}
	inputRef := regexp.MustCompile(`inputs\.([a-z_][a-z0-9_]*)`)
	for _, b := range blocks {
		where := b.where
		dir := t.TempDir()
		text := strings.TrimSpace(b.text)
		if !strings.HasPrefix(text, "{") {
			// A fragment of a workflow file (its top-level members): validate it inside one.
			kinds["fragment"]++
			file := filepath.Join(dir, "fragment.json")
			require.NoError(t, os.WriteFile(file, []byte(`{"name": "readme-fragment", "steps": [{"id": "s", "tool": "template", "inputs": {"text": "x"}}],`+"\n"+text+"}"), 0o644))
			code, out, errOut := weft(t, "", "validate", file)
			require.Equal(t, 0, code, "%s: the fragment does not validate in a workflow file:\n%s%s", where, out, errOut)
			continue
		}
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(text), &v), "%s: not JSON", where)
		switch {
		case v["steps"] != nil:
			kinds["workflow"]++
			file := filepath.Join(dir, "workflow.json")
			require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
			code, out, errOut := weft(t, "", "validate", file)
			require.Equal(t, 0, code, "%s: the workflow does not validate:\n%s%s", where, out, errOut)
		case v["tool"] != nil && v["id"] != nil:
			// One step: validate it in a workflow that declares the inputs it reads.
			kinds["step"]++
			inputs := map[string]any{}
			for _, m := range inputRef.FindAllStringSubmatch(text, -1) {
				inputs[m[1]] = map[string]any{"type": "string"}
			}
			wf, err := json.Marshal(map[string]any{"name": "readme-step", "inputs": inputs, "steps": []any{json.RawMessage(text)}})
			require.NoError(t, err)
			file := filepath.Join(dir, "step.json")
			require.NoError(t, os.WriteFile(file, wf, 0o644))
			code, out, errOut := weft(t, "", "validate", file)
			require.Equal(t, 0, code, "%s: the step does not validate:\n%s%s", where, out, errOut)
		case v["expect"] != nil || v["mocks"] != nil:
			kinds["fixture"]++
			require.NotEmpty(t, v["workflow"], "%s: a fixture in the documentation names its workflow, so it can run", where)
			file := filepath.Join(dir, "readme.case.test.json")
			require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
			code, out, errOut := weft(t, "", "test", file)
			require.Equal(t, 0, code, "%s: the fixture does not pass:\n%s%s", where, out, errOut)
		case len(v) == 1 && v["mcpServers"] != nil:
			kinds["client config"]++ // an MCP client's file, not weft's
		default:
			t.Fatalf("%s: a JSON block this test does not know how to check; teach it:\n%s", where, text)
		}
	}
	for _, k := range []string{"workflow", "step", "fragment", "fixture"} {
		require.NotZero(t, kinds[k], "the documentation shows a %s (found: %v)", k, kinds)
	}
	// The README's own blocks are checked too: it shows a workflow and a fixture.
	var inReadme int
	for _, b := range blocks {
		if strings.HasPrefix(b.where, "README.md:") {
			inReadme++
		}
	}
	require.GreaterOrEqual(t, inReadme, 2, "the README's workflow and fixture blocks were found")
}
