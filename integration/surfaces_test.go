package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/httpapi"
	"github.com/weftworks/weft/mcp"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/starter"
	"github.com/weftworks/weft/workflows/dsl"
)

// What every surface must say alike of a run: its status, each step's status and attempts, and its
// usage. A surface's answer is read into this and compared with the client's Execution, the one
// computation (weftclient.Resolve) the surfaces are meant to show.
type told struct {
	Status string            `json:"status"`
	Steps  map[string]string `json:"steps"` // id → "status attempts"
	Tokens int64             `json:"tokens"`
	Cost   float64           `json:"cost"`
}

// surfaceSearch is the scenarios' tool: "fail…" fails for good, "slow…" runs until cancelled,
// anything else answers at once; each call bills 7 embedding tokens.
func surfaceSearch(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	q := fmt.Sprint(in["query"])
	switch {
	case strings.HasPrefix(q, "fail"):
		return nil, nil, temporal.NewNonRetryableApplicationError("the index refused "+q, toolspec.ErrInvalidInput, nil)
	case strings.HasPrefix(q, "slow"):
		<-ctx.Done()
		return nil, nil, ctx.Err()
	}
	return map[string]any{"query": q, "results": []any{map[string]any{"source": "a.md", "content": "about " + q, "score": 0.9}}},
		&toolspec.Usage{EmbeddingTokens: 7}, nil
}

// surfaceLLM is the scenarios' model: the agent scenario's conversation (its prompt names
// surfaces-agent) hands off to billing, calls search (which waits for approval), then answers with
// a word the output guardrail forbids; anything else is scriptedLLM.
func surfaceLLM(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	b, _ := json.Marshal(map[string]any{"prompt": in["prompt"], "messages": in["messages"]})
	if in["tools"] == nil || !strings.Contains(string(b), "surfaces-agent") {
		return scriptedLLM(ctx, in)
	}
	results := strings.Count(string(b), `"role":"tool"`)
	usage := &toolspec.Usage{PromptTokens: 30, CompletionTokens: 6, TotalTokens: 36}
	call := func(id, name, args string) map[string]any {
		return map[string]any{"text": "", "toolCalls": []any{map[string]any{"id": id, "name": name, "arguments": args}}}
	}
	switch results {
	case 0:
		return call("h1", "transfer_to_billing", `{}`), usage, nil
	case 1:
		return call("c1", "search", `{"query":"alpha","collection":"c"}`), usage, nil
	}
	return map[string]any{"text": "the answer is FORBIDDEN", "toolCalls": []any{}}, usage, nil
}

