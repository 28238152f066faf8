package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
)

const versionFlow = "{\n  \"name\": \"w\",\n  \"steps\": [{\"id\": \"a\", \"tool\": \"template\", \"inputs\": {\"text\": \"one\"}}]\n}\n"

// versionsAPI is the API over a workflows folder with the keys ada (admin) and rita (reader).
func versionsAPI(t testing.TB) (srv *httptest.Server, dir string, keys map[string]string) {
	t.Helper()
	dir = t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	keys = map[string]string{}
	for name, role := range map[string]string{"ada": auth.RoleAdmin, "rita": auth.RoleReader, "rob": auth.RoleRunner} {
		key, _, err := auth.GenerateNamedKey(keyFile, name, []string{role})
		require.NoError(t, err)
		keys[name] = key
	}
	loaded, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	api, err := New(Options{Gate: auth.NewGate(loaded), WorkflowsDir: dir, NoBuiltins: true,
		Client: func(context.Context) (*weftclient.Client, error) { return nil, errors.New("no Temporal in this test") }})
	require.NoError(t, err)
	srv = httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv, dir, keys
}

func send(t testing.TB, srv *httptest.Server, key, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case io.Reader:
		r = b
	default:
		data, err := json.Marshal(b)
		require.NoError(t, err)
		r = strings.NewReader(string(data))
	}
	req, err := http.NewRequest(method, srv.URL+path, r)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out), string(data))
	return resp.StatusCode, out
}

// pointers are the fields a problem's errors name.
func pointers(p map[string]any) []string {
	var out []string
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		out = append(out, e.(map[string]any)["pointer"].(string))
	}
	return out
}

