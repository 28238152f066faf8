package dsl_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/weftworks/weft/workflows/dsl"
)

// FuzzLoad feeds arbitrary bytes to the parser and validator: they must return a workflow or
// Diagnostics, never panic.
func FuzzLoad(f *testing.F) {
	for _, dir := range []string{"testdata/examples", "testdata/bad", "templates/workflows"} {
		files, _ := filepath.Glob(filepath.Join(repo, dir, "*.json"))
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := dsl.Load("fuzz.json", data)
		if err == nil {
			if w == nil {
				t.Fatal("nil workflow without error")
			}
			_ = dsl.NewPlan(w, map[string]any{}, nil).Text()
			return
		}
		if _, ok := err.(dsl.Diagnostics); !ok {
			t.Fatalf("error is %T, want Diagnostics: %v", err, err)
		}
	})
}
