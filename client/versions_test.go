package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows/dsl"
)

// flow is a valid workflow file whose one step writes text.
func flow(text string) []byte {
	return fmt.Appendf(nil, "{\n  \"name\": \"w\",\n  \"steps\": [\n    {\"id\": \"a\", \"tool\": \"template\", \"inputs\": {\"text\": %q}}\n  ]\n}\n", text)
}

func newFiles(t *testing.T) (*weftclient.WorkflowFiles, string) {
	t.Helper()
	dir := t.TempDir()
	clock := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	f := weftclient.NewWorkflowFiles(dir)
	f.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	return f, dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// TestSaveWorkflowVersions: a save writes the file and records who, when, the content's sha256,
// the message and the version it was saved over; a save from a version that is not the current
// one is refused naming the current one; the same save again is the same version; a restore is a
// new version with the old content; the versions list newest first and a diff says what changed.
func TestSaveWorkflowVersions(t *testing.T) {
	ctx := context.Background()
	f, dir := newFiles(t)

	_, err := f.SaveWorkflow(ctx, "w", flow("one"), 3, "ana", "")
	var none *weftclient.VersionConflictError
	require.ErrorAs(t, err, &none, "a base the file never had")
	require.Contains(t, err.Error(), "has no saved version, not version 3")
	v1, err := f.SaveWorkflow(ctx, "w", flow("one"), 0, "ana", "first")
	require.NoError(t, err)
	require.True(t, v1.Created)
	require.Equal(t, weftclient.WorkflowVersionInfo{ID: 1, Who: "ana", When: time.Date(2026, 12, 3, 8, 0, 1, 0, time.UTC),
		SHA256: "", Message: "first", Size: len(flow("one")), Previous: 0}, func() weftclient.WorkflowVersionInfo { v := v1.Version; v.SHA256 = ""; return v }())
	require.Len(t, v1.Version.SHA256, 64)
	require.Equal(t, "w.json", v1.File)
	require.Equal(t, string(flow("one")), readFile(t, filepath.Join(dir, "w.json")))

	// retry-safe: the same content with the same base is version 1 again, nothing written
	again, err := f.SaveWorkflow(ctx, "w", flow("one"), 0, "ana", "first")
	require.NoError(t, err)
	require.False(t, again.Created)
	require.Equal(t, v1.Version, again.Version)

	v2, err := f.SaveWorkflow(ctx, "w", flow("two"), 1, "bob", "")
	require.NoError(t, err)
	require.Equal(t, 2, v2.Version.ID)
	require.Equal(t, 1, v2.Version.Previous)
	retry, err := f.SaveWorkflow(ctx, "w", flow("two"), 1, "bob", "")
	require.NoError(t, err)
	require.False(t, retry.Created, "a retry of save 2 (base 1) is version 2")
	require.Equal(t, 2, retry.Version.ID)

	// lost update refused: base 1 is not the current version
	for _, base := range []int{0, 1, 7} {
		_, err = f.SaveWorkflow(ctx, "w", flow("three"), base, "ana", "")
		var conflict *weftclient.VersionConflictError
		require.ErrorAs(t, err, &conflict, "base %d", base)
		require.Equal(t, 2, conflict.Current.ID)
		require.Equal(t, "bob", conflict.Current.Who)
		require.Contains(t, err.Error(), "its current version is 2")
	}
	require.Equal(t, string(flow("two")), readFile(t, filepath.Join(dir, "w.json")), "a refused save writes nothing")

	// restore: a new version with version 1's content
	r, err := f.RestoreWorkflow(ctx, "w", 1, "rita")
	require.NoError(t, err)
	require.True(t, r.Created)
	require.Equal(t, 3, r.Version.ID)
	require.Equal(t, 1, r.Version.Restored)
	require.Equal(t, v1.Version.SHA256, r.Version.SHA256)
	require.Equal(t, string(flow("one")), readFile(t, filepath.Join(dir, "w.json")))
	r2, err := f.RestoreWorkflow(ctx, "w", 1, "rita")
	require.NoError(t, err)
	require.False(t, r2.Created, "restoring what the file holds is the current version")
	require.Equal(t, 3, r2.Version.ID)

	vs, err := f.WorkflowVersions("w")
	require.NoError(t, err)
	var ids []int
	var whos []string
	for _, v := range vs {
		ids, whos = append(ids, v.ID), append(whos, v.Who)
	}
	require.Equal(t, []int{3, 2, 1}, ids, "newest first")
	require.Equal(t, []string{"rita", "bob", "ana"}, whos)
	info, content, err := f.WorkflowVersion("w", 2)
	require.NoError(t, err)
	require.Equal(t, v2.Version, info)
	require.Equal(t, string(flow("two")), string(content))
	_, _, err = f.WorkflowVersion("w", 9)
	var nf *weftclient.VersionNotFoundError
	require.ErrorAs(t, err, &nf)
	require.Contains(t, err.Error(), "its versions are 1 to 3")

	diff, err := f.DiffWorkflowVersions("w", 1, 2)
	require.NoError(t, err)
	require.Equal(t, `--- w.json@1
+++ w.json@2
@@ -1,6 +1,6 @@
 {
   "name": "w",
   "steps": [
-    {"id": "a", "tool": "template", "inputs": {"text": "one"}}
+    {"id": "a", "tool": "template", "inputs": {"text": "two"}}
   ]
 }
`, diff)
	same, err := f.DiffWorkflowVersions("w", 1, 3)
	require.NoError(t, err)
	require.Empty(t, same)

	// the catalog a run by name starts from reads the saved file
	for _, e := range weftclient.Catalog(dir, false) {
		require.Equal(t, "w", e.Name)
		require.Equal(t, string(flow("one")), string(e.Data))
	}
}

// TestSaveWorkflowRefuses: a name that is not a plain file name of the folder, a file that does
// not validate, content over the file limit and a long message are refused, and nothing is
// written (no file, no version, nothing outside the folder).
func TestSaveWorkflowRefuses(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"../x.json", "../x", "a/b", `a\b`, "..", ".hidden", "", "x.test", "x.test.json", "/etc/passwd", "x\x00y", strings.Repeat("a", 200)} {
		t.Run("name "+name, func(t *testing.T) {
			f, dir := newFiles(t)
			_, err := f.SaveWorkflow(ctx, name, flow("x"), 0, "ana", "")
			var bad *weftclient.BadWorkflowNameError
			require.ErrorAs(t, err, &bad)
			entries, _ := os.ReadDir(dir)
			require.Empty(t, entries)
			_, statErr := os.Stat(filepath.Join(filepath.Dir(dir), "x.json"))
			require.True(t, errors.Is(statErr, os.ErrNotExist))
			_, err = f.WorkflowVersions(name)
			require.ErrorAs(t, err, &bad)
		})
	}
	t.Run("does not validate", func(t *testing.T) {
		f, dir := newFiles(t)
		_, err := f.SaveWorkflow(ctx, "w", []byte(`{"name":"w","steps":[{"id":"a","tool":"nope"}]}`), 0, "ana", "")
		var inv *weftclient.InvalidWorkflowError
		require.ErrorAs(t, err, &inv)
		require.Positive(t, inv.Check.Errors)
		require.Contains(t, err.Error(), "w.json:1:")
		require.Contains(t, err.Error(), "nope")
		_, err = f.SaveWorkflow(ctx, "w", []byte(`{"name":`), 0, "ana", "")
		require.ErrorAs(t, err, &inv)
		entries, _ := os.ReadDir(dir)
		require.Empty(t, entries)
	})
	t.Run("too large", func(t *testing.T) {
		f, _ := newFiles(t)
		_, err := f.SaveWorkflow(ctx, "w", make([]byte, dsl.MaxFileSize+1), 0, "ana", "")
		var big *weftclient.ContentTooLargeError
		require.ErrorAs(t, err, &big)
	})
	t.Run("long message", func(t *testing.T) {
		f, _ := newFiles(t)
		_, err := f.SaveWorkflow(ctx, "w", flow("x"), 0, "ana", strings.Repeat("m", weftclient.MaxVersionMessage+1))
		var inv *weftclient.InvalidError
		require.ErrorAs(t, err, &inv)
	})
	t.Run("no folder", func(t *testing.T) {
		_, err := weftclient.NewWorkflowFiles("").SaveWorkflow(ctx, "w", flow("x"), 0, "ana", "")
		require.ErrorIs(t, err, weftclient.ErrNoWorkflowsDir)
	})
}

