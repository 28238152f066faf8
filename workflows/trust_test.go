package workflows_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/runwire"
)

// scopes records the scope each memory call reached the worker with.
type scopes struct {
	mu  sync.Mutex
	got []string
}

func (s *scopes) record(in map[string]any) (any, *toolspec.Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, _ := in["scope"].(string)
	s.got = append(s.got, sc)
	return map[string]any{"scope": sc, "results": []any{}}, nil, nil
}

const memoryAgent = `{"name":"m","defaults":{"scope":"support:ana"},"steps":[
  {"id":"helper","tool":"agent","inputs":{"prompt":"what do you know about me?","tools":["recall","remember"],"maxIterations":4}}
],"output":"{{ helper.output }}"}`

// TestModelCannotChooseMemoryScope: the agent's memory tools take the session's scope; the
// model does not see the parameter, and naming another scope is answered with a refusal, not
// with another user's memory.
func TestModelCannotChooseMemoryScope(t *testing.T) {
	h := newHarness(t)
	var sc scopes
	h.tools.scripts["recall"] = sc.record
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"c1", "recall", `{"query":"plan","scope":"support:bob"}`}),
		callTools([3]string{"c2", "recall", `{"query":"plan"}`}),
		say("nothing remembered"),
	}}
	var offered []any
	h.tools.scripts["llm"] = func(in map[string]any) (any, *toolspec.Usage, error) {
		offered, _ = in["tools"].([]any)
		return m.handler(in)
	}
	res, err := h.run(t, memoryAgent, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"support:ana"}, sc.got, "bob's scope never reached the store")
	calls := agentOutput(t, res)["toolCalls"].([]any)
	require.Contains(t, calls[0].(map[string]any)["error"], "the memory scope is the session's (support:ana) and cannot be chosen")
	// The parameters the model saw have no scope.
	require.Len(t, offered, 2)
	b, err := json.Marshal(offered)
	require.NoError(t, err)
	require.NotContains(t, string(b), `"scope"`)
}

// TestAgentMemoryNeedsAScope: without a scope from the file or the session, an agent may not
// use memory at all.
func TestAgentMemoryNeedsAScope(t *testing.T) {
	h := newHarness(t)
	withModel(h, &scriptedModel{})
	_, err := h.run(t, `{"name":"m","steps":[{"id":"a","tool":"agent","inputs":{"prompt":"p","tools":["remember"]}}]}`, nil)
	require.ErrorContains(t, err, `remember needs a memory scope, and the model may not choose one: set "defaults": {"scope"`)
}

// TestClientDefinitionMemoryBelongsToItsCaller: a run a client started from its own definition
// reads and writes only the memory that names the caller.
func TestClientDefinitionMemoryBelongsToItsCaller(t *testing.T) {
	for _, tc := range []struct {
		scope, startedBy, origin string
		ok                       bool
	}{
		{"support:ana", "ana", "client", true},
		{"ana", "ana", "client", true},
		{"support:bob", "ana", "client", false},
		{"support:anabel", "ana", "client", false},
		{"ana:support", "ana", "client", false},     // support's scope, though it names ana
		{"support:ana", "support", "client", false}, // a key named like a prefix owns nothing of ana's
		{"ana:", "ana", "client", false},
		{"support:bob", "", "", true}, // the operator's file
	} {
		h := newHarness(t)
		var sc scopes
		h.tools.scripts["recall"] = sc.record
		req := request(t, `{"name":"r","steps":[{"id":"r","tool":"recall","inputs":{"scope":"`+tc.scope+`","query":"q"}}]}`, nil)
		req.Origin, req.StartedBy = tc.origin, tc.startedBy
		h.env.ExecuteWorkflow(runwire.WorkflowType, req)
		err := h.env.GetWorkflowError()
		if tc.ok {
			require.NoError(t, err, tc)
			require.Equal(t, []string{tc.scope}, sc.got)
			continue
		}
		require.Error(t, err, tc)
		var ae *temporal.ApplicationError
		require.ErrorAs(t, err, &ae)
		require.Contains(t, err.Error(), `memory scope "`+tc.scope+`" does not belong to `+tc.startedBy)
		require.Empty(t, sc.got, "nothing reached the store")
	}
}

