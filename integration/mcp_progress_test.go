//lint:file-ignore SA1019 the tests speak logging/setLevel and notifications/message as clients of protocols before 2026-07-28 do (deprecated from that version on; the gateway still answers them)

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/worker"
)

// TestMCPProgressLogsAndSubscriptions: through the gateway, with the official Go SDK's client
// and a session: a wf_ tool call with a progressToken gets one notifications/progress per step as
// each ends, log lines at the level the client chose (the review it waits for among them), and a
// subscription to the run's resource gets notifications/resources/updated up to its end.
func TestMCPProgressLogsAndSubscriptions(t *testing.T) {
	c := dial(t)
	queue := "mcp-progress"
	cfg := activities.Config{MongoDBURI: store.URI, Database: "mcpprogress"}
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateNamedKey(keyFile, "agent", nil)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Config: cfg, Wait: 60 * time.Second})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()

	progress := make(chan *sdk.ProgressNotificationParams, 32)
	logs := make(chan *sdk.LoggingMessageParams, 64)
	updated := make(chan string, 256)
	ctx := context.Background()
	s, err := sdk.NewClient(&sdk.Implementation{Name: "progress-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { progress <- r.Params },
		LoggingMessageHandler:       func(_ context.Context, r *sdk.LoggingMessageRequest) { logs <- r.Params },
		ResourceUpdatedHandler:      func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	}).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{key: key, base: http.DefaultTransport}}},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}))

	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		p := &sdk.CallToolParams{Name: "wf_approval_demo", Arguments: map[string]any{"version": "9.0"}}
		p.SetProgressToken("release")
		res, err := s.CallTool(ctx, p)
		done <- answer{res, err}
	}()

	// the two steps before the review report their progress as they end (the SDK may hand
	// notifications to the handler out of order: compare the set)
	steps := func(from, to int) {
		t.Helper()
		got := map[float64]bool{}
		for len(got) < to-from+1 {
			select {
			case p := <-progress:
				require.Equal(t, "release", p.ProgressToken)
				require.Equal(t, float64(4), p.Total, "approval-demo has 4 steps")
				require.Contains(t, p.Message, "completed")
				require.False(t, got[p.Progress], "progress %v twice", p.Progress)
				got[p.Progress] = true
			case <-time.After(30 * time.Second):
				t.Fatalf("progress notifications %d..%d: got %v", from, to, got)
			}
		}
		for want := from; want <= to; want++ {
			require.True(t, got[float64(want)], "progress %d in %v", want, got)
		}
	}
	steps(1, 2)
	// the review it waits for is logged, with the execution to decide it in
	var id string
	deadline := time.After(30 * time.Second)
	for id == "" {
		select {
		case l := <-logs:
			require.Equal(t, "weft", l.Logger)
			data, _ := l.Data.(map[string]any)
			if l.Level == "notice" && strings.Contains(fmt.Sprint(data["message"]), "waits for a review") {
				id = data["execution"].(string)
			}
		case <-deadline:
			t.Fatal("no log line about the review")
		}
	}
	uri := "weft://executions/" + id
	require.NoError(t, s.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}))

	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "weft_review", Arguments: map[string]any{"id": id, "decision": "approve"}})
	require.NoError(t, err)
	require.False(t, res.IsError, sdkText(res))

	steps(3, 4)
	select {
	case a := <-done:
		require.NoError(t, a.err)
		require.False(t, a.res.IsError, sdkText(a.res))
		require.Contains(t, sdkText(a.res), "Release 9.0")
	case <-time.After(30 * time.Second):
		t.Fatal("the tool call did not return after the run ended")
	}

	// the subscription saw the run change, up to its end: after some notification, the
	// resource reads completed
	deadline = time.After(30 * time.Second)
	for completed := false; !completed; {
		select {
		case u := <-updated:
			require.Equal(t, uri, u)
			read, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			require.NoError(t, err)
			var st map[string]any
			require.NoError(t, json.Unmarshal([]byte(read.Contents[0].Text), &st))
			completed = st["status"] == "completed"
		case <-deadline:
			t.Fatal("no notifications/resources/updated showing the run completed")
		}
	}
	require.NoError(t, s.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}))
}