// The scenario corpus: each file ends in a different way.
var surfaceScenarios = []struct {
	name, file string
	// until is what the run is brought to before the surfaces are read (the status it then has).
	until string
	// approve: the run's review gates are approved as they come, until it reaches until.
	approve bool
}{
	{"completed", `{"name":"s-completed","steps":[
		{"id":"find","tool":"search","inputs":{"query":"alpha","collection":"c"}},
		{"id":"answer","tool":"llm","inputs":{"prompt":"Summarise: {{ find.output.results[0].content }}"}}],
		"output":"{{ answer.output.text }}"}`, weftclient.RunCompleted, false},
	{"failed", `{"name":"s-failed","steps":[
		{"id":"find","tool":"search","inputs":{"query":"alpha","collection":"c"}},
		{"id":"bad","tool":"search","inputs":{"query":"fail now","collection":"c"}},
		{"id":"after","tool":"template","inputs":{"text":"{{ bad.output.query }}"}}]}`, weftclient.RunFailed, false},
	{"awaiting review", `{"name":"s-review","steps":[
		{"id":"find","tool":"search","inputs":{"query":"alpha","collection":"c"}},
		{"id":"check","tool":"review","inputs":{"title":"Keep it?","data":{"hits":"{{ find.output.results }}"}}}]}`, weftclient.RunAwaitingReview, false},
	{"cancelled mid-step", `{"name":"s-cancelled","steps":[
		{"id":"find","tool":"search","inputs":{"query":"alpha","collection":"c"}},
		{"id":"slow","tool":"search","inputs":{"query":"slow one","collection":"c"}},
		{"id":"after","tool":"template","inputs":{"text":"{{ slow.output.query }}"}}]}`, weftclient.RunCancelled, false},
	{"forEach with a failed item, continueOnError", `{"name":"s-foreach","inputs":{"qs":{"type":"array","default":["a","fail b","c"]}},"steps":[
		{"id":"each","tool":"search","forEach":"{{ inputs.qs }}","continueOnError":true,
		 "inputs":{"query":"{{ item }}","collection":"c"}},
		{"id":"after","tool":"template","inputs":{"text":"done"}}]}`, weftclient.RunCompleted, false},
	{"a forEach cancelled half way", `{"name":"s-foreach-cancelled","inputs":{"qs":{"type":"array","default":["a","slow b","c","d"]}},"steps":[
		{"id":"each","tool":"search","forEach":"{{ inputs.qs }}","concurrency":1,"inputs":{"query":"{{ item }}","collection":"c"}},
		{"id":"after","tool":"template","inputs":{"text":"{{ each.output.count }} searched"}}]}`, weftclient.RunCancelled, false},
	{"an agent with a handoff, an approved tool call and a guardrail trip", `{"name":"s-agent","steps":[
		{"id":"helper","tool":"agent","inputs":{"prompt":"surfaces-agent: what about alpha?","tools":["search"],"maxIterations":5,
		 "handoffs":[{"name":"billing","description":"Questions about money.","agent":{"system":"You handle billing.","tools":["search"],"approve":["search"]}}],
		 "guardrails":{"output":[{"name":"no-secrets","forbid":"FORBIDDEN"}],"onTrip":"return"}}}],
		"output":"{{ helper.output.stopReason }}"}`, weftclient.RunCompleted, true},
	{"a budget stop", `{"name":"s-budget","budget":{"maxTokens":25},"steps":[
		{"id":"first","tool":"llm","inputs":{"prompt":"one"}},
		{"id":"second","tool":"llm","dependsOn":["first"],"inputs":{"prompt":"two"}}],
		"output":"{{ second.output.text }}"}`, weftclient.RunFailed, false},
}

