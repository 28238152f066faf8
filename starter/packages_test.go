package starter_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/vaipkg/vaipkgtest"
)

// packagesEnv points weft at an empty package store of the test's own.
func packagesEnv(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "packages")
	t.Setenv("WEFT_PACKAGES_DIR", dir)
	return dir
}

// TestPackageCommands: weft install from a directory, a .tgz and the npm registry; list
// --packages, info, validate and run --dry-run by package name; uninstall; an invalid package or a
// wrong integrity is refused and nothing is listed.
func TestPackageCommands(t *testing.T) {
	const name = "vai-workflow-greet"
	tgz := vaipkgtest.Tgz(t, vaipkgtest.Package(name, "1.1.0"))
	invalid := vaipkgtest.Package(name, "1.2.0")
	invalid["workflow.json"] = vaipkgtest.InvalidWorkflow
	tests := []struct {
		name    string
		arg     func(t *testing.T) string
		code    int
		wantOut string
		wantErr string
	}{
		{name: "directory", arg: func(t *testing.T) string { return vaipkgtest.Dir(t, vaipkgtest.Package(name, "1.1.0")) },
			wantOut: "installed vai-workflow-greet@1.1.0 (community)"},
		{name: "tgz", arg: func(t *testing.T) string { return vaipkgtest.WriteTgz(t, tgz) }, wantOut: "installed vai-workflow-greet@1.1.0 (community)"},
		{name: "registry", arg: func(t *testing.T) string {
			t.Setenv("WEFT_NPM_REGISTRY", vaipkgtest.NewRegistry(t, name, vaipkgtest.Version{Version: "1.1.0", Tarball: tgz}).URL)
			return name
		}, wantOut: "installed vai-workflow-greet@1.1.0 (community)"},
		{name: "registry wrong integrity", arg: func(t *testing.T) string {
			t.Setenv("WEFT_NPM_REGISTRY", vaipkgtest.NewRegistry(t, name, vaipkgtest.Version{Version: "1.1.0", Tarball: tgz, Integrity: vaipkgtest.SRI([]byte("other"))}).URL)
			return name
		}, code: 2, wantErr: "integrity check failed"},
		{name: "invalid workflow", arg: func(t *testing.T) string { return vaipkgtest.Dir(t, invalid) }, code: 2, wantErr: "its workflow is invalid, nothing installed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			packagesEnv(t)
			code, out, errOut := weft(t, "", "install", tc.arg(t))
			require.Equal(t, tc.code, code, out+errOut)
			require.Contains(t, out, tc.wantOut)
			require.Contains(t, errOut, tc.wantErr)
			if tc.code != 0 {
				_, out, _ = weft(t, "", "list", "--packages")
				require.Contains(t, out, "No workflow packages installed")
				code, out, _ = weft(t, "", "validate", name)
				require.Equal(t, 2, code)
				require.Contains(t, out, "nor an installed package", "a refused package is not runnable")
				return
			}

			code, out, _ = weft(t, "", "list", "--packages")
			require.Equal(t, 0, code)
			require.Regexp(t, `vai-workflow-greet\s+1\.1\.0\s+community\s+A greeting workflow`, out)
			code, out, _ = weft(t, "", "list", "--packages", "--json")
			require.Equal(t, 0, code)
			var listed []struct{ Name, Version, Tier string }
			require.NoError(t, json.Unmarshal([]byte(out), &listed))
			require.Equal(t, []struct{ Name, Version, Tier string }{{name, "1.1.0", "community"}}, listed)

			code, out, errOut = weft(t, "", "info", name)
			require.Equal(t, 0, code, errOut)
			for _, want := range []string{"vai-workflow-greet 1.1.0 (community)", "Ana <ana@example.com>", "category utility",
				"minVaiVersion 1.4.0", `Workflow "greet": Greets someone`, "who", "whom to greet", "1. hello", "template"} {
				require.Contains(t, out, want)
			}

			code, out, _ = weft(t, "", "validate", name)
			require.Equal(t, 0, code, out)
			require.Contains(t, out, "workflow.json: valid, 1 step")
			code, out, errOut = weft(t, "", "run", name, "--dry-run", "--input", "who=ana")
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "hello")

			code, out, _ = weft(t, "", "uninstall", name)
			require.Equal(t, 0, code)
			require.Contains(t, out, "uninstalled vai-workflow-greet@1.1.0")
			code, out, _ = weft(t, "", "validate", name)
			require.Equal(t, 2, code)
			require.Contains(t, out, "nor an installed package")
			code, _, errOut = weft(t, "", "run", name, "--dry-run")
			require.Equal(t, 2, code)
			require.Contains(t, errOut, "nor an installed package")
		})
	}
}

