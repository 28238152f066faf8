package starter

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzFixture feeds arbitrary fixtures to `weft test`'s runner (decoding, review decisions,
// mocks, expectations, the run in Temporal's test environment): it must report problems, never
// panic or hang.
func FuzzFixture(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "templates", "tests", "*.test.json"))
	more, _ := filepath.Glob(filepath.Join("..", "testdata", "vai", "*.test.json"))
	for _, p := range append(files, more...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"workflow":"approval-demo","reviews":{"approval":{"decision":"yolo"}},"expect":{}}`))
	f.Add([]byte(`{"workflow":"approval-demo","reviews":{"approval":{"decision":"edit"}},"expect":{"output":{"published":true}}}`))
	f.Add([]byte(`{"workflow":"multi-collection-search","inputs":{"query":"q"},"mocks":{"query":{"results":[]},"$calls":{"rerank":[{"results":[]}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		type result struct {
			name     string
			problems []string
		}
		done := make(chan result, 1)
		path := filepath.Join(t.TempDir(), "fuzz.test.json")
		go func() {
			n, p := runFixtureData(path, data)
			done <- result{n, p}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("weft test hangs on this fixture:\n%s", data)
		}
		name, problems := r.name, r.problems
		if name == "" {
			t.Fatal("no name for the fixture")
		}
		for _, p := range problems {
			if p == "" {
				t.Fatal("an empty problem message")
			}
		}
	})
}