// TestVersionRoutes: an admin key saves a file (201; the same save again is 200, created false),
// GET /v1/workflows/{name} then gives its definition and version, the versions list, one version,
// a diff and a restore answer as the client package does; a reader or runner is 403 naming the
// role, a path-traversal name 400 naming {name}, a stale base 409 naming the current version, a
// file that does not validate 400 naming /content, a body over 4 MB 413; nothing is written by a
// refused request.
func TestVersionRoutes(t *testing.T) {
	srv, dir, keys := versionsAPI(t)
	ada := keys["ada"]

	status, out := send(t, srv, ada, http.MethodPut, "/v1/workflows/w", map[string]any{"content": versionFlow, "base": 0, "message": "first"})
	require.Equal(t, http.StatusCreated, status, out)
	require.Equal(t, true, out["created"])
	require.Equal(t, "ada", out["version"].(map[string]any)["who"])
	require.EqualValues(t, 1, out["version"].(map[string]any)["id"])
	data, err := os.ReadFile(filepath.Join(dir, "w.json"))
	require.NoError(t, err)
	require.Equal(t, versionFlow, string(data), "the text as sent, its formatting kept")
	status, out = send(t, srv, ada, http.MethodPut, "/v1/workflows/w", map[string]any{"content": versionFlow, "base": 0, "message": "first"})
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, false, out["created"], "a retry is the same version")

	two := strings.Replace(versionFlow, "one", "two", 1)
	status, out = send(t, srv, ada, http.MethodPut, "/v1/workflows/w", map[string]any{"content": two, "base": 1})
	require.Equal(t, http.StatusCreated, status, out)
	status, out = send(t, srv, keys["rita"], http.MethodGet, "/v1/workflows/w", nil)
	require.Equal(t, http.StatusOK, status, out)
	require.EqualValues(t, 2, out["version"])
	require.Equal(t, "two", out["definition"].(map[string]any)["steps"].([]any)[0].(map[string]any)["inputs"].(map[string]any)["text"])

	// stale base: 409 naming the current version
	status, out = send(t, srv, ada, http.MethodPut, "/v1/workflows/w", map[string]any{"content": strings.Replace(versionFlow, "one", "three", 1), "base": 1})
	require.Equal(t, http.StatusConflict, status, out)
	require.Contains(t, out["type"], "#version-conflict")
	require.Contains(t, out["detail"], "its current version is 2")
	require.Equal(t, []string{"/base"}, pointers(out))

	status, out = send(t, srv, keys["rita"], http.MethodGet, "/v1/workflows/w/versions", nil)
	require.Equal(t, http.StatusOK, status, out)
	require.Len(t, out["versions"], 2)
	require.EqualValues(t, 2, out["versions"].([]any)[0].(map[string]any)["id"], "newest first")
	status, out = send(t, srv, keys["rita"], http.MethodGet, "/v1/workflows/w/versions/1", nil)
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, versionFlow, out["content"])
	status, out = send(t, srv, keys["rita"], http.MethodGet, "/v1/workflows/w/diff", nil)
	require.Equal(t, http.StatusOK, status, out)
	require.EqualValues(t, 1, out["from"])
	require.EqualValues(t, 2, out["to"])
	require.Contains(t, out["diff"], "-  \"steps\": [{\"id\": \"a\", \"tool\": \"template\", \"inputs\": {\"text\": \"one\"}}]\n+  \"steps\": [{\"id\": \"a\", \"tool\": \"template\", \"inputs\": {\"text\": \"two\"}}]\n")
	status, out = send(t, srv, keys["rita"], http.MethodGet, "/v1/workflows/w/versions/9", nil)
	require.Equal(t, http.StatusNotFound, status, out)
	require.Equal(t, []string{"{version}"}, pointers(out))
	status, out = send(t, srv, keys["rita"], http.MethodGet, "/v1/workflows/w/versions/x", nil)
	require.Equal(t, http.StatusBadRequest, status, out)

	status, out = send(t, srv, ada, http.MethodPost, "/v1/workflows/w/versions/1/restore", nil)
	require.Equal(t, http.StatusCreated, status, out)
	require.EqualValues(t, 3, out["version"].(map[string]any)["id"])
	require.EqualValues(t, 1, out["version"].(map[string]any)["restored"])
	data, err = os.ReadFile(filepath.Join(dir, "w.json"))
	require.NoError(t, err)
	require.Equal(t, versionFlow, string(data))

	// hostile
	for _, who := range []string{"rita", "rob"} {
		status, out = send(t, srv, keys[who], http.MethodPut, "/v1/workflows/w", map[string]any{"content": two, "base": 3})
		require.Equal(t, http.StatusForbidden, status, out)
		require.Contains(t, out["detail"], `needs the role "admin"`)
		status, out = send(t, srv, keys[who], http.MethodPost, "/v1/workflows/w/versions/2/restore", nil)
		require.Equal(t, http.StatusForbidden, status, out)
	}
	for _, name := range []string{"..%2Fx.json", "..%2F..%2Fetc%2Fpasswd", ".hidden", "x.test"} {
		status, out = send(t, srv, ada, http.MethodPut, "/v1/workflows/"+name, map[string]any{"content": versionFlow, "base": 0})
		require.Equal(t, http.StatusBadRequest, status, "%s: %v", name, out)
		require.Equal(t, []string{"{name}"}, pointers(out), name)
	}
	_, err = os.Stat(filepath.Join(filepath.Dir(dir), "x.json"))
	require.True(t, errors.Is(err, os.ErrNotExist), "nothing written outside the folder")
	status, out = send(t, srv, ada, http.MethodPut, "/v1/workflows/w", map[string]any{"content": `{"name":"w","steps":[{"id":"a","tool":"nope"}]}`, "base": 3})
	require.Equal(t, http.StatusBadRequest, status, out)
	require.Equal(t, []string{"/content"}, pointers(out))
	require.Contains(t, out["errors"].([]any)[0].(map[string]any)["detail"], "w.json:1:")
	for field, body := range map[string]map[string]any{"/content": {"base": 3}, "/base": {"content": versionFlow}} {
		status, out = send(t, srv, ada, http.MethodPut, "/v1/workflows/w", body)
		require.Equal(t, http.StatusBadRequest, status, out)
		require.Equal(t, []string{field}, pointers(out))
	}
	status, out = send(t, srv, ada, http.MethodPut, "/v1/workflows/w", strings.NewReader(`{"content":"`+strings.Repeat("a", auth.MaxBodyBytes)+`","base":3}`))
	require.Equal(t, http.StatusRequestEntityTooLarge, status, out)
	status, out = send(t, srv, ada, http.MethodPut, "/v1/workflows/w", map[string]any{"content": strings.Repeat(" ", 2<<20), "base": 3})
	require.Equal(t, http.StatusRequestEntityTooLarge, status, out)
	require.Equal(t, []string{"/content"}, pointers(out), "content over the workflow file limit")
	// a version that no longer validates is not restored (it was written outside weft)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "w.json"), []byte(`{"name":"w","steps":[{"id":"a","tool":"nope"}]}`), 0o644))
	status, out = send(t, srv, ada, http.MethodPut, "/v1/workflows/w", map[string]any{"content": versionFlow, "base": 3})
	require.Equal(t, http.StatusCreated, status, "the content written outside weft is recorded (4), then this save over it (5): %v", out)
	require.EqualValues(t, 5, out["version"].(map[string]any)["id"])
	require.Equal(t, true, out["created"])
	status, out = send(t, srv, ada, http.MethodPost, "/v1/workflows/w/versions/4/restore", nil)
	require.Equal(t, http.StatusBadRequest, status, out)
	require.Contains(t, out["detail"], "does not validate")
	require.Equal(t, "{version}", pointers(out)[0])
	data, err = os.ReadFile(filepath.Join(dir, "w.json"))
	require.NoError(t, err)
	require.Equal(t, versionFlow, string(data), "no refused request wrote the file")
	status, out = send(t, srv, keys["rita"], http.MethodGet, "/v1/workflows/w/versions", nil)
	require.Equal(t, http.StatusOK, status, out)
	require.Len(t, out["versions"], 5)
}