// TestPackageNameOrder: a built-in template of the same name as an installed package wins.
func TestPackageNameOrder(t *testing.T) {
	packagesEnv(t)
	code, _, errOut := weft(t, "", "install", vaipkgtest.Dir(t, vaipkgtest.Package("approval-demo", "1.0.0")))
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "not named like a vai workflow package")
	code, out, _ := weft(t, "", "validate", "approval-demo")
	require.Equal(t, 0, code)
	require.Contains(t, out, "approval-demo: valid", "the template, not the package's workflow.json")
	require.NotContains(t, out, "workflow.json")
}

// TestCheckCommand: weft check on files, a template and an installed package: warnings and notes
// exit 0, an unknown tool or a missing file exits 1; --json gives the findings.
func TestCheckCommand(t *testing.T) {
	packagesEnv(t)
	code, _, errOut := weft(t, "", "install", "../testdata/vai/packages/vai-workflow-digest")
	require.Equal(t, 0, code, errOut)
	const checks = "../internal/vaipkg/testdata/check/"
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"package and template", []string{"vai-workflow-digest", "review-before-ingest"}, 0,
			[]string{"vai-workflow-digest/1.0.0/workflow.json: ok", "review-before-ingest: 0 errors, 0 warnings, 3 notes"}},
		{"risky file", []string{checks + "risky.json"}, 0, []string{
			`warning: step "metadata": http to 169.254.169.254`,
			`warning: step "store": ingest writes to the knowledge store and no review step runs before it`,
			"risky.json: 0 errors, 6 warnings, 3 notes"}},
		{"unknown tool", []string{checks + "reviewed.json", checks + "unknown-tool.json"}, 1, []string{
			"reviewed.json: ok", `error: step "find": unknown tool "serch" (did you mean "search"?`}},
		{"no such file", []string{"no-such-workflow.json"}, 1, []string{"no-such-workflow.json: error: no-such-workflow.json: no such file"}},
		// a package directory: what install says of its package.json, then its workflow's findings
		{"package directory", []string{"../testdata/vai/packages/vai-workflow-digest"}, 0, []string{
			"../testdata/vai/packages/vai-workflow-digest/package.json: warning: package.json declares scripts (postinstall): weft never runs them",
			"../testdata/vai/packages/vai-workflow-digest: 0 errors, 1 warning, 0 notes"}},
		{"package directory weft cannot read", []string{brokenPackage(t)}, 1, []string{
			`package.json: error: `, `package.json of vai-workflow-x has no "version" (a workflow package is a package.json (name, version, a "vai" field) plus the workflow file its "main" names (workflow.json))`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := weft(t, "", append([]string{"check"}, tc.args...)...)
			require.Equal(t, tc.code, code, out+errOut)
			for _, w := range tc.want {
				require.Contains(t, out, w)
			}
		})
	}
	code, out, _ := weft(t, "", "check", "--json", checks+"unknown-tool.json")
	require.Equal(t, 1, code)
	var res []struct {
		File     string
		Findings []struct{ Step, Severity, Check, Message, Fix string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res, 1)
	require.Len(t, res[0].Findings, 2)
	require.Equal(t, "find", res[0].Findings[0].Step)
	require.Equal(t, "unknown-tool", res[0].Findings[0].Check)
}

