package vaipkg_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/vaipkg"
	"github.com/weftworks/weft/internal/vaipkg/vaipkgtest"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestMarkVai: a vai package's workflow text gets a "$schema" naming vai at the start of its
// object, on its first line, unless it has one; other text is left as it is.
func TestMarkVai(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"name":"a"}`, `{"$schema":"vai workflow (installed vai package)","name":"a"}`},
		{"{\n  \"name\": \"a\"\n}", "{\"$schema\":\"vai workflow (installed vai package)\",\n  \"name\": \"a\"\n}"},
		{`{}`, `{"$schema":"vai workflow (installed vai package)"}`},
		{` { } `, ` {"$schema":"vai workflow (installed vai package)" } `},
		{`{"$schema":"https://weft.dev/schemas/workflow-v1.json","name":"a"}`, `{"$schema":"https://weft.dev/schemas/workflow-v1.json","name":"a"}`},
		{`[1]`, `[1]`},
		{`not json`, `not json`},
	} {
		require.Equal(t, tc.want, string(vaipkg.MarkVai([]byte(tc.in))), tc.in)
	}
}

// TestInstallVaiPackageDialect: a package vai's by its package.json (a "vai" field, or a vai
// name) has its workflow read in vai's dialect, so a field vai ignores (template's format) is a
// warning and the package installs and checks clean; another package's workflow, or one whose
// $schema names weft, stays strict.
func TestInstallVaiPackageDialect(t *testing.T) {
	const workflow = `{"name":"p4","steps":[{"id":"t","tool":"template","inputs":{"text":"hi","format":"md"}}]}`
	tests := []struct {
		name, manifest, workflow, wantErr string
	}{
		{name: "a vai field", manifest: `{"name":"vai-workflow-p4","version":"1.0.0","vai":{"workflowVersion":"1.0"}}`, workflow: workflow},
		{name: "a vai field, any name", manifest: `{"name":"p4-flow","version":"1.0.0","vai":{"workflowVersion":"1.0"}}`, workflow: workflow},
		{name: "a vai name", manifest: `{"name":"@vaicli/p4","version":"1.0.0"}`, workflow: workflow},
		{name: "neither", manifest: `{"name":"p4-flow","version":"1.0.0"}`, workflow: workflow, wantErr: `unknown field "format"`},
		{name: "weft's $schema", manifest: `{"name":"vai-workflow-p4","version":"1.0.0","vai":{"workflowVersion":"1.0"}}`,
			workflow: `{"$schema":"https://weft.dev/schemas/workflow-v1.json",` + workflow[1:], wantErr: `unknown field "format"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := vaipkgtest.Dir(t, vaipkgtest.Files{"package.json": tc.manifest, "workflow.json": tc.workflow})
			store := vaipkg.Store{Dir: filepath.Join(t.TempDir(), "packages")}
			p, err := store.Install(context.Background(), dir, vaipkg.Registry{})
			findings := vaipkg.CheckPackage(dir)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.True(t, vaipkg.Failed(findings))
				return
			}
			require.NoError(t, err)
			require.False(t, vaipkg.Failed(findings), "%v", findings)
			m, err := vaipkg.ParseManifest([]byte(tc.manifest))
			require.NoError(t, err)
			file, data, err := store.Workflow(p.Name)
			require.NoError(t, err)
			// the worker, a retry and a fork compile the text the run carries, and nothing else
			_, err = dsl.Load(file, data)
			require.ErrorContains(t, err, `unknown field "format"`, "unmarked, the text alone is read as weft's")
			_, err = dsl.Load(file, vaipkg.MarkVai(data))
			require.NoError(t, err, "marked, the text says itself that it is vai's")
			w, err := vaipkg.LoadWorkflow(file, data, m.VaiDialect())
			require.NoError(t, err, "the installed package runs")
			require.Contains(t, w.DialectReason, "it is the workflow of package "+p.Name)
			require.Contains(t, w.Warnings.Error(), `unknown field "format": template does not take it, so it is ignored`)
		})
	}
}
