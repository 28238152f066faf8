package toolspec_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
)

func TestRegistryHasEveryTool(t *testing.T) {
	want := []string{"agent", "aggregate", "chunk", "code_find_similar", "code_index", "code_query", "code_search", "code_status", "collections", "conditional", "dedupe", "embed", "estimate", "explain", "filter", "generate", "http",
		"ingest", "llm", "loop", "merge", "models", "query", "recall", "remember", "rerank", "review", "search", "similarity", "template", "transform", "workflow"}
	require.Equal(t, want, toolspec.Names())
	for _, s := range toolspec.All() {
		t.Run(s.Name, func(t *testing.T) {
			_, err := s.Schema()
			require.NoError(t, err)
			require.NotEmpty(t, s.Description)
			require.NotEmpty(t, s.Domain)
			require.NotNil(t, s.OutputSchema(), "every tool declares its output")
			for _, l := range s.Lazy {
				require.True(t, s.HasInput(l), "lazy field %q is declared in the input schema", l)
			}
		})
	}
}

func TestInputValidation(t *testing.T) {
	cases := []struct {
		tool, inputs string
		ok           bool
	}{
		{"query", `{"query":"q","limit":5}`, true},
		{"query", `{"limit":5}`, false},
		{"query", `{"query":"q","limit":51}`, false},
		{"rerank", `{"query":"q","documents":["a",{"content":"b"}]}`, true},
		{"rerank", `{"query":"q","documents":[]}`, false},
		{"aggregate", `{"pipeline":[{"$match":{"a":1}},{"$limit":3}]}`, true},
		{"aggregate", `{"pipeline":[{"$merge":{"into":"x"}}]}`, false},
		{"http", `{"url":"file:///etc/passwd"}`, false},
		{"review", `{"title":"ok?","timeout":"24h","onTimeout":"approve"}`, true},
		{"loop", `{"items":[1],"as":"doc","step":{"tool":"embed","inputs":{"text":"x"}}}`, true},
	}
	for _, c := range cases {
		t.Run(c.tool+c.inputs, func(t *testing.T) {
			s, ok := toolspec.Lookup(c.tool)
			require.True(t, ok)
			var in any
			require.NoError(t, json.Unmarshal([]byte(c.inputs), &in))
			err := s.ValidateInputs(in)
			if c.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

func TestCalls(t *testing.T) {
	q, _ := toolspec.Lookup("query")
	require.Equal(t, toolspec.Calls{Embed: 1, VectorSearch: 1, Rerank: 1}, q.EstimateCalls(map[string]any{}))
	require.Equal(t, toolspec.Calls{Embed: 1, VectorSearch: 1}, q.EstimateCalls(map[string]any{"rerank": false}))
	m, _ := toolspec.Lookup("merge")
	require.True(t, m.EstimateCalls(nil).IsZero())
}

// TestScopePattern: a struct tag cannot name a constant, so the memory tools' scope pattern is
// written in their tags; it must be ScopePattern, which the client and workflows check too.
func TestScopePattern(t *testing.T) {
	for _, tool := range []*toolspec.Spec{toolspec.Remember.Spec, toolspec.Recall.Spec} {
		var sch struct {
			Properties map[string]struct{ Pattern string } `json:"properties"`
		}
		require.NoError(t, json.Unmarshal([]byte(tool.InputJSON()), &sch))
		require.Equal(t, toolspec.ScopePattern, sch.Properties["scope"].Pattern, tool.Name)
	}
}

// TestSystemNamespace: MongoDB's own databases and system.* collections are refused, naming
// what was named; other names pass.
func TestSystemNamespace(t *testing.T) {
	for _, c := range []struct {
		db, coll, err string
	}{
		{"admin", "system.users", `database "admin"`},
		{"admin", "system.version", `database "admin"`},
		{"local", "startup_log", `database "local"`},
		{"config", "chunks", `database "config"`},
		{"Admin", "docs", `database "Admin"`},
		{"weft", "system.js", `collection "system.js"`},
		{"", "system.profile", `collection "system.profile"`},
		{"weft", "docs", ""},
		{"", "", ""},
		{"administration", "systems", ""},
	} {
		err := toolspec.SystemNamespace("ingest", c.db, c.coll)
		if c.err == "" {
			require.NoError(t, err, c)
			continue
		}
		require.ErrorContains(t, err, c.err, c)
		require.ErrorContains(t, err, "ingest: ")
		require.ErrorContains(t, err, "workflows directory")
	}
}

// TestParseDuration: a duration past Go's longest says the bound, not "not a duration"; a
// negative one says so; words are not durations.
func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in, err string
		want    time.Duration
	}{
		{"30s", "", 30 * time.Second},
		{"1h30m", "", 90 * time.Minute},
		{"0", "", 0},
		{"9999999h", `"9999999h" is longer than the longest duration, 2562047h (about 292 years)`, 0},
		{"99999999999999999999ns", "longer than the longest duration", 0},
		{"-5m", `"-5m" is negative`, 0},
		{"soon", `"soon" is not a duration: write a number with a unit`, 0},
		{"", "is not a duration", 0},
	} {
		got, err := toolspec.ParseDuration(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got)
	}
}

// TestMockSchema: what may stand for a tool's output (weft test's mocks) has the output's fields
// and types and no other field, and may leave fields out (issue 39).
func TestMockSchema(t *testing.T) {
	for _, tc := range []struct {
		tool, mock string
		ok         bool
	}{
		{"ingest", `{}`, true},
		{"ingest", `{"chunksCreated": 2, "source": "a.md"}`, true},
		{"ingest", `{"chunks": 2}`, false},
		{"ingest", `{"chunksCreated": "two"}`, false},
		{"search", `{"results": [{"content": "c", "score": 0.5, "metadata": {"any": "thing"}}]}`, true},
		{"search", `{"results": "none"}`, false},
		{"search", `{"results": [{"contnet": "c"}]}`, false},
		{"llm", `{"text": "t", "json": {"free": ["form"]}, "toolCalls": [{"id": "c1", "name": "search", "arguments": "{}"}]}`, true},
		{"llm", `{"text": 42}`, false},
		{"llm", `"just text"`, false},
	} {
		t.Run(tc.tool+" "+tc.mock, func(t *testing.T) {
			s, ok := toolspec.Lookup(tc.tool)
			require.True(t, ok)
			raw, err := json.Marshal(s.MockSchema())
			require.NoError(t, err)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			require.NoError(t, err)
			c := jsonschema.NewCompiler()
			require.NoError(t, c.AddResource("mock.json", doc))
			sch, err := c.Compile("mock.json")
			require.NoError(t, err)
			var v any
			require.NoError(t, json.Unmarshal([]byte(tc.mock), &v))
			if tc.ok {
				require.NoError(t, sch.Validate(v))
			} else {
				require.Error(t, sch.Validate(v))
			}
		})
	}
}