// TestClientDefinitionStaysOutOfSystemNamespaces: a run started from a client's definition may
// not ingest into or read MongoDB's own databases (admin, local, config) or a system.*
// collection, however the name reaches the step (literal, from defaults, rendered from an
// input, per item of a forEach); nothing reaches the store, and the refusal names the database
// or collection. The operator's file may.
func TestClientDefinitionStaysOutOfSystemNamespaces(t *testing.T) {
	ingest := func(inputs string) string {
		return `{"name":"i","steps":[{"id":"i","tool":"ingest","inputs":{"text":"x","source":"s"` + inputs + `}}]}`
	}
	for _, tc := range []struct {
		name, def, input, origin, want string
	}{
		{"admin.system.users", ingest(`,"db":"admin","collection":"system.users"`), "", "client", `database "admin"`},
		{"admin.system.version", ingest(`,"db":"admin","collection":"system.version"`), "", "client", `database "admin"`},
		{"local.startup_log", `{"name":"q","steps":[{"id":"q","tool":"query","inputs":{"query":"q","db":"local","collection":"startup_log"}}]}`, "", "client", `database "local"`},
		{"config.*", ingest(`,"db":"config","collection":"chunks"`), "", "client", `database "config"`},
		{"weft.system.js", ingest(`,"db":"weft","collection":"system.js"`), "", "client", `collection "system.js"`},
		{"from defaults", `{"name":"i","defaults":{"db":"admin","collection":"docs"},"steps":[{"id":"i","tool":"ingest","inputs":{"text":"x","source":"s"}}]}`, "", "client", `database "admin"`},
		{"rendered from an input", `{"name":"i","inputs":{"c":{"type":"string"}},"steps":[{"id":"i","tool":"ingest","inputs":{"text":"x","source":"s","collection":"{{ inputs.c }}"}}]}`, `{"c":"system.users"}`, "client", `collection "system.users"`},
		{"per item", `{"name":"i","inputs":{"c":{"type":"array"}},"steps":[{"id":"i","tool":"ingest","forEach":"{{ inputs.c }}","inputs":{"text":"x","source":"s","collection":"{{ item }}"}}]}`, `{"c":["docs","system.js"]}`, "client", `collection "system.js"`},
		{"the operator's file", ingest(`,"db":"admin","collection":"system.users"`), "", "", ""},
		{"a client's own names", ingest(`,"db":"weft","collection":"docs"`), "", "client", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			var reached []string
			var mu sync.Mutex
			record := func(in map[string]any) (any, *toolspec.Usage, error) {
				mu.Lock()
				defer mu.Unlock()
				db, _ := in["db"].(string)
				coll, _ := in["collection"].(string)
				reached = append(reached, db+"."+coll)
				return map[string]any{"results": []any{}}, nil, nil
			}
			h.tools.scripts["ingest"], h.tools.scripts["query"] = record, record
			var input map[string]any
			if tc.input != "" {
				require.NoError(t, json.Unmarshal([]byte(tc.input), &input))
			}
			req := request(t, tc.def, input)
			req.Origin, req.StartedBy = tc.origin, "mallory"
			h.env.ExecuteWorkflow(runwire.WorkflowType, req)
			err := h.env.GetWorkflowError()
			if tc.want == "" {
				require.NoError(t, err)
				require.NotEmpty(t, reached)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), "a definition sent by a client may not read or write MongoDB's own databases")
			for _, r := range reached {
				require.NotContains(t, r, "system.", "nothing reached a system collection")
				require.NotRegexp(t, `^(admin|local|config)\.`, r)
			}
		})
	}
}

// TestMessagesNeverSayNil: a value that is not what a step expects is shown as JSON in the
// refusal (null, a number), never as Go's "<nil>" (issue 40).
func TestMessagesNeverSayNil(t *testing.T) {
	for _, tc := range []struct {
		name, def, want string
		input           map[string]any
	}{
		{"a reviewer that is null", `{"name":"r","inputs":{"r":{"type":"array"}},"steps":[{"id":"a","tool":"review","inputs":{"title":"t","data":"x","reviewers":"{{ inputs.r }}"}}]}`,
			`review reviewers: null is not a name`, map[string]any{"r": []any{nil}}},
		{"an agent tool that is null", `{"name":"a","inputs":{"t":{"type":"array"}},"steps":[{"id":"a","tool":"agent","inputs":{"prompt":"p","tools":"{{ inputs.t }}"}}]}`,
			`tools: null is null, not a tool name`, map[string]any{"t": []any{nil}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			withModel(h, &scriptedModel{})
			h.env.ExecuteWorkflow(runwire.WorkflowType, request(t, tc.def, tc.input))
			err := h.env.GetWorkflowError()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, err.Error(), "<nil>")
		})
	}
}
