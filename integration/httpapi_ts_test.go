package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// httpClientDir is scripts/http-client with its npm packages installed (make http-client). It
// fails the test, never skips it, when node or the packages are missing.
func httpClientDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "scripts", "http-client"))
	require.NoError(t, err)
	for _, p := range []string{"openapi-fetch", "openapi-typescript", "@redocly/cli", "typescript"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			t.Fatalf("%s is not installed in %s (%v): run `make http-client` (npm ci --prefix scripts/http-client) from the repository root (make test does)", p, dir, err)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH (%v): install Node.js 20 or later (.ci/run does)", err)
	}
	return dir
}

// servedDocument is GET /v1/openapi.json of s, written to a file.
func (s *httpStack) servedDocument() string {
	s.t.Helper()
	status, _, body := s.do("", http.MethodGet, "/v1/openapi.json", nil)
	require.Equal(s.t, http.StatusOK, status, string(body))
	path := filepath.Join(s.t.TempDir(), "openapi.json")
	require.NoError(s.t, os.WriteFile(path, body, 0o644))
	return path
}

// npmRun runs one of dir's installed programs (node_modules/.bin) and returns its output.
func npmRun(t *testing.T, ctx context.Context, dir, program string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", program), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", program, strings.Join(args, " "), out)
	return string(out)
}

// TestOpenAPILint: the document the gateway serves at GET /v1/openapi.json passes a real
// OpenAPI linter (@redocly/cli, pinned in scripts/http-client, its recommended rules:
// redocly.yaml) with no error and no warning.
func TestOpenAPILint(t *testing.T) {
	dir := httpClientDir(t)
	s := newHTTPStack(t, "httpapi-lint")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := npmRun(t, ctx, dir, "redocly", "lint", "--config", filepath.Join(dir, "redocly.yaml"), s.servedDocument())
	require.Contains(t, out, "Your API description is valid", out)
	require.NotRegexp(t, `You have \d+ warning`, out, "no rule warns either")
}

// TestHTTPTypeScriptClient: a TypeScript program with a client generated from the served
// document (openapi-typescript 7 types, openapi-fetch calls; scripts/http-client/e2e.ts, compiled
// by tsc against the types, so a document that no longer fits the program fails here) starts a
// run of the review workflow, follows its events, decides its review with the digest it was
// shown and reads the result: the events arrive in order, numbered without a gap, the decision is
// recorded under the key's name, and the run completed with the approved output.
func TestHTTPTypeScriptClient(t *testing.T) {
	dir := httpClientDir(t)
	s := newHTTPStack(t, "httpapi-ts")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "gen"), 0o755))
	npmRun(t, ctx, dir, "openapi-typescript", s.servedDocument(), "-o", filepath.Join(dir, "gen", "schema.d.ts"))
	npmRun(t, ctx, dir, "tsc", "-p", dir)

	id := fmt.Sprint("ts-run-", time.Now().UnixNano())
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "build", "e2e.js"), s.url, s.keys["ana"], "http-approve", id)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "e2e.js: %s", stderr.String())
	require.Contains(t, stderr.String(), "drove the run to its end")
	var events []map[string]any
	var run map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Event map[string]any `json:"event"`
			Run   map[string]any `json:"run"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
		if l.Event != nil {
			events = append(events, l.Event)
		}
		if l.Run != nil {
			run = l.Run
		}
	}
	require.NotEmpty(t, events)
	require.Equal(t, "run_started", events[0]["event"])
	require.Equal(t, "run_completed", events[len(events)-1]["event"])
	decided := false
	seq := 0.0
	for _, e := range events {
		if n, ok := e["seq"].(float64); ok {
			require.Equal(t, seq+1, n, "numbered in order without a gap")
			seq = n
		}
		if e["event"] == "review_decided" {
			decided = true
			require.Equal(t, "ana", e["reviewer"])
			require.Equal(t, "approve", e["decision"])
		}
	}
	require.True(t, decided, "the review was decided: %v", events)
	require.Equal(t, map[string]any{"id": id, "status": "completed", "output": "approved typescript", "lastEventId": run["lastEventId"]}, run)
}
