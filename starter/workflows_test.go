package starter_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
)

// TestWorkflowsSaveVersionsDiffRestore: weft workflows save records who (WEFT_USER) saved FILE
// into the folder; --base refuses a save over a version it was not made from (exit 2, naming
// the current one); versions lists newest first, diff shows the change, restore is a new version
// with the old content; a name outside the folder and a file that does not validate are refused
// (exit 2), and saving what the file holds writes nothing.
func TestWorkflowsSaveVersionsDiffRestore(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WEFT_WORKFLOWS_DIR", dir)
	t.Setenv("WEFT_USER", "carla")
	src := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(src, name)
		require.NoError(t, os.WriteFile(p, []byte(`{"name":"w","steps":[{"id":"a","tool":"template","inputs":{"text":"`+text+`"}}]}`+"\n"), 0o644))
		return p
	}
	code, out, errOut := weft(t, "", "workflows", "save", "w", write("one.json", "one"), "-m", "first")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Saved w.json as version 1 (by carla).")
	code, out, _ = weft(t, "", "workflows", "save", "w", write("one.json", "one"))
	require.Equal(t, 0, code)
	require.Contains(t, out, "holds version 1 already")
	code, out, errOut = weft(t, "", "workflows", "save", "w", write("two.json", "two"), "--base", "1", "--json")
	require.Equal(t, 0, code, errOut)
	var saved weftclient.SaveResult
	require.NoError(t, json.Unmarshal([]byte(out), &saved))
	require.Equal(t, 2, saved.Version.ID)
	require.Equal(t, "carla", saved.Version.Who)
	code, _, errOut = weft(t, "", "workflows", "save", "w", write("three.json", "three"), "--base", "1")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "its current version is 2")

	code, out, _ = weft(t, "", "workflows", "versions", "w")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?s)VERSION.*\n2 .*carla.*\n1 .*carla.*first`, out)
	code, out, _ = weft(t, "", "workflows", "diff", "w", "1", "2")
	require.Equal(t, 0, code)
	require.Contains(t, out, `-{"name":"w","steps":[{"id":"a","tool":"template","inputs":{"text":"one"}}]}`)
	require.Contains(t, out, `+{"name":"w","steps":[{"id":"a","tool":"template","inputs":{"text":"two"}}]}`)
	code, out, _ = weft(t, "", "workflows", "restore", "w", "1")
	require.Equal(t, 0, code)
	require.Contains(t, out, "as version 3")
	data, err := os.ReadFile(filepath.Join(dir, "w.json"))
	require.NoError(t, err)
	require.Contains(t, string(data), `"one"`)
	code, out, _ = weft(t, "", "workflows", "versions", "w", "--json")
	require.Equal(t, 0, code)
	var vs []weftclient.WorkflowVersionInfo
	require.NoError(t, json.Unmarshal([]byte(out), &vs))
	require.Len(t, vs, 3)
	require.Equal(t, 1, vs[0].Restored)

	code, _, errOut = weft(t, "", "workflows", "save", "../x.json", write("one.json", "one"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "plain file name")
	require.NoError(t, os.WriteFile(filepath.Join(src, "bad.json"), []byte(`{"name":"w","steps":[{"id":"a","tool":"nope"}]}`), 0o644))
	code, _, errOut = weft(t, "", "workflows", "save", "w", filepath.Join(src, "bad.json"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "does not validate")
	code, _, errOut = weft(t, "", "workflows", "diff", "w", "1", "9")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "no version 9")
}