// TestReadmePackageCommands runs the workflow-package commands of docs/packages.md as written
// (bin/weft replaced by the in-process CLI), the registry lines against a fake npm registry
// serving the testdata package.
func TestReadmePackageCommands(t *testing.T) {
	s := docFile(t, "docs/packages.md")
	i := strings.Index(s, "# Workflow packages: `weft install`")
	require.GreaterOrEqual(t, i, 0)
	s = s[i:]
	s = s[strings.Index(s, "```sh\n")+6:]
	s = s[:strings.Index(s, "```")]

	const pkgDir = "../testdata/vai/packages/vai-workflow-digest"
	t.Setenv("WEFT_NPM_REGISTRY", vaipkgtest.NewRegistry(t, "vai-workflow-digest",
		vaipkgtest.Version{Version: "1.0.0", Tarball: tgzOfDir(t, pkgDir)}).URL)
	packagesEnv(t)
	n := 0
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		require.Equal(t, "bin/weft", fields[0])
		args := fields[1:]
		for j, a := range args {
			if strings.HasPrefix(a, "testdata/") || strings.HasPrefix(a, "templates/") {
				args[j] = "../" + a // the test runs in starter/
			}
			if j > 0 && args[j-1] == "--output" {
				args[j] = filepath.Join(t.TempDir(), a) // weft create writes there
			}
		}
		code, out, errOut := weft(t, "", args...)
		require.Equal(t, 0, code, "%s\n%s%s", line, out, errOut)
		n++
	}
	require.Equal(t, 10, n)
}

// brokenPackage is a package directory whose package.json has no version.
func brokenPackage(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name": "vai-workflow-x"}`), 0o644))
	return dir
}