// TestMCPProgressWithoutSession: a request without Mcp-Session-Id (served statelessly, as every
// request was before sessions) gets the progress of weft_run_workflow with wait on its own
// response stream, every step's, in order, before the result. Repeated, on both protocol eras:
// mcp-go dropped the last notification of a call now and then until the gateway gave it an event
// store (up to 2025-11-25), and on 2026-07-28, which has no sessions nor resumable streams, until
// a call waited for its notifications to be written (mcp/progress.go, wire).
func TestMCPProgressWithoutSession(t *testing.T) {
	c := dial(t)
	queue := "mcp-progress-stateless"
	startWorker(t, c, queue, nil)
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateNamedKey(keyFile, "stateless", nil)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Wait: 60 * time.Second})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()

	const call = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":7%s},"name":"weft_run_workflow","arguments":{"wait":60,"definition":` +
		`{"name":"three","steps":[{"id":"a","tool":"estimate","inputs":{"docs":1000}},{"id":"b","tool":"estimate","inputs":{"docs":1000}},{"id":"c","tool":"estimate","inputs":{"docs":1000}}],"output":"{{ c.output }}"}}}}`
	cases := []struct {
		version string
		calls   int
		meta    string            // what the protocol adds to _meta
		headers map[string]string // and to the headers
	}{
		{"2025-06-18", 10, "", nil},
		// session-less by design: each request says who it is; mcp-go dropped a notification its
		// forwarder held when the call returned, about one call in eight (mcp/progress.go, wire)
		{"2026-07-28", 40, `,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}`,
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "weft_run_workflow"}},
	}
	for _, tc := range cases {
		t.Run(tc.version, func(t *testing.T) {
			body := fmt.Sprintf(call, tc.meta)
			lost := 0
			for i := 0; i < tc.calls; i++ {
				req, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", tc.version)
				for k, v := range tc.headers {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				out, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				_ = resp.Body.Close()
				require.Equal(t, http.StatusOK, resp.StatusCode, string(out))
				require.Empty(t, resp.Header.Get("Mcp-Session-Id"))
				var seen []string
				for _, line := range strings.Split(string(out), "\n") {
					data, ok := strings.CutPrefix(line, "data: ")
					if !ok {
						continue
					}
					var m struct {
						Method string `json:"method"`
						Params struct {
							Progress float64 `json:"progress"`
						} `json:"params"`
						Result json.RawMessage `json:"result"`
					}
					require.NoError(t, json.Unmarshal([]byte(data), &m))
					if m.Method == "notifications/progress" {
						seen = append(seen, fmt.Sprint(m.Params.Progress))
					} else if m.Result != nil {
						seen = append(seen, "result")
					}
				}
				if !slices.Equal([]string{"1", "2", "3", "result"}, seen) {
					lost++
					t.Errorf("call %d: %v: %s", i, seen, out)
				}
			}
			require.Zero(t, lost, "%d of %d calls lost progress", lost, tc.calls)
		})
	}
}

// TestMCPProgressOverStdio: weft mcp over stdio (the real binary, as a desktop client starts it)
// writes a wf_ call's progress, 1..5 of 5 in step order, before the call's result, on both
// protocol eras, call after call. Read as the raw lines on its stdout: mcp-go wrote the result
// from another goroutine than the notifications and often before the last of them, until a call
// waited for its notifications to be written (mcp/progress.go, wire).
func TestMCPProgressOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the weft binary")
	}
	c := dial(t)
	queue := "mcp-progress-stdio"
	startWorker(t, c, queue, nil)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "five-steps.json"), []byte(fiveSteps), 0o644))
	bin := weftBinary(t)

	want := []string{"1/5 step s1 completed", "2/5 step s2 completed", "3/5 step s3 completed", "4/5 step s4 completed", "5/5 step s5 completed", "result"}
	for _, version := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "mcp", "--address", server.Address, "--namespace", server.Namespace, "--task-queue", queue,
				"--workflows-dir", dir, "--wait", "60s")
			var stderr syncBuffer
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			t.Cleanup(func() {
				_ = stdin.Close()
				_ = cmd.Wait()
				if t.Failed() {
					t.Logf("weft mcp stderr:\n%s", stderr.String())
				}
			})
			lines := bufio.NewScanner(stdout)
			lines.Buffer(make([]byte, 1<<20), 1<<20)
			send := func(msg string) {
				_, err := io.WriteString(stdin, msg+"\n")
				require.NoError(t, err)
			}
			meta := `,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}`
			if version != "2026-07-28" {
				meta = ""
				send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
				require.True(t, lines.Scan(), "the initialize result: %v", lines.Err())
				send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			for i := 1; i <= 5; i++ {
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"progressToken":%d%s},"name":"wf_five_steps","arguments":{"topic":"stdio"}}}`, i, i, meta))
				var got []string
				for len(got) < len(want) && lines.Scan() {
					var m struct {
						ID     *float64 `json:"id"`
						Method string   `json:"method"`
						Params struct {
							Token    float64 `json:"progressToken"`
							Progress float64 `json:"progress"`
							Total    float64 `json:"total"`
							Message  string  `json:"message"`
						} `json:"params"`
						Result *struct {
							Structured struct {
								Output string `json:"output"`
							} `json:"structuredContent"`
						} `json:"result"`
					}
					require.NoError(t, json.Unmarshal(lines.Bytes(), &m), lines.Text())
					switch {
					case m.Method == "notifications/progress" && m.Params.Token == float64(i):
						got = append(got, fmt.Sprintf("%v/%v %s", m.Params.Progress, m.Params.Total, m.Params.Message))
					case m.ID != nil && *m.ID == float64(i):
						require.NotNil(t, m.Result, lines.Text())
						require.Equal(t, "five steps about stdio", m.Result.Structured.Output)
						got = append(got, "result")
					}
				}
				require.Equal(t, want, got, "call %d: the progress of every step, then the result", i)
			}
		})
	}
}