// TestSurfacesTellOneStory is the differential test of issue 39: a corpus of runs, each brought to
// its end (or its review), and what each surface says of it — weft status --json, weft status's
// header, weft history, weft runs --json, the MCP gateway's weft_execution, the HTTP API's GET
// /v1/runs/{id}, the console's /api/runs/{id}, the Go client's Execution and, for a completed run,
// its Result — must be one story: the same run status, step statuses, attempts and usage.
func TestSurfacesTellOneStory(t *testing.T) {
	queue := "surfaces"
	files := map[string]string{}
	for _, sc := range surfaceScenarios {
		var head struct{ Name string }
		require.NoError(t, json.Unmarshal([]byte(sc.file), &head))
		files[head.Name] = sc.file
	}
	env := runsConsole(t, queue, map[string]activities.Handler{"search": surfaceSearch, "llm": surfaceLLM}, files)

	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateNamedKey(keyFile, "auditor", []string{auth.RoleAdmin})
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, WorkflowsDir: env.dir})
	gw, err := starter.GatewayHTTP(g, keys, []string{"127.0.0.1"}, httpapi.Options{WorkflowsDir: env.dir})
	require.NoError(t, err)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	session := newMCPSession(t, srv.URL+"/mcp", key, "surfaces")

	ctx := context.Background()
	compared := 0
	int64s := map[string]int{} // per surface, the 64-bit integer fields read
	for _, sc := range surfaceScenarios {
		t.Run(sc.name, func(t *testing.T) {
			w, err := dsl.Load(sc.name+".json", []byte(sc.file))
			require.NoError(t, err)
			run, err := env.client.Start(ctx, w, weftclient.StartOptions{Source: "surfaces"})
			require.NoError(t, err)
			id := run.ID
			if sc.until == weftclient.RunCancelled {
				require.Eventually(t, func() bool { // the slow call is in flight
					st, err := env.client.State(ctx, id)
					if err != nil {
						return false
					}
					for _, s := range st.Steps {
						if s.Id == "slow" && s.Status == "running" || s.Id == "each" && s.Status == "running" && s.ItemsDone == 1 {
							return true
						}
					}
					return false
				}, 20*time.Second, 50*time.Millisecond)
				require.NoError(t, env.client.Cancel(ctx, id, "surfaces test"))
			}
			var want *weftclient.Execution
			deadline := time.Now().Add(30 * time.Second)
			for {
				if sc.approve {
					if p, err := env.client.Pending(ctx, id); err == nil && len(p) > 0 {
						_, err := env.client.Review(ctx, id, weftclient.Decision{ID: p[0].Id, Decision: "approve", Reviewer: "surfaces"})
						if err != nil && !weftclient.IsNotPending(err) { // decided already, as the last poll read it
							require.NoError(t, err)
						}
					}
				}
				want, err = env.client.Execution(ctx, id)
				if err == nil && want.Status == sc.until && want.State != nil {
					break
				}
				if time.Now().After(deadline) {
					_, out, _ := weft(t, queue, "status", id)
					t.Fatalf("run %s did not reach %s: %v\n%s", id, sc.until, err, out)
				}
				time.Sleep(50 * time.Millisecond)
			}
			truth := toldOf(want)

			surfaces := map[string]told{}
			// states is each surface's run state as it writes it, for the JSON types of its fields.
			states := map[string][]byte{}
			// weft status --json: the resolved state.
			_, out, errOut := weft(t, queue, "status", id, "--json")
			surfaces["weft status --json"] = toldOfStateJSON(t, []byte(out), errOut)
			states["weft status --json"] = []byte(out)
			// weft status: the header line's status.
			_, out, _ = weft(t, queue, "status", id)
			surfaces["weft status header"] = told{Status: headerStatus(t, out), Steps: truth.Steps, Tokens: truth.Tokens, Cost: truth.Cost}
			// weft history: the STATUS and ATTEMPTS columns.
			_, out, errOut = weft(t, queue, "history", id)
			surfaces["weft history"] = told{Status: truth.Status, Steps: historySteps(t, out, errOut), Tokens: truth.Tokens, Cost: truth.Cost}
			// weft runs --json: the listing's status in weft's vocabulary.
			surfaces["weft runs --json"] = told{Status: listedStatus(t, queue, id, truth.Status), Steps: truth.Steps, Tokens: truth.Tokens, Cost: truth.Cost}
			// MCP weft_execution.
			st, txt, isErr := session.call("weft_execution", map[string]any{"id": id})
			require.False(t, isErr, txt)
			b, _ := json.Marshal(st)
			surfaces["MCP weft_execution"] = toldOfStateJSON(t, b, "")
			states["MCP weft_execution"] = b
			// The HTTP API's GET /v1/runs/{id}: its state, its status and usage beside it.
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/v1/runs/"+id, nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			var v1 struct {
				Status string           `json:"status"`
				Usage  weftclient.Usage `json:"usage"`
				State  json.RawMessage  `json:"state"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&v1))
			_ = resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			surfaces["HTTP GET /v1/runs/{id}"] = toldOfStateJSON(t, v1.State, "")
			states["HTTP GET /v1/runs/{id}"] = v1.State
			surfaces["HTTP GET /v1/runs/{id} status and usage"] = told{Status: v1.Status, Steps: truth.Steps, Tokens: v1.Usage.Tokens, Cost: v1.Usage.CostUSD}
			// MCP's execution resource.
			text, err := session.readResource("weft://executions/" + id)
			require.NoError(t, err)
			surfaces["MCP weft://executions/{id}"] = toldOfStateJSON(t, []byte(text), "")
			states["MCP weft://executions/{id}"] = []byte(text)
			// The console's /api/runs/{id}: its snapshot's status, state and usage.
			var view struct {
				Snapshot struct {
					Status string           `json:"status"`
					State  json.RawMessage  `json:"state"`
					Usage  weftclient.Usage `json:"usage"`
				} `json:"snapshot"`
			}
			require.Equal(t, 200, env.get(t, "/api/runs/"+id, &view))
			c := toldOfStateJSON(t, view.Snapshot.State, "")
			require.Equal(t, c.Status, view.Snapshot.Status, "the console's snapshot status is its state's")
			require.Equal(t, c.Tokens, view.Snapshot.Usage.Tokens, "the console's usage is its state's")
			surfaces["console /api/runs/{id}"] = c
			states["console /api/runs/{id}"] = view.Snapshot.State
			// One encoding: a field of the state has the same JSON type on every surface, and a
			// 64-bit integer (a duration, a token count) is a number on each.
			kinds := jsonKinds(t, states["weft status --json"])
			for name, st := range states {
				got := jsonKinds(t, st)
				for path, kind := range got {
					if int64Field(path) {
						require.Equal(t, "number", kind, "%s writes %s of %s as a %s", name, path, sc.name, kind)
						int64s[name]++
					}
					if want, ok := kinds[path]; ok {
						require.Equal(t, want, kind, "%s writes %s of %s as a %s, weft status --json as a %s", name, path, sc.name, kind, want)
						compared++
					}
				}
			}
			// AG-UI: the state its stream ends with (a closed run's stream replays from the start and
			// ends; one waiting for a review does not end, so it is not read).
			if weftclient.Closed(truth.Status) {
				steps := map[string]string{}
				for id, st := range truth.Steps {
					steps[id] = strings.Fields(st)[0]
				}
				ag := aguiFinalState(t, env.url+"/runs/"+id+"/agui")
				require.Equal(t, told{Status: truth.Status, Steps: steps}, ag, "AG-UI tells another story of %s", sc.name)
				compared++
			}
			// The Go API's result of a completed run.
			if sc.until == weftclient.RunCompleted {
				res, err := env.client.Result(ctx, id)
				require.NoError(t, err)
				steps := map[string]string{}
				for _, s := range res.Steps {
					steps[s.Id] = fmt.Sprintf("%s %d", s.Status, s.Attempts)
				}
				u := weftclient.UsageOf(res.Usage)
				surfaces["Go Result"] = told{Status: weftclient.RunCompleted, Steps: steps, Tokens: u.Tokens, Cost: u.CostUSD}
			}
			for name, got := range surfaces {
				require.Equal(t, truth, got, "%s tells another story of %s than the client's Execution", name, sc.name)
				compared++
			}
			// The corpus's own facts, so a story all surfaces share can still be wrong.
			switch sc.name {
			case "failed":
				require.Equal(t, "not_run 0", truth.Steps["after"], "a step that never started did not run")
			case "cancelled mid-step":
				require.Equal(t, "cancelled 1", truth.Steps["slow"])
				require.Equal(t, "not_run 0", truth.Steps["after"])
			case "a forEach cancelled half way":
				require.Equal(t, "cancelled 1", truth.Steps["each"])
				require.EqualValues(t, 1, want.State.Steps[0].ItemsDone, "a done, slow b cancelled in flight, c and d never started")
				require.EqualValues(t, 4, want.State.Steps[0].ItemsTotal)
				require.Equal(t, "not_run 0", truth.Steps["after"])
			case "awaiting review":
				require.Equal(t, "awaiting_review 1", truth.Steps["check"])
			case "completed":
				require.Positive(t, truth.Tokens)
			case "a budget stop":
				require.EqualValues(t, 25, truth.Tokens, "the first call's 25 tokens: the second was not made")
				second := want.State.Steps[1]
				require.Equal(t, "failed", second.Status)
				require.Contains(t, second.Error, "the workflow's budget.maxTokens is 25 tokens and the run has used 25 tokens", "weft status names the budget")
			case "an agent with a handoff, an approved tool call and a guardrail trip":
				require.Equal(t, "guardrail", want.State.Output.GetStringValue(), "the guardrail tripped and the agent returned")
				helper := want.State.Steps[0]
				var tools []string
				for _, c := range helper.ToolCalls {
					tools = append(tools, c.Tool+" "+c.Status+" "+c.Decision)
				}
				require.Equal(t, []string{"handoff:billing completed ", "search completed approve"}, tools, "handed off, then an approved search")
				require.Equal(t, int64(3*36), want.Usage.ChatTokens, "three model calls: the handoff, the search, the answer")
				require.Positive(t, want.Usage.EmbeddingTokens, "and the approved search")
			}
		})
	}
	// weft eval: a case's tokens and cost are its run's usage, whether the run completed or failed.
	dataset := filepath.Join(t.TempDir(), "cases.jsonl")
	require.NoError(t, os.WriteFile(dataset, []byte(`{"name":"ok"}`+"\n"), 0o644))
	for _, name := range []string{"s-completed", "s-failed"} {
		file := filepath.Join(env.dir, name+".json")
		_, out, errOut := weft(t, queue, "eval", file, "--dataset", dataset, "--json", "--reports-dir", "off")
		var rep struct {
			Cases []struct {
				RunID   string  `json:"runId"`
				Tokens  int64   `json:"tokens"`
				CostUSD float64 `json:"costUsd"`
				Error   string  `json:"error"`
			} `json:"cases"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out+errOut)
		require.Len(t, rep.Cases, 1)
		c := rep.Cases[0]
		require.NotEmpty(t, c.RunID, "%+v", c)
		e, err := env.client.Execution(ctx, c.RunID)
		require.NoError(t, err)
		require.Positive(t, e.Usage.Tokens, "the %s case's run used something", name)
		require.Equal(t, e.Usage.Tokens, c.Tokens, "weft eval's tokens of the %s case are its run's", name)
		require.InDelta(t, e.Usage.CostUSD, c.CostUSD, 1e-9)
		compared++
	}
	for _, name := range []string{"weft status --json", "MCP weft_execution", "HTTP GET /v1/runs/{id}", "MCP weft://executions/{id}", "console /api/runs/{id}"} {
		require.Positive(t, int64s[name], "%s wrote no 64-bit integer field in any scenario: the type check checked nothing", name)
	}
	t.Logf("%d scenarios and 2 eval cases, %d surface answers and field types compared with the client's Execution", len(surfaceScenarios), compared)
}