// tgzOfDir packs a package directory the way npm pack does (entries under package/).
func tgzOfDir(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: "package/" + e.Name(), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err = tw.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// TestInstallOutput: weft install prints weft check's warnings and notes on the package's
// workflow to stderr and still installs it (exit 0; --json carries them as findings); text from
// package.json reaches install, list --packages and info without terminal controls.
func TestInstallOutput(t *testing.T) {
	const name = "vai-workflow-greet"
	const ingest = `{"name": "store", "description": "Stores a text",
		"inputs": {"text": {"type": "string", "description": "what to store"}},
		"steps": [{"id": "store", "name": "Store it", "tool": "ingest", "inputs": {"text": "{{ inputs.text }}", "source": "t", "collection": "docs"}}]}`
	const private = `{"name": "meta", "steps": [{"id": "get", "name": "Read it", "tool": "http", "inputs": {"url": "http://169.254.169.254/"}}]}`
	pkg := func(workflow string, extra map[string]any) vaipkgtest.Files {
		f := vaipkgtest.Package(name, "1.1.0")
		f["workflow.json"] = workflow
		f["package.json"] = vaipkgtest.Manifest(name, "1.1.0", extra)
		return f
	}
	tests := []struct {
		name       string
		files      vaipkgtest.Files
		wantErrOut []string
		wantList   string
		wantInfo   []string
	}{
		{name: "no findings", files: pkg(vaipkgtest.Workflow, nil), wantList: "A greeting workflow"},
		{name: "ingest without review", files: pkg(ingest, nil), wantErrOut: []string{
			name + `/workflow.json: warning: step "store": ingest writes to the knowledge store and no review step runs before it`}},
		{name: "private address and no description", files: pkg(private, nil), wantErrOut: []string{
			name + `/workflow.json: note: the workflow has no "description"`,
			name + `/workflow.json: warning: step "get": http to 169.254.169.254, a private, loopback or link-local address`}},
		{name: "terminal controls in package.json", files: pkg(vaipkgtest.Workflow, map[string]any{
			"description": "\x1b[2J\x1b[HGreets\x07 people.\r\n\u202eSecond line.",
			"author":      "Ana\x1b]0;pwned\x07", "keywords": []string{"demo\x1b[8m"},
			"vai":     map[string]any{"category": "util\u2066ity", "tags": []string{"x\u009b2J"}},
			"scripts": map[string]any{"post\x1b[1Ainstall": "x"}}),
			wantErrOut: []string{"package.json declares scripts (postinstall)"},
			wantList:   "Greets people.", wantInfo: []string{"  Greets people.\n  Second line.\n", "author:    Ana\n", "keywords:  demo\n", "category utility; tags x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			packagesEnv(t)
			src := vaipkgtest.Dir(t, tc.files)
			code, out, errOut := weft(t, "", "install", src)
			require.Equal(t, 0, code, out+errOut)
			require.Contains(t, out, "installed vai-workflow-greet@1.1.0")
			for _, w := range tc.wantErrOut {
				require.Contains(t, errOut, w)
			}
			if len(tc.wantErrOut) == 0 {
				require.Empty(t, errOut)
			}
			code, out, _ = weft(t, "", "install", "--json", src)
			require.Equal(t, 0, code)
			var installed struct {
				Findings []struct{ Severity, Check string }
			}
			require.NoError(t, json.Unmarshal([]byte(out), &installed))
			require.Equal(t, strings.Count(errOut, name+"/workflow.json: "), len(installed.Findings))

			code, list, _ := weft(t, "", "list", "--packages")
			require.Equal(t, 0, code)
			require.Contains(t, list, tc.wantList)
			code, info, errOut := weft(t, "", "info", name)
			require.Equal(t, 0, code, errOut)
			for _, w := range tc.wantInfo {
				require.Contains(t, info, w)
			}
			for _, s := range []string{out, list, info} {
				require.NotContains(t, s, "\x1b")
				require.NotContains(t, s, "\r")
				require.NotContains(t, s, "\x07")
				require.NotContains(t, s, "\u202e")
				require.NotContains(t, s, "\u2066")
				require.NotContains(t, s, "\u009b")
			}
		})
	}
}

// TestInfoWorkflowText: text from an installed package's workflow.json (the workflow's name and
// description, input names, types, descriptions and defaults, step ids, names and tools) reaches
// weft info's output without terminal controls, its visible text kept; --json keeps it as written,
// every control and bidi control escaped.
func TestInfoWorkflowText(t *testing.T) {
	const name = "vai-workflow-greet"
	// OSC 52 (writes the clipboard), CSI 2J (clears the screen), a bidi override and C1 CSI.
	const evil = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\u202e\u009b2J"
	workflow := func(field, value string) string {
		w := map[string]any{
			"name": "greet", "description": "Greets someone",
			"inputs": map[string]any{"who": map[string]any{"type": "string", "default": "world", "description": "whom to greet"}},
			"steps":  []any{map[string]any{"id": "hello", "name": "Say hello", "tool": "template", "inputs": map[string]any{"text": "hello {{ inputs.who }}"}}},
			"output": "{{ hello.output.text }}",
		}
		in := w["inputs"].(map[string]any)["who"].(map[string]any)
		step := w["steps"].([]any)[0].(map[string]any)
		switch field {
		case "description":
			w["description"] = value
		case "name":
			w["name"] = value
		case "input description":
			in["description"] = value
		case "input default":
			in["default"] = value
		case "step name":
			step["name"] = value
		}
		b, err := json.Marshal(w)
		require.NoError(t, err)
		return string(b)
	}
	tests := []struct {
		field string
		value string
		want  string // in weft info's output
		json  bool   // the field is in weft info --json's
	}{
		{"description", "Greets " + evil + "someone", `Workflow "greet": Greets someone`, false},
		{"name", "gr" + evil + "eet", `Workflow "greet"`, true},
		{"input description", "whom " + evil + "to greet", "whom to greet", true},
		{"input default", "wor" + evil + "ld", `default "world"`, true},
		{"step name", "Say " + evil + "hello", "Say hello", true},
	}
	for _, tc := range tests {
		t.Run(tc.field, func(t *testing.T) {
			packagesEnv(t)
			files := vaipkgtest.Package(name, "1.1.0")
			files["workflow.json"] = workflow(tc.field, tc.value)
			code, out, errOut := weft(t, "", "install", vaipkgtest.Dir(t, files))
			require.Equal(t, 0, code, out+errOut)

			code, info, errOut := weft(t, "", "info", name)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, info, tc.want)
			for _, bad := range []string{"\x1b", "\x07", "]52;", "[2J", "\u202e", "\u009b"} {
				require.NotContains(t, info, bad)
			}

			code, out, errOut = weft(t, "", "info", "--json", name)
			require.Equal(t, 0, code, errOut)
			for _, bad := range []string{"\x1b", "\u202e", "\u009b"} {
				require.NotContains(t, out, bad, "--json escapes controls and bidi controls")
			}
			if tc.json {
				require.Contains(t, out, `\u001b]52;c;cHduZWQ=\u0007\u001b[2J\u202e\u009b2J`, "--json keeps the text as written, escaped")
				var v any
				require.NoError(t, json.Unmarshal([]byte(out), &v), "the escaped output is JSON")
				require.Contains(t, fmt.Sprint(v), evil, "and decodes to the text as written")
			}
		})
	}
}
