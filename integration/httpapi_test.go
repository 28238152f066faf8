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
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/httpapi"
	"github.com/weftworks/weft/internal/webhook"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/starter"
)

// httpReviewFlow waits for a review, then says what was approved (and chunks it: an activity,
// whose resolved inputs the run's history records).
const httpReviewFlow = `{"name":"http-approve","inputs":{"topic":{"type":"string","default":"retries"}},"steps":[
  {"id":"approve","tool":"review","inputs":{"title":"Publish?","data":{"topic":"{{ inputs.topic }}"}}},
  {"id":"done","tool":"template","inputs":{"text":"approved {{ approve.output.data.topic }}"}},
  {"id":"split","tool":"chunk","inputs":{"text":"{{ done.output.text }}"}}],
  "output":"{{ done.output.text }}"}`

// httpExposedFlow is a catalog file offered to MCP clients as a tool (mcp.expose).
const httpExposedFlow = `{"name":"http-exposed","description":"Echo a question","mcp":{"expose":true},
  "inputs":{"q":{"type":"string","required":true}},
  "steps":[{"id":"echo","tool":"template","inputs":{"text":"{{ inputs.q }}"}}],"output":"{{ echo.output.text }}"}`

// httpMemoryDB is the database of the stack's long-term memory.
const httpMemoryDB = "http_api_memory"

// httpHookSecret signs the requests of the stack's hook "approve" (http-approve).
const httpHookSecret = "hook-secret-for-tests"

// httpStack is the gateway's HTTP handler (/mcp and /v1, starter.GatewayHTTP) on the embedded
// stack (its worker with cfg when given), with keys: ana (runner, reviewer), bob (runner), rita (reader), ada (admin).
type httpStack struct {
	t    testing.TB
	url  string
	dir  string // the workflows folder
	keys map[string]string
	wc   *weftclient.Client
	// http keeps a connection per client at once (http.DefaultClient keeps 2 per host: 50 clients
	// would dial anew on most requests)
	http *http.Client
	srv  *httptest.Server
	// streams counts the requests for a run's events (GET /v1/runs/{id}/events)
	streams atomic.Int64
}

func newHTTPStack(t testing.TB, queue string, cfg ...activities.Config) *httpStack {
	t.Helper()
	c := dial(t)
	if len(cfg) > 0 {
		startWorkerWithConfig(t, queue, cfg[0], nil) // the worker's provider settings (a fake model)
	} else {
		startWorker(t, c, queue, nil)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "http-approve.json"), []byte(httpReviewFlow), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "http-exposed.json"), []byte(httpExposedFlow), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "http-broken.json"), []byte(`{"name":"http-broken","steps":[{"id":"a","tool":"nope"}]}`), 0o644))
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 128
	s := &httpStack{t: t, dir: dir, keys: map[string]string{}, wc: weftclient.New(c, queue), http: &http.Client{Transport: tr}}
	t.Cleanup(tr.CloseIdleConnections)
	for name, roles := range map[string][]string{"ana": {auth.RoleRunner, auth.RoleReviewer}, "bob": {auth.RoleRunner}, "rita": {auth.RoleReader}, "ada": {auth.RoleAdmin}} {
		key, _, err := auth.GenerateNamedKey(keyFile, name, roles)
		require.NoError(t, err)
		s.keys[name] = key
	}
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, WorkflowsDir: dir, NoBuiltins: true,
		Config: activities.Config{MongoDBURI: store.URI, Database: httpMemoryDB}})
	h, err := starter.GatewayHTTP(g, keys, []string{"127.0.0.1"}, httpapi.Options{WorkflowsDir: dir, NoBuiltins: true, Version: "test",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Hooks: map[string]httpapi.Hook{"approve": {Workflow: "http-approve", Secret: httpHookSecret}}})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/runs/") && strings.HasSuffix(r.URL.Path, "/events") {
			s.streams.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url, s.srv = srv.URL, srv
	return s
}

// do sends a request as who ("" : no key) and returns the status and the body.
func (s *httpStack) do(who, method, path string, body any, header ...string) (int, http.Header, []byte) {
	s.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case io.Reader:
		r = b
	default:
		data, err := json.Marshal(b)
		require.NoError(s.t, err)
		r = strings.NewReader(string(data))
	}
	req, err := http.NewRequest(method, s.url+path, r)
	require.NoError(s.t, err)
	if who != "" {
		req.Header.Set("Authorization", "Bearer "+s.keys[who])
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.http.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return resp.StatusCode, resp.Header, out
}