// aguiFinalState reads a closed run's AG-UI stream to its end and applies its STATE_SNAPSHOT and
// STATE_DELTA events: the run status and step statuses it ends with.
func aguiFinalState(t *testing.T, url string) told {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	state := told{Steps: map[string]string{}}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string `json:"type"`
			Snapshot struct {
				Status string            `json:"status"`
				Steps  map[string]string `json:"steps"`
			} `json:"snapshot"`
			Delta json.RawMessage `json:"delta"` // a JSON Patch (STATE_DELTA), or text
		}
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		var patch []struct {
			Op    string `json:"op"`
			Path  string `json:"path"`
			Value any    `json:"value"`
		}
		if ev.Type == "STATE_DELTA" {
			require.NoError(t, json.Unmarshal(ev.Delta, &patch), line)
		}
		switch ev.Type {
		case "STATE_SNAPSHOT":
			state.Status, state.Steps = ev.Snapshot.Status, map[string]string{}
			for k, v := range ev.Snapshot.Steps {
				state.Steps[k] = v
			}
		case "STATE_DELTA":
			for _, op := range patch {
				switch {
				case op.Path == "/status":
					state.Status = fmt.Sprint(op.Value)
				case strings.HasPrefix(op.Path, "/steps/") && op.Op == "remove":
					delete(state.Steps, strings.TrimPrefix(op.Path, "/steps/"))
				case strings.HasPrefix(op.Path, "/steps/"):
					state.Steps[strings.TrimPrefix(op.Path, "/steps/")] = fmt.Sprint(op.Value)
				}
			}
		}
	}
	return state
}