// big100 is a 100-step workflow file, one step a line; step 50 writes text.
func big100(text string) string {
	var b strings.Builder
	b.WriteString("{\n  \"name\": \"big\",\n  \"steps\": [\n")
	for i := range 100 {
		s := "step"
		if i == 50 {
			s = text
		}
		sep := ","
		if i == 99 {
			sep = ""
		}
		b.WriteString("    {\"id\": \"s" + strconv.Itoa(i) + "\", \"tool\": \"template\", \"inputs\": {\"text\": \"" + s + "\"}}" + sep + "\n")
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

// BenchmarkOpenSaveReopen100Steps: what the builder does with a 100-step file through /v1, one
// op each: open (GET /v1/workflows/{name}), save a one-field change (PUT, base the version it
// gave), re-open.
func BenchmarkOpenSaveReopen100Steps(b *testing.B) {
	srv, _, keys := versionsAPI(b)
	ada := keys["ada"]
	status, out := send(b, srv, ada, http.MethodPut, "/v1/workflows/big", map[string]any{"content": big100("start"), "base": 0})
	require.Equal(b, http.StatusCreated, status, out)
	var open, save, reopen time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		status, out = send(b, srv, ada, http.MethodGet, "/v1/workflows/big", nil)
		require.Equal(b, http.StatusOK, status, out)
		base := out["version"]
		t1 := time.Now()
		status, out = send(b, srv, ada, http.MethodPut, "/v1/workflows/big", map[string]any{"content": big100(strconv.Itoa(i)), "base": base})
		require.Equal(b, http.StatusCreated, status, out)
		t2 := time.Now()
		status, out = send(b, srv, ada, http.MethodGet, "/v1/workflows/big", nil)
		require.Equal(b, http.StatusOK, status, out)
		open, save, reopen = open+t1.Sub(t0), save+t2.Sub(t1), reopen+time.Since(t2)
		i++
	}
	b.ReportMetric(float64(open.Microseconds())/float64(i)/1000, "open-ms/op")
	b.ReportMetric(float64(save.Microseconds())/float64(i)/1000, "save-ms/op")
	b.ReportMetric(float64(reopen.Microseconds())/float64(i)/1000, "reopen-ms/op")
}
