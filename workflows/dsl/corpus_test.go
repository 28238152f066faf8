package dsl_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

var update = flag.Bool("update", false, "rewrite golden files")

const repo = "../.."

// TestBadCorpus validates every file in testdata/bad and compares the messages with the golden file.
func TestBadCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repo, "testdata/bad/*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 40, "the bad-input corpus keeps at least 40 files")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			_, err = dsl.Load("testdata/bad/"+name+".json", data)
			require.Error(t, err, "a file in the bad corpus must not validate")
			var ds dsl.Diagnostics
			require.True(t, errors.As(err, &ds), "errors are Diagnostics, got %T", err)
			require.True(t, ds.HasErrors())
			got := ds.Error() + "\n"
			golden := strings.TrimSuffix(f, ".json") + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./workflows/dsl -update to create the golden file")
			require.Equal(t, string(want), got)
		})
	}
}

// TestExamples checks the seed example workflows (vai files and Flow files) and the built-in templates.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repo, "testdata/examples/*.json"))
	require.NoError(t, err)
	tmpl, err := filepath.Glob(filepath.Join(repo, "templates/workflows/*.json"))
	require.NoError(t, err)
	files = append(files, tmpl...)
	require.GreaterOrEqual(t, len(files), 10)
	for _, f := range files {
		if strings.HasSuffix(f, ".test.json") {
			continue // weft test fixtures, not workflows
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			w, err := dsl.LoadFile(f)
			require.NoError(t, err)
			for _, d := range w.Warnings {
				// vai files may leave the collection to the command line (weft run --collection);
				// weft says so, and the built-in templates never need it.
				if !strings.Contains(f, "templates") && strings.Contains(d.Message, "has no collection") {
					continue
				}
				t.Errorf("unexpected warning: %s", d)
			}
			require.Len(t, w.Order, len(w.Steps))
		})
	}
}

func TestPlanGolden(t *testing.T) {
	cases := []struct {
		file   string
		inputs map[string]string
	}{
		{"testdata/examples/vai-multi-collection-search.json", map[string]string{"query": "How does auth work?"}},
		{"testdata/examples/vai-smart-ingest.json", map[string]string{"text": "new doc", "source": "notes.md"}},
		{"testdata/examples/flow-parallel.json", nil},
		{"templates/workflows/research-and-summarize.json", map[string]string{"question": "what is rag?"}},
		// a forEach of 6 given items is counted per item (batched embeddings per request), a
		// forEach over a step's results once, said as such
		{"testdata/examples/foreach-given-items.weft.json", nil},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			w, err := dsl.LoadFile(filepath.Join(repo, c.file))
			require.NoError(t, err)
			in, err := dsl.ResolveInputs(w.Def, c.inputs, nil)
			require.NoError(t, err)
			got := dsl.NewPlan(w, in, map[string]any{"db": "override_db"}).Text()
			golden := filepath.Join("testdata", strings.TrimSuffix(strings.TrimSuffix(filepath.Base(c.file), ".json"), ".weft")+".plan.golden")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			require.Equal(t, string(want), got)
		})
	}
}