type problemBody struct {
	Type   string `json:"type"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Errors []struct {
		Pointer string `json:"pointer"`
		Detail  string `json:"detail"`
	} `json:"errors"`
}

func (s *httpStack) problem(status int, h http.Header, body []byte) problemBody {
	s.t.Helper()
	require.Equal(s.t, "application/problem+json", h.Get("Content-Type"), string(body))
	var p problemBody
	require.NoError(s.t, json.Unmarshal(body, &p), string(body))
	require.Equal(s.t, status, p.Status)
	return p
}

// sseEvent is one server-sent event.
type sseEvent struct {
	ID, Event string
	Data      map[string]any
}

// follow reads GET /v1/runs/{id}/events as who until stop says so or the stream ends.
func (s *httpStack) follow(ctx context.Context, who, id string, lastID string, stop func(sseEvent) bool) []sseEvent {
	s.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/v1/runs/"+id+"/events", nil)
	require.NoError(s.t, err)
	req.Header.Set("Authorization", "Bearer "+s.keys[who])
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := s.http.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	require.Equal(s.t, http.StatusOK, resp.StatusCode)
	require.Equal(s.t, "text/event-stream", resp.Header.Get("Content-Type"))
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Event != "" {
				out = append(out, cur)
				if stop != nil && stop(cur) {
					return out
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			require.NoError(s.t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data))
		}
	}
	return out
}

// TestHTTPAPIRunAndReview: a program drives a run through /v1 as docs/http.md says: it starts a
// run of the operator's review workflow by name with an id (the same request again is the same
// run, 200 instead of 201), follows its events as server-sent events (each id its sequence
// number; a reconnect with Last-Event-ID goes on after it, with nothing repeated), finds the
// review in GET /v1/reviews with its digest, is refused on a stale digest (409), decides it, and
// reads the run: GET /v1/runs/{id} is weftclient's Execution serialized, its state what MCP's
// weft_execution answers for the same run. The listing is newest first and pages.
func TestHTTPAPIRunAndReview(t *testing.T) {
	s := newHTTPStack(t, "httpapi-run")
	// ids of this test's runs (the server outlives a test: -count=N runs it again)
	id1, id2 := fmt.Sprint("http-run-1-", time.Now().UnixNano()), fmt.Sprint("http-run-2-", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := map[string]any{"workflow": "http-approve", "inputs": map[string]any{"topic": "limits"}, "id": id1}
	status, _, body := s.do("ana", http.MethodPost, "/v1/runs", start)
	require.Equal(t, http.StatusCreated, status, string(body))
	require.JSONEq(t, `{"id":"`+id1+`","workflow":"http-approve","created":true}`, string(body))
	status, _, body = s.do("ana", http.MethodPost, "/v1/runs", start)
	require.Equal(t, http.StatusOK, status, string(body))
	require.JSONEq(t, `{"id":"`+id1+`","workflow":"http-approve","created":false}`, string(body), "the same id twice is one run")

	// follow until the review is requested
	seen := s.follow(ctx, "ana", id1, "", func(e sseEvent) bool { return e.Event == "review_requested" })
	require.Equal(t, "run_started", seen[0].Event)
	for i, e := range seen {
		require.Equal(t, fmt.Sprint(i+1), e.ID, "ids are the sequence numbers, in order")
		require.Equal(t, e.Event, e.Data["event"])
	}
	last := seen[len(seen)-1]

	// the review, as the reviewer may decide it
	status, _, body = s.do("ana", http.MethodGet, "/v1/reviews", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	var reviews struct {
		Reviews []struct {
			In     struct{ ID string }
			Review struct{ ID, Digest, Step string }
		}
	}
	require.NoError(t, json.Unmarshal(body, &reviews))
	require.Len(t, reviews.Reviews, 1, string(body))
	rv := reviews.Reviews[0]
	require.Equal(t, id1, rv.In.ID)
	require.NotEmpty(t, rv.Review.Digest)

	status, h, body := s.do("ana", http.MethodPost, "/v1/runs/"+id1+"/reviews", map[string]any{"review": rv.Review.ID, "decision": "approve", "digest": "stale"})
	require.Equal(t, http.StatusConflict, status, string(body))
	p := s.problem(http.StatusConflict, h, body)
	require.Contains(t, p.Detail, "changed since it was shown")

	// resume the stream where it stopped, then decide: the rest arrives, nothing twice
	rest := make(chan []sseEvent, 1)
	go func() { rest <- s.follow(ctx, "ana", id1, last.ID, nil) }()
	status, _, body = s.do("ana", http.MethodPost, "/v1/runs/"+id1+"/reviews", map[string]any{"review": rv.Review.ID, "decision": "approve", "digest": rv.Review.Digest, "comment": "fine"})
	require.Equal(t, http.StatusOK, status, string(body))
	require.Contains(t, string(body), `"reviewer":"ana"`)
	after := <-rest
	require.NotEmpty(t, after)
	require.Equal(t, fmt.Sprint(len(seen)+1), after[0].ID, "the stream goes on after Last-Event-ID")
	require.Equal(t, "run_completed", after[len(after)-1].Event)

	// the run as every surface shows it
	status, _, body = s.do("ana", http.MethodGet, "/v1/runs/"+id1, nil)
	require.Equal(t, http.StatusOK, status, string(body))
	e, err := s.wc.Execution(ctx, id1)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(body, &got))
	state := got["state"]
	delete(got, "state")
	want, err := json.Marshal(e)
	require.NoError(t, err)
	gotTop, _ := json.Marshal(got)
	require.JSONEq(t, string(want), string(gotTop), "GET /v1/runs/{id} is weftclient.Execution")
	wantState, err := weftclient.ProtoJSON(e.State)
	require.NoError(t, err)
	gotState, _ := json.Marshal(state)
	require.JSONEq(t, string(wantState), string(gotState))
	mcpState, _, isErr := newMCPSession(t, s.url+"/mcp", s.keys["ana"], "http-test").call("weft_execution", map[string]any{"id": id1})
	require.False(t, isErr)
	mcpJSON, _ := json.Marshal(mcpState)
	require.JSONEq(t, string(mcpJSON), string(gotState), "the state is what MCP's weft_execution answers")
	require.Equal(t, "completed", got["status"])
	require.Equal(t, "approved limits", state.(map[string]any)["output"])

	// a step's resolved inputs, as its activity was called; a step computed inside the
	// workflow has none, and says why
	status, _, body = s.do("ana", http.MethodGet, "/v1/runs/"+id1+"/steps/split/inputs", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	var calls struct {
		Total  int
		Inputs []map[string]any
	}
	require.NoError(t, json.Unmarshal(body, &calls), string(body))
	require.Equal(t, 1, calls.Total)
	require.Equal(t, "approved limits", calls.Inputs[0]["text"], string(body))
	status, _, body = s.do("ana", http.MethodGet, "/v1/runs/"+id1+"/steps/done/inputs", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	require.Contains(t, string(body), "computed inside the workflow")

	// the listing: newest first, a page at a time
	status, _, body = s.do("ana", http.MethodPost, "/v1/runs", map[string]any{"workflow": "http-approve", "id": id2})
	require.Equal(t, http.StatusCreated, status, string(body))
	var page struct {
		Runs []struct{ ID string }
		Next string
	}
	require.Eventually(t, func() bool { // visibility lists a new run within moments
		status, _, body = s.do("ana", http.MethodGet, "/v1/runs?limit=1&workflow=http-approve", nil)
		require.Equal(t, http.StatusOK, status, string(body))
		page.Runs, page.Next = nil, ""
		require.NoError(t, json.Unmarshal(body, &page))
		return len(page.Runs) == 1 && page.Runs[0].ID == id2
	}, 30*time.Second, 50*time.Millisecond, "the newest run first: %s", body)
	require.NotEmpty(t, page.Next)
	status, _, body = s.do("ana", http.MethodGet, "/v1/runs?limit=1&workflow=http-approve&cursor="+page.Next, nil)
	require.Equal(t, http.StatusOK, status, string(body))
	require.NoError(t, json.Unmarshal(body, &page))
	require.Len(t, page.Runs, 1)
	require.Equal(t, id1, page.Runs[0].ID)
	status, _, body = s.do("ana", http.MethodPost, "/v1/runs/"+id2+"/cancel", nil)
	require.Equal(t, http.StatusOK, status, string(body))
}

// TestHTTPAPIWorkflows: the operator's workflows as MCP's weft_workflows lists them, one with its
// definition, a client's definition validated as MCP's weft_validate_workflow (and weft validate)
// checks it and planned as weft plan plans it, and the MCP tool a workflow is offered as, as the
// gateway's tools/list gives it.
func TestHTTPAPIWorkflows(t *testing.T) {
	s := newHTTPStack(t, "httpapi-workflows")
	session := newMCPSession(t, s.url+"/mcp", s.keys["ana"], "http-workflows-test")

	status, _, body := s.do("rita", http.MethodGet, "/v1/workflows", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	var list struct {
		Workflows []struct {
			Name, Title string
			Inputs      map[string]map[string]any
			Steps       int
			BuiltIn     bool
		}
		Problems []string
	}
	require.NoError(t, json.Unmarshal(body, &list))
	mcpList, _, isErr := session.call("weft_workflows", map[string]any{})
	require.False(t, isErr)
	var mcpNames []string
	mcpInputs := map[string]any{}
	for _, w := range mcpList["workflows"].([]any) {
		m := w.(map[string]any)
		mcpNames = append(mcpNames, m["name"].(string))
		mcpInputs[m["name"].(string)] = m["inputs"]
	}
	var names []string
	for _, w := range list.Workflows {
		names = append(names, w.Name)
		wantIn, _ := json.Marshal(mcpInputs[w.Name])
		gotIn, _ := json.Marshal(w.Inputs)
		require.JSONEq(t, string(wantIn), string(gotIn), "%s's inputs as weft_workflows gives them", w.Name)
		require.False(t, w.BuiltIn)
	}
	require.Equal(t, []string{"http-approve", "http-exposed"}, names)
	require.Equal(t, mcpNames, names, "the workflows weft_workflows lists")
	require.Equal(t, "Echo a question", func() string {
		var d struct{ Description string }
		_, _, b := s.do("rita", http.MethodGet, "/v1/workflows/http-exposed", nil)
		require.NoError(t, json.Unmarshal(b, &d))
		return d.Description
	}())
	require.Len(t, list.Problems, 1, string(body))
	require.Contains(t, list.Problems[0], "http-broken.json")

	// one, with its definition as written
	status, _, body = s.do("rita", http.MethodGet, "/v1/workflows/http-approve", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	var one struct {
		Name       string
		Title      string
		Valid      bool
		Definition map[string]any
		Steps      int
	}
	require.NoError(t, json.Unmarshal(body, &one))
	wantDef, _ := json.Marshal(json.RawMessage(httpReviewFlow))
	gotDef, _ := json.Marshal(one.Definition)
	require.JSONEq(t, string(wantDef), string(gotDef))
	require.True(t, one.Valid)
	require.Equal(t, 3, one.Steps)
	// a file that does not load: its diagnostics, with line and column
	status, _, body = s.do("rita", http.MethodGet, "/v1/workflows/http-broken", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	require.Contains(t, string(body), `"valid":false`)
	require.Contains(t, string(body), `"file":"http-broken.json"`)

	// validate: the diagnostics weft_validate_workflow gives, as weftclient.Validation
	for _, def := range []string{httpReviewFlow, `{"name":"bad","steps":[{"id":"a","tool":"template","inputs":{"text":"{{ nope.output }}"}}]}`,
		`{"name":"calls","steps":[{"id":"a","tool":"workflow","inputs":{"workflow":"http-approve","inputs":{"nope":1}}}]}`} {
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(def), &obj))
		status, _, body = s.do("rita", http.MethodPost, "/v1/workflows/validate", map[string]any{"definition": obj})
		require.Equal(t, http.StatusOK, status, string(body))
		var v weftclient.Validation
		require.NoError(t, json.Unmarshal(body, &v))
		mcpV, _, isErr := session.call("weft_validate_workflow", map[string]any{"definition": obj})
		require.False(t, isErr)
		require.Equal(t, mcpV["valid"], v.Valid, string(body))
		if !v.Valid {
			var lines []any
			for _, d := range v.Diagnostics {
				lines = append(lines, d.String())
			}
			require.Equal(t, mcpV["diagnostics"], lines, "the problems weft_validate_workflow gives")
			require.Positive(t, v.Errors)
		}
	}
	require.Contains(t, string(func() []byte {
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(`{"name":"calls","steps":[{"id":"a","tool":"workflow","inputs":{"workflow":"http-approve","inputs":{"nope":1}}}]}`), &obj))
		_, _, b := s.do("rita", http.MethodPost, "/v1/workflows/validate", map[string]any{"definition": obj})
		return b
	}()), "nope", "what it gives a workflow it calls is checked, as weft validate checks it")

	// plan: weft plan --json of the definition
	var def map[string]any
	require.NoError(t, json.Unmarshal([]byte(httpReviewFlow), &def))
	status, _, body = s.do("rita", http.MethodPost, "/v1/workflows/plan", map[string]any{"definition": def, "inputs": map[string]any{"topic": "limits"}})
	require.Equal(t, http.StatusOK, status, string(body))
	var plan struct {
		Name   string
		Inputs map[string]any
		Steps  []struct{ ID, Tool string }
		Stages [][]string
	}
	require.NoError(t, json.Unmarshal(body, &plan))
	require.Equal(t, "http-approve", plan.Name)
	require.Equal(t, "limits", plan.Inputs["topic"])
	require.Len(t, plan.Steps, 3)
	require.Equal(t, [][]string{{"approve"}, {"done"}, {"split"}}, plan.Stages)

	// the MCP tools: the one tools/list offers for http-exposed, none for http-approve
	tools, err := session.mc.ListTools(context.Background(), mcplib.ListToolsRequest{})
	require.NoError(t, err)
	var wantTool []byte
	for _, tl := range tools.Tools {
		if tl.Name == "wf_http_exposed" {
			wantTool, _ = json.Marshal(tl)
		}
	}
	require.NotEmpty(t, wantTool, "the gateway offers wf_http_exposed")
	status, _, body = s.do("rita", http.MethodGet, "/v1/workflows/http-exposed/tools", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	var offered struct {
		Workflow string
		Tools    []json.RawMessage
	}
	require.NoError(t, json.Unmarshal(body, &offered))
	require.Len(t, offered.Tools, 1, string(body))
	var gotTool mcplib.Tool // read as the MCP client read tools/list
	require.NoError(t, json.Unmarshal(offered.Tools[0], &gotTool))
	gotJSON, _ := json.Marshal(gotTool)
	require.JSONEq(t, string(wantTool), string(gotJSON), "the tool as tools/list gives it")
	status, _, body = s.do("rita", http.MethodGet, "/v1/workflows/http-approve/tools", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	require.JSONEq(t, `{"workflow":"http-approve","tools":[]}`, string(body), "a file that does not set mcp.expose is no tool")
}

// TestHTTPAPIMemory: a key remembers, lists and forgets facts in a scope of its own, in the
// knowledge store the remember and recall tools (and weft memory) use.
func TestHTTPAPIMemory(t *testing.T) {
	s := newHTTPStack(t, "httpapi-memory")
	scope := fmt.Sprintf("t%d:ana", time.Now().UnixNano()) // the store outlives a test
	tools := activities.NewTools(activities.Config{MongoDBURI: store.URI})
	add := map[string]any{"scope": scope, "text": "Ana prefers short answers."}
	status, _, body := s.do("ana", http.MethodPost, "/v1/memory", add)
	require.Equal(t, http.StatusOK, status, string(body))
	var added weftclient.Remembered
	require.NoError(t, json.Unmarshal(body, &added))
	require.True(t, added.Stored, string(body))
	require.NotEmpty(t, added.ID)
	status, _, body = s.do("ana", http.MethodPost, "/v1/memory", add)
	require.Equal(t, http.StatusOK, status, string(body))
	require.Contains(t, string(body), `"stored":false`, "the same text twice is stored once")

	status, _, body = s.do("ana", http.MethodGet, "/v1/memory?scope="+scope, nil)
	require.Equal(t, http.StatusOK, status, string(body))
	var list struct{ Facts []weftclient.MemoryFact }
	require.NoError(t, json.Unmarshal(body, &list))
	stored, err := tools.Memories(context.Background(), httpMemoryDB, scope)
	require.NoError(t, err)
	require.Len(t, stored, 1)
	require.Equal(t, []weftclient.MemoryFact{{ID: stored[0].ID, Text: stored[0].Text, RememberedAt: stored[0].RememberedAt}}, list.Facts, "what weft memory list reads")
	require.Equal(t, added.ID, stored[0].ID)

	status, _, body = s.do("ana", http.MethodDelete, "/v1/memory/"+added.ID+"?scope="+scope, nil)
	require.Equal(t, http.StatusOK, status, string(body))
	require.Contains(t, string(body), `"forgot":1`)
	stored, err = tools.Memories(context.Background(), httpMemoryDB, scope)
	require.NoError(t, err)
	require.Empty(t, stored)
	status, h, body := s.do("ana", http.MethodDelete, "/v1/memory/"+added.ID+"?scope="+scope, nil)
	require.Equal(t, http.StatusNotFound, status, string(body))
	require.Contains(t, s.problem(http.StatusNotFound, h, body).Detail, "no memory")
}

// TestHTTPAPIHostile: every operation refuses what it must: no key (401), a role that may not
// (403 naming the role), another key's run (403 and none of its data, in reads, listings,
// events, acts and decisions), a huge body (413), bad input (400 naming the field), an unknown
// run (404), a definition that names a command (the trust model's rule for a client's own).
func TestHTTPAPIHostile(t *testing.T) {
	s := newHTTPStack(t, "httpapi-hostile")
	ana := fmt.Sprint("http-ana-", time.Now().UnixNano())
	status, _, body := s.do("ana", http.MethodPost, "/v1/runs", map[string]any{"workflow": "http-approve", "id": ana, "inputs": map[string]any{"topic": "secret-topic"}})
	require.Equal(t, http.StatusCreated, status, string(body))
	require.Eventually(t, func() bool {
		st, err := s.wc.State(context.Background(), ana)
		return err == nil && len(st.PendingReviews) == 1
	}, time.Minute, 20*time.Millisecond)
	digest := func() string {
		st, err := s.wc.State(context.Background(), ana)
		require.NoError(t, err)
		return st.PendingReviews[0].Digest
	}()
	decide := map[string]any{"decision": "approve", "digest": digest}
	anaScope := fmt.Sprintf("t%d:ana", time.Now().UnixNano())
	status, _, body = s.do("ana", http.MethodPost, "/v1/memory", map[string]any{"scope": anaScope, "text": "secret-topic is ana's"})
	require.Equal(t, http.StatusOK, status, string(body))
	var fact weftclient.Remembered
	require.NoError(t, json.Unmarshal(body, &fact))
	huge := `{"workflow":"http-approve","inputs":{"x":"` + strings.Repeat("a", auth.MaxBodyBytes) + `"}}`
	hugeDef := `{"definition":{"name":"` + strings.Repeat("a", auth.MaxBodyBytes) + `"}}`
	for _, c := range []struct {
		name, who, method, path string
		body                    any
		status                  int
		want, pointer           string
	}{
		{"no key", "", http.MethodGet, "/v1/runs", nil, 401, "send Authorization: Bearer", ""},
		{"no key start", "", http.MethodPost, "/v1/runs", map[string]any{"workflow": "http-approve"}, 401, "send Authorization: Bearer", ""},
		{"reader starts", "rita", http.MethodPost, "/v1/runs", map[string]any{"workflow": "http-approve"}, 403, `needs the role "runner"`, ""},
		{"runner decides", "bob", http.MethodPost, "/v1/runs/" + ana + "/reviews", decide, 403, `needs the role "reviewer"`, ""},
		{"runner lists reviews", "bob", http.MethodGet, "/v1/reviews", nil, 403, `needs the role "reviewer"`, ""},
		{"another's run", "bob", http.MethodGet, "/v1/runs/" + ana, nil, 403, "was started by ana", ""},
		{"another's step inputs", "bob", http.MethodGet, "/v1/runs/" + ana + "/steps/approve/inputs", nil, 403, "was started by ana", ""},
		{"another's events", "bob", http.MethodGet, "/v1/runs/" + ana + "/events", nil, 403, "was started by ana", ""},
		{"another's cancel", "bob", http.MethodPost, "/v1/runs/" + ana + "/cancel", nil, 403, "started by ana", ""},
		{"another's retry", "bob", http.MethodPost, "/v1/runs/" + ana + "/retry", nil, 403, "started by ana", ""},
		{"another's fork", "bob", http.MethodPost, "/v1/runs/" + ana + "/fork", map[string]any{"step": "approve"}, 403, "started by ana", ""},
		{"another's id", "bob", http.MethodPost, "/v1/runs", map[string]any{"workflow": "http-approve", "id": ana}, 403, "was started by ana", ""},
		{"huge body", "ana", http.MethodPost, "/v1/runs", huge, 413, "at most 4 MB", ""},
		{"neither name nor definition", "ana", http.MethodPost, "/v1/runs", map[string]any{}, 400, "send workflow", "/workflow"},
		{"unknown field", "ana", http.MethodPost, "/v1/runs", map[string]any{"workflow": "http-approve", "inptus": map[string]any{}}, 400, "unknown field", "/inptus"},
		{"wrong type", "ana", http.MethodPost, "/v1/runs", `{"workflow": 3}`, 400, "a string", "/workflow"},
		{"not json", "ana", http.MethodPost, "/v1/runs", `{"workflow":`, 400, "send a JSON object", ""},
		{"bad id", "ana", http.MethodPost, "/v1/runs", map[string]any{"workflow": "http-approve", "id": "../x"}, 400, "letters, digits", "/id"},
		{"bad input", "ana", http.MethodPost, "/v1/runs", map[string]any{"workflow": "http-approve", "inputs": map[string]any{"nope": 1}}, 400, "nope", "/inputs"},
		{"unknown workflow", "ana", http.MethodPost, "/v1/runs", map[string]any{"workflow": "nope"}, 404, "no workflow", "/workflow"},
		{"client definition with a command", "ana", http.MethodPost, "/v1/runs", map[string]any{"definition": map[string]any{"name": "x",
			"mcpServers": map[string]any{"evil": map[string]any{"command": "sh"}}, "steps": []any{map[string]any{"id": "a", "tool": "template", "inputs": map[string]any{"text": "hi"}}}}}, 400, "declares a command", "/definition"},
		{"bad limit", "ana", http.MethodGet, "/v1/runs?limit=5000", nil, 400, "send 1 to 100", "?limit"},
		{"bad status", "ana", http.MethodGet, "/v1/runs?status=happy", nil, 400, "use one of", "?status"},
		{"bad cursor", "ana", http.MethodGet, "/v1/runs?cursor=zzz", nil, 400, "cursor", "?cursor"},
		{"decision without digest", "ana", http.MethodPost, "/v1/runs/" + ana + "/reviews", map[string]any{"decision": "approve"}, 400, "missing fields", "/digest"},
		{"unknown run", "ana", http.MethodGet, "/v1/runs/no-such-run", nil, 404, "no run", ""},
		{"unknown run's events", "ana", http.MethodGet, "/v1/runs/no-such-run/events", nil, 404, "no run", ""},
		{"unknown operation", "ana", http.MethodGet, "/v1/nothing", nil, 404, "openapi.json", ""},
		{"no key workflows", "", http.MethodGet, "/v1/workflows", nil, 401, "send Authorization: Bearer", ""},
		{"no key validate", "", http.MethodPost, "/v1/workflows/validate", map[string]any{"definition": map[string]any{}}, 401, "send Authorization: Bearer", ""},
		{"unknown workflow read", "rita", http.MethodGet, "/v1/workflows/nope", nil, 404, "no workflow", ""},
		{"unknown workflow's tools", "rita", http.MethodGet, "/v1/workflows/nope/tools", nil, 404, "no workflow", ""},
		{"validate without definition", "rita", http.MethodPost, "/v1/workflows/validate", map[string]any{}, 400, "send definition", "/definition"},
		{"validate bad json", "rita", http.MethodPost, "/v1/workflows/validate", `{"definition":`, 400, "send a JSON object", ""},
		{"validate definition not an object", "rita", http.MethodPost, "/v1/workflows/validate", `{"definition":"x"}`, 400, "an object", "/definition"},
		{"validate unknown field", "rita", http.MethodPost, "/v1/workflows/validate", map[string]any{"definition": map[string]any{}, "inputs": map[string]any{}}, 400, "unknown field", "/inputs"},
		{"validate huge body", "rita", http.MethodPost, "/v1/workflows/validate", hugeDef, 413, "at most 4 MB", ""},
		{"plan huge body", "rita", http.MethodPost, "/v1/workflows/plan", hugeDef, 413, "at most 4 MB", ""},
		{"plan invalid definition", "rita", http.MethodPost, "/v1/workflows/plan", map[string]any{"definition": map[string]any{"name": "x", "steps": []any{map[string]any{"id": "a", "tool": "nope"}}}}, 400, "not valid", "/definition"},
		{"plan bad input", "rita", http.MethodPost, "/v1/workflows/plan", map[string]any{"definition": map[string]any{"name": "x", "steps": []any{map[string]any{"id": "a", "tool": "template", "inputs": map[string]any{"text": "hi"}}}}, "inputs": map[string]any{"nope": 1}}, 400, "nope", "/inputs"},
		{"another's memory", "bob", http.MethodGet, "/v1/memory?scope=" + anaScope, nil, 403, "does not belong to bob", ""},
		{"adding to another's memory", "bob", http.MethodPost, "/v1/memory", map[string]any{"scope": anaScope, "text": "x"}, 403, "does not belong to bob", ""},
		{"forgetting another's memory", "bob", http.MethodDelete, "/v1/memory/" + fact.ID + "?scope=" + anaScope, nil, 403, "does not belong to bob", ""},
		{"reader adds memory", "rita", http.MethodPost, "/v1/memory", map[string]any{"scope": "x:rita", "text": "x"}, 403, `needs the role "runner"`, ""},
		{"reader forgets memory", "rita", http.MethodDelete, "/v1/memory/x?scope=x:rita", nil, 403, `needs the role "runner"`, ""},
		{"memory huge body", "ana", http.MethodPost, "/v1/memory", `{"scope":"x:ana","text":"` + strings.Repeat("a", auth.MaxBodyBytes) + `"}`, 413, "at most 4 MB", ""},
		{"memory bad json", "ana", http.MethodPost, "/v1/memory", `{"scope":`, 400, "send a JSON object", ""},
		{"memory text not a string", "ana", http.MethodPost, "/v1/memory", `{"scope":"x:ana","text":5}`, 400, "a string", "/text"},
		{"memory without text", "ana", http.MethodPost, "/v1/memory", map[string]any{"scope": "x:ana"}, 400, "send the fact", "/text"},
		{"memory without scope", "ana", http.MethodGet, "/v1/memory", nil, 400, "send scope", "?scope"},
		{"memory bad scope", "ana", http.MethodPost, "/v1/memory", map[string]any{"scope": "a b:ana", "text": "x"}, 400, "letters, digits", "/scope"},
		{"reader saves a workflow", "rita", http.MethodPut, "/v1/workflows/http-approve", map[string]any{"content": httpReviewFlow, "base": 0}, 403, `needs the role "admin"`, ""},
		{"runner saves a workflow", "ana", http.MethodPut, "/v1/workflows/http-approve", map[string]any{"content": httpReviewFlow, "base": 0}, 403, `needs the role "admin"`, ""},
		{"runner restores a version", "bob", http.MethodPost, "/v1/workflows/http-approve/versions/1/restore", nil, 403, `needs the role "admin"`, ""},
		{"save outside the folder", "ada", http.MethodPut, "/v1/workflows/..%2Fescaped.json", map[string]any{"content": httpReviewFlow, "base": 0}, 400, "plain file name", "{name}"},
		{"save a hidden file", "ada", http.MethodPut, "/v1/workflows/.versions", map[string]any{"content": httpReviewFlow, "base": 0}, 400, "plain file name", "{name}"},
		{"save huge body", "ada", http.MethodPut, "/v1/workflows/http-approve", `{"base":0,"content":"` + strings.Repeat("a", auth.MaxBodyBytes) + `"}`, 413, "at most 4 MB", ""},
		{"save from a stale base", "ada", http.MethodPut, "/v1/workflows/http-approve", map[string]any{"content": httpReviewFlow, "base": 4}, 409, "no saved version, not version 4", "/base"},
		{"save without base", "ada", http.MethodPut, "/v1/workflows/http-approve", map[string]any{"content": httpReviewFlow}, 400, "send base", "/base"},
		{"save what does not validate", "ada", http.MethodPut, "/v1/workflows/http-approve", map[string]any{"content": `{"name":"x","steps":[{"id":"a","tool":"nope"}]}`, "base": 0}, 400, "does not validate", "/content"},
		{"unknown version", "rita", http.MethodGet, "/v1/workflows/http-approve/versions/3", nil, 404, "has no saved version", "{version}"},
		{"plan inputs not an object", "rita", http.MethodPost, "/v1/workflows/plan", `{"definition":{},"inputs":[1]}`, 400, "an object", "/inputs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, h, body := s.do(c.who, c.method, c.path, c.body)
			require.NotContains(t, string(body), "secret-topic", "never another's data")
			require.Equal(t, c.status, status, string(body))
			p := s.problem(c.status, h, body)
			require.Contains(t, p.Detail, c.want)
			if c.pointer != "" {
				require.NotEmpty(t, p.Errors, string(body))
				require.Equal(t, c.pointer, p.Errors[0].Pointer, string(body))
			}
		})
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(s.dir), "escaped.json"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing written outside the workflows folder")
	data, err := os.ReadFile(filepath.Join(s.dir, "http-approve.json"))
	require.NoError(t, err)
	require.Equal(t, httpReviewFlow, string(data), "no refused save wrote the file")
	// bob's listing does not show ana's run; the review is not among what bob... may not list
	status, _, body = s.do("bob", http.MethodGet, "/v1/runs", nil)
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, string(body), ana)
	// the document needs no key
	status, h, body := s.do("", http.MethodGet, "/v1/openapi.json", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "application/json", h.Get("Content-Type"))
	require.Contains(t, string(body), `"openapi": "3.1.0"`, "the document as generated")
	// a wrong host is refused before anything
	req, _ := http.NewRequest(http.MethodGet, s.url+"/v1/openapi.json", nil)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// TestHTTPAPISavedVersions: an admin key saves a workflow file through /v1 (PUT
// /v1/workflows/{name}, the operation the CLI and the console's builder call), and a run started
// by name then runs the new content; a second save from the version the first made runs its
// content; a restore of version 1 runs version 1's again. The versions say who saved each, newest
// first, the diff says what changed, and GET /v1/workflows/{name} gives the base for the next save.
func TestHTTPAPISavedVersions(t *testing.T) {
	s := newHTTPStack(t, "httpapi-versions")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	flow := func(text string) string {
		return fmt.Sprintf("{\n  \"name\": \"http-saved\",\n  \"steps\": [\n    {\"id\": \"say\", \"tool\": \"template\", \"inputs\": {\"text\": %q}}\n  ],\n  \"output\": \"{{ say.output.text }}\"\n}\n", text)
	}
	run := func(want string) {
		t.Helper()
		id := fmt.Sprint("http-saved-", time.Now().UnixNano())
		status, _, body := s.do("bob", http.MethodPost, "/v1/runs", map[string]any{"workflow": "http-saved", "id": id})
		require.Equal(t, http.StatusCreated, status, string(body))
		res, err := s.wc.Result(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, res.Output.GetStringValue(), "a run by name runs the saved content")
	}
	base := func() int {
		t.Helper()
		status, _, body := s.do("rita", http.MethodGet, "/v1/workflows/http-saved", nil)
		require.Equal(t, http.StatusOK, status, string(body))
		var v struct{ Version int }
		require.NoError(t, json.Unmarshal(body, &v))
		return v.Version
	}
	save := func(text string, base int) (int, map[string]any) {
		t.Helper()
		status, _, body := s.do("ada", http.MethodPut, "/v1/workflows/http-saved", map[string]any{"content": flow(text), "base": base, "message": "say " + text})
		var out map[string]any
		require.NoError(t, json.Unmarshal(body, &out), string(body))
		return status, out
	}

	status, out := save("first", 0)
	require.Equal(t, http.StatusCreated, status, out)
	require.Equal(t, "ada", out["version"].(map[string]any)["who"])
	run("first")
	require.Equal(t, 1, base())
	status, out = save("first", 0)
	require.Equal(t, http.StatusOK, status, "the same save again: %v", out)
	require.Equal(t, false, out["created"])

	status, out = save("second", base())
	require.Equal(t, http.StatusCreated, status, out)
	run("second")
	status, out = save("lost", 1)
	require.Equal(t, http.StatusConflict, status, out)
	require.Contains(t, out["detail"], "its current version is 2")
	run("second")

	status, _, body := s.do("ada", http.MethodPost, "/v1/workflows/http-saved/versions/1/restore", nil)
	require.Equal(t, http.StatusCreated, status, string(body))
	run("first")

	status, _, body = s.do("rita", http.MethodGet, "/v1/workflows/http-saved/versions", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	var list struct {
		Versions []struct {
			ID                   int
			Who, Message, SHA256 string
			Restored             int
		}
	}
	require.NoError(t, json.Unmarshal(body, &list))
	require.Len(t, list.Versions, 3, string(body))
	require.Equal(t, 3, list.Versions[0].ID)
	require.Equal(t, 1, list.Versions[0].Restored)
	require.Equal(t, list.Versions[2].SHA256, list.Versions[0].SHA256)
	require.Equal(t, "say second", list.Versions[1].Message)
	status, _, body = s.do("rita", http.MethodGet, "/v1/workflows/http-saved/diff?from=1&to=2", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	require.Contains(t, string(body), `-    {\"id\": \"say\", \"tool\": \"template\", \"inputs\": {\"text\": \"first\"}}`)
	require.Contains(t, string(body), `+    {\"id\": \"say\", \"tool\": \"template\", \"inputs\": {\"text\": \"second\"}}`)
}

// TestHTTPAPIHook: POST /v1/hooks/{name} starts the workflow the operator bound to the name, with
// the body as its inputs, when the request is signed as weft's webhooks sign (webhook.Sign of
// the timestamp and the body); the same signed request again is refused as a replay (409), as is
// one signed too long ago, one with another secret or an altered body (401), and an unknown hook
// (404). It needs no key: the signature is the credential.
func TestHTTPAPIHook(t *testing.T) {
	s := newHTTPStack(t, "httpapi-hook")
	body := `{"topic":"hooks"}`
	signed := func(secret, body string, at time.Time) []string {
		ts := at.Unix()
		return []string{webhook.TimestampHeader, fmt.Sprint(ts), webhook.SignatureHeader, webhook.Sign(secret, ts, []byte(body)), "Content-Type", "application/json"}
	}
	now := time.Now()
	good := signed(httpHookSecret, body, now)
	status, _, out := s.do("", http.MethodPost, "/v1/hooks/approve", body, good...)
	require.Equal(t, http.StatusCreated, status, string(out))
	var started struct{ ID, Workflow string }
	require.NoError(t, json.Unmarshal(out, &started))
	require.Equal(t, "http-approve", started.Workflow)
	require.Eventually(t, func() bool {
		st, err := s.wc.State(context.Background(), started.ID)
		return err == nil && len(st.PendingReviews) == 1 && st.PendingReviews[0].Data.GetStructValue().AsMap()["topic"] == "hooks"
	}, time.Minute, 20*time.Millisecond, "the body is the run's inputs")

	for _, c := range []struct {
		name, path, body string
		header           []string
		status           int
		want             string
	}{
		{"replayed", "/v1/hooks/approve", body, good, http.StatusConflict, "replay"},
		{"signed long ago", "/v1/hooks/approve", body, signed(httpHookSecret, body, now.Add(-time.Hour)), http.StatusUnauthorized, "tolerance"},
		{"another secret", "/v1/hooks/approve", body, signed("guess", body, now), http.StatusUnauthorized, "does not match"},
		{"altered body", "/v1/hooks/approve", `{"topic":"evil"}`, good, http.StatusUnauthorized, "does not match"},
		{"unsigned", "/v1/hooks/approve", body, nil, http.StatusUnauthorized, "not a Unix time"},
		{"unknown hook", "/v1/hooks/nope", body, signed(httpHookSecret, body, now), http.StatusNotFound, "no hook"},
		{"not an object", "/v1/hooks/approve", `[1]`, signed(httpHookSecret, `[1]`, now), http.StatusBadRequest, "JSON object"},
		{"huge", "/v1/hooks/approve", strings.Repeat(" ", auth.MaxBodyBytes+1), nil, http.StatusRequestEntityTooLarge, "at most 4 MB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, h, out := s.do("", http.MethodPost, c.path, c.body, c.header...)
			require.Equal(t, c.status, status, string(out))
			require.Contains(t, s.problem(c.status, h, out).Detail, c.want)
		})
	}
}
