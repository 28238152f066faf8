package starter_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// positioned is how every problem with a fixture file starts: FILE:LINE:COL:.
var positioned = regexp.MustCompile(`^\S+\.test\.json:\d+:\d+: `)

// TestWeftTestCorruptedFixtures runs corrupted fixtures through `weft test`: a key no fixture
// has (at any depth), a value of the wrong type, bad JSON, and a mock the tool could never return
// (for search, llm, ingest; by tool and by step; each of a $calls list) each fail the case before
// it runs with a message at its line and column, with a did-you-mean where a name was misspelt,
// and never Go's decoder text (issue 39: 15 of 40 such fixtures printed "json: cannot unmarshal
// ... Go struct field", 11 of 45 mocks of the wrong shape passed).
func TestWeftTestCorruptedFixtures(t *testing.T) {
	for _, tc := range []struct {
		name, workflow, fixture, want string
	}{
		// The fixture's own fields.
		{"an unknown top-level key", "approval-demo",
			`{"mock": {}, "reviews": {"approval": {"decision": "approve"}}}`,
			`:1:2: mock: unknown field "mock" (did you mean "mocks"?)`},
		{"an unknown key in expect", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"}},
  "expect": {"noError": true}}`,
			`:2:14: expect.noError: unknown field "noError" (did you mean "noErrors"?)`},
		{"an unknown key in an expected step", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"}}, "expect": {"steps": {"approval": {"stauts": "completed"}}}}`,
			`expect.steps.approval.stauts: unknown field "stauts" (did you mean "status"?)`},
		{"an unknown key with no near name", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"}}, "expect": {"outputs_like": {}}}`,
			`expect.outputs_like: unknown field "outputs_like" (known fields: error, noErrors, output, steps)`},
		{"expect.steps as a list", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"}}, "expect": {"steps": []}}`,
			`expect.steps: must be an object, not an array`},
		{"noErrors as text", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"}}, "expect": {"noErrors": "yes"}}`,
			`expect.noErrors: must be a boolean, not a string`},
		{"an expected error that is not text", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"}}, "expect": {"error": 42}}`,
			`expect.error: must be a string, not a number`},
		{"an expected status that is a number", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"}}, "expect": {"steps": {"approval": {"status": 1}}}}`,
			`expect.steps.approval.status: must be a string, not a number`},
		{"a typo'd status", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"}}, "expect": {"steps": {"approval": {"status": "complete"}}}}`,
			`expect.steps.approval.status: "complete" is not a step status (did you mean "completed"?`},
		{"inputs as a list", "research-and-summarize",
			`{"inputs": ["what is rag?"], "expect": {"noErrors": true}}`,
			`inputs: must be an object, not an array`},
		{"mocks as text", "research-and-summarize",
			`{"inputs": {"question": "q"}, "mocks": "none", "expect": {"noErrors": true}}`,
			`mocks: must be an object, not a string`},
		{"a review decision as text", "approval-demo",
			`{"reviews": {"approval": "approve"}}`,
			`reviews.approval: must be an object, not a string`},
		{"a name that is not text", "approval-demo",
			`{"name": ["x"], "reviews": {"approval": {"decision": "approve"}}}`,
			`name: must be a string, not an array`},
		{"a fixture that is not an object", "approval-demo",
			`[{"reviews": {}}]`,
			`a fixture is a JSON object`},
		{"a trailing comma", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"},}}`,
			`invalid JSON: unexpected character '}' looking for beginning of object key string (remove the trailing comma)`},
		{"a file cut short", "approval-demo",
			`{"reviews": {"approval": {"decision": "appr`,
			`invalid JSON: the file ends before the JSON value is complete`},
		// Mocks the tool could never return.
		{"a search's results as text", "smart-ingest",
			`{"inputs": {"text": "t", "source": "s.md"}, "mocks": {"search": {"results": "none"}, "similarity": {"similarity": 0.1}, "ingest": {"chunksCreated": 1}}}`,
			`mocks.search.results: must be an array, not a string (a mock stands for what search returns: give a value it could)`},
		{"a misspelt field of a search result", "smart-ingest",
			`{"inputs": {"text": "t", "source": "s.md"},
  "mocks": {"search": {"results": [{"source": "a.md", "contnet": "x"}]}, "similarity": {"similarity": 0.1}, "ingest": {"chunksCreated": 1}}}`,
			`:2:55: mocks.search.results[0].contnet: unknown field "contnet" (did you mean "content"?)`},
		{"a search result's score as text", "smart-ingest",
			`{"inputs": {"text": "t", "source": "s.md"}, "mocks": {"search": {"results": [{"source": "a.md", "score": "high"}]}, "similarity": {"similarity": 0.1}, "ingest": {"chunksCreated": 1}}}`,
			`mocks.search.results[0].score: must be a number, not a string`},
		{"a search mocked as text", "smart-ingest",
			`{"inputs": {"text": "t", "source": "s.md"}, "mocks": {"search": "nothing found", "similarity": {"similarity": 0.1}, "ingest": {"chunksCreated": 1}}}`,
			`mocks.search: must be an object, not a string`},
		{"an ingest's count as text, keyed by its step", "smart-ingest",
			`{"inputs": {"text": "t", "source": "s.md"}, "mocks": {"search": {"results": []}, "similarity": {"similarity": 0.1}, "store": {"chunksCreated": "two"}}}`,
			`mocks.store.chunksCreated: must be an integer, not a string`},
		{"an ingest's fields by another name", "smart-ingest",
			`{"inputs": {"text": "t", "source": "s.md"}, "mocks": {"search": {"results": []}, "similarity": {"similarity": 0.1}, "ingest": {"ingested": 1, "chunks": 1}}}`,
			`mocks.ingest.chunks: unknown field "chunks" (known fields: chunksCreated, collection, db, metadata, model, source)`},
		{"a forEach's ingest counting halves", "batch-ingest",
			`{"inputs": {"documents": [{"text": "a", "source": "a.md"}]}, "mocks": {"each": {"chunksCreated": 1.5}}}`,
			`mocks.each.chunksCreated: must be an integer, not a number`},
		{"an llm's text as a number, keyed by its step", "research-and-summarize",
			`{"inputs": {"question": "q"}, "mocks": {"query": {"results": []}, "summary": {"text": 42}}}`,
			`mocks.summary.text: must be a string, not a number`},
		{"a misspelt field in an agent's $calls", "research-agent",
			`{"inputs": {"question": "q"}, "mocks": {"llm": {"$calls": [{"text": "", "toolCalls": []}, {"txt": "done"}]}}}`,
			`mocks.llm.$calls[1].txt: unknown field "txt" (did you mean "text"?)`},
		{"an llm's tool calls as an object", "research-agent",
			`{"inputs": {"question": "q"}, "mocks": {"llm": {"$calls": [{"text": "", "toolCalls": {"name": "search"}}]}}}`,
			`mocks.llm.$calls[0].toolCalls: must be an array, not an object`},
		{"an llm's usage of the wrong shape", "research-and-summarize",
			`{"inputs": {"question": "q"}, "mocks": {"query": {"results": []}, "generate": {"text": "a", "usage": {"tokens": 3}}}}`,
			`mocks.generate.usage.tokens: unknown field "tokens"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), tc.workflow+".corrupt.test.json")
			require.NoError(t, os.WriteFile(file, []byte(tc.fixture), 0o644))
			code, out, errOut := weft(t, "", "test", file)
			require.Equal(t, 1, code, out+errOut)
			require.Contains(t, out, "0 passed, 1 failed")
			require.Contains(t, out, tc.want)
			var problems []string
			for _, line := range strings.Split(out, "\n") {
				if p, ok := strings.CutPrefix(line, "    "); ok {
					problems = append(problems, p)
				}
			}
			require.NotEmpty(t, problems, out)
			for _, p := range problems {
				require.Regexp(t, positioned, p, "every problem has its line and column")
				msg := positioned.ReplaceAllString(p, "")
				require.NotContains(t, msg, "json:", "never Go's decoder text")
				require.NotContains(t, msg, "Go struct")
				require.NotContains(t, msg, "unmarshal")
			}
		})
	}
}

// TestWeftTestMockOutputsThatCouldBe: a mock that is a failure ($error) or that leaves fields out
// is no fixture error; a vai fixture that mocks vai's own
// outputs passes, with what weft's tool would not return said as warnings.
func TestWeftTestMockOutputsThatCouldBe(t *testing.T) {
	dir := t.TempDir()
	for name, fx := range map[string]string{
		"failed":  `{"inputs": {"question": "q"}, "mocks": {"query": {"$error": "down"}, "generate": {"text": "x"}}, "expect": {"error": "down"}}`,
		"partial": `{"inputs": {"question": "q"}, "mocks": {"query": {"results": [{"content": "c"}]}, "generate": {"text": "x"}}, "expect": {"noErrors": true}}`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "research-and-summarize."+name+".test.json"), []byte(fx), 0o644))
	}
	code, out, errOut := weft(t, "", "test", dir)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "2 passed, 0 failed")

	code, out, errOut = weft(t, "", "test", "../testdata/vai/code-review.fresh-index.test.json")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "1 passed, 0 failed")
	require.Contains(t, out, `code-review.fresh-index.test.json:10:7: warning: mocks.code_status.totalChunks: unknown field "totalChunks"`)
}