// TestSaveWorkflowKeepsOutsideEdits: a file changed outside weft (an editor) is recorded as a
// version of its own before the next save, so the history holds it; a file that existed before
// its first save is version 1.
func TestSaveWorkflowKeepsOutsideEdits(t *testing.T) {
	ctx := context.Background()
	f, dir := newFiles(t)
	path := filepath.Join(dir, "w.json")
	require.NoError(t, os.WriteFile(path, flow("by hand"), 0o644))
	_, err := f.SaveWorkflow(ctx, "w", flow("saved"), 5, "ana", "")
	var conflict *weftclient.VersionConflictError
	require.ErrorAs(t, err, &conflict)
	vs, err := f.WorkflowVersions("w")
	require.NoError(t, err)
	require.Empty(t, vs, "a refused save records nothing")
	s, err := f.SaveWorkflow(ctx, "w", flow("saved"), 0, "ana", "")
	require.NoError(t, err)
	require.Equal(t, 2, s.Version.ID)
	require.Equal(t, 1, s.Version.Previous)
	require.Zero(t, s.Version.Base)
	require.NoError(t, os.WriteFile(path, flow("edited"), 0o644))
	s, err = f.SaveWorkflow(ctx, "w", flow("saved again"), 2, "ana", "")
	require.NoError(t, err)
	require.Equal(t, 4, s.Version.ID)
	require.Equal(t, 3, s.Version.Previous)
	require.Equal(t, 2, s.Version.Base)
	vs, err = f.WorkflowVersions("w")
	require.NoError(t, err)
	require.Len(t, vs, 4)
	for _, i := range []int{1, 3} { // versions 3 and 1
		require.Equal(t, weftclient.UnknownAuthor, vs[i].Who)
	}
	_, content, err := f.WorkflowVersion("w", 3)
	require.NoError(t, err)
	require.Equal(t, string(flow("edited")), string(content))

	// a .weft.json file is saved as that file
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.weft.json"), flow("x"), 0o644))
	s, err = f.SaveWorkflow(ctx, "x", flow("x2"), 0, "ana", "")
	require.NoError(t, err)
	require.Equal(t, "x.weft.json", s.File)
	require.Equal(t, string(flow("x2")), readFile(t, filepath.Join(dir, "x.weft.json")))
	_, err = os.Stat(filepath.Join(dir, "x.json"))
	require.True(t, errors.Is(err, os.ErrNotExist))
}

// TestSaveWorkflowConcurrent: saves from the same base at once make one version; the others are
// refused as conflicts (the lock serialises the check and the write).
func TestSaveWorkflowConcurrent(t *testing.T) {
	f, _ := newFiles(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			other := weftclient.NewWorkflowFiles(f.Dir) // as another process would
			_, errs[i] = other.SaveWorkflow(context.Background(), "w", flow(fmt.Sprint("writer ", i)), 0, fmt.Sprint("u", i), "")
		})
	}
	wg.Wait()
	ok, conflicts := 0, 0
	for _, err := range errs {
		var c *weftclient.VersionConflictError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &c):
			conflicts++
		default:
			t.Fatal(err)
		}
	}
	require.Equal(t, 1, ok)
	require.Equal(t, n-1, conflicts)
	vs, err := f.WorkflowVersions("w")
	require.NoError(t, err)
	require.Len(t, vs, 1)
}