// toldOf is the truth: what the client's Execution says.
func toldOf(e *weftclient.Execution) told {
	steps := map[string]string{}
	for _, s := range e.State.Steps {
		steps[s.Id] = fmt.Sprintf("%s %d", s.Status, s.Attempts)
	}
	return told{Status: e.Status, Steps: steps, Tokens: e.Usage.Tokens, Cost: e.Usage.CostUSD}
}

// toldOfStateJSON reads an ExecutionState as JSON (weft status --json, weft_execution, the
// console's state).
func toldOfStateJSON(t *testing.T, b []byte, errOut string) told {
	t.Helper()
	var st struct {
		Status string `json:"status"`
		Steps  []struct {
			ID       string `json:"id"`
			Status   string `json:"status"`
			Attempts int    `json:"attempts"`
		} `json:"steps"`
		Usage struct {
			PromptTokens     json.Number `json:"promptTokens"`
			CompletionTokens json.Number `json:"completionTokens"`
			TotalTokens      json.Number `json:"totalTokens"`
			EmbeddingTokens  json.Number `json:"embeddingTokens"`
			CostUsd          float64     `json:"costUsd"`
		} `json:"usage"`
	}
	require.NoError(t, json.Unmarshal(b, &st), "%s%s", b, errOut)
	steps := map[string]string{}
	for _, s := range st.Steps {
		steps[s.ID] = fmt.Sprintf("%s %d", s.Status, s.Attempts)
	}
	n := func(x json.Number) int64 { v, _ := x.Int64(); return v }
	chat := max(n(st.Usage.TotalTokens), n(st.Usage.PromptTokens)+n(st.Usage.CompletionTokens))
	return told{Status: st.Status, Steps: steps, Tokens: chat + n(st.Usage.EmbeddingTokens), Cost: st.Usage.CostUsd}
}

var headerLine = regexp.MustCompile(`(?m)^weft: \S+  \(\S+\)  (.+)$`)

// headerStatus is the status weft status's header says, in the vocabulary's spelling.
func headerStatus(t *testing.T, out string) string {
	t.Helper()
	m := headerLine.FindStringSubmatch(out)
	require.Len(t, m, 2, out)
	return strings.ReplaceAll(strings.TrimSpace(m[1]), " ", "_")
}

// historySteps reads weft history's STATUS and ATTEMPTS columns.
func historySteps(t *testing.T, out, errOut string) map[string]string {
	t.Helper()
	steps := map[string]string{}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.NotEmpty(t, lines, errOut)
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 6 || strings.HasPrefix(l, " ") || f[0] == "Run" {
			continue // a tool call's or usage line, or the run's usage
		}
		steps[f[0]] = f[2] + " " + f[5]
	}
	return steps
}

// listedStatus is the status weft runs --json lists run id with, in weft's vocabulary: the
// listing's search attributes are eventually consistent, so it is read until it says want (or 20 s
// pass, and the last answer is returned).
func listedStatus(t *testing.T, queue, id, want string) string {
	t.Helper()
	status := "(not listed)"
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		_, out, _ := weft(t, queue, "runs", "--json", "--limit", "50")
		var runs []weftclient.RunSummary
		if json.Unmarshal([]byte(out), &runs) == nil {
			for _, r := range runs {
				if r.ID == id {
					status = r.RunStatus()
				}
			}
		}
		if status == want {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return status
}

// jsonKinds maps each path of a JSON document (.steps[0].usage.totalTokens) to the JSON type of
// its value: object, array, string, number, bool or null.
func jsonKinds(t *testing.T, b []byte) map[string]string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v), string(b))
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			out[path] = "object"
			for k, e := range x {
				walk(path+"."+k, e)
			}
		case []any:
			out[path] = "array"
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case string:
			out[path] = "string"
		case float64:
			out[path] = "number"
		case bool:
			out[path] = "bool"
		case nil:
			out[path] = "null"
		}
	}
	walk("", v)
	return out
}

// int64JSONNames are the JSON names of the 64-bit integer fields of weft's messages.
var int64JSONNames = func() map[string]bool {
	out := map[string]bool{}
	msgs := weftv1.File_proto_weft_v1_weft_proto.Messages()
	for i := range msgs.Len() {
		fields := msgs.Get(i).Fields()
		for j := range fields.Len() {
			switch fields.Get(j).Kind() {
			case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
				out[fields.Get(j).JSONName()] = true
			}
		}
	}
	return out
}()

// int64Field says a path of a state's JSON is one of its 64-bit integer fields, not a key inside
// a step's output, a tool call's arguments or result, or a review's data (values of any shape).
func int64Field(path string) bool {
	for _, v := range []string{".output", ".arguments", ".result", ".data", ".schema"} {
		if strings.Contains(path, v+".") || strings.Contains(path, v+"[") {
			return false
		}
	}
	return int64JSONNames[path[strings.LastIndex(path, ".")+1:]]
}
