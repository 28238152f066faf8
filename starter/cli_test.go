package starter_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/starter"
	"github.com/weftworks/weft/workflows/dsl"
)

// weft runs the CLI in-process as a user would type it.
func weft(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = starter.Execute(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const examples = "../testdata/examples/"

func TestValidate(t *testing.T) {
	code, out, _ := weft(t, "", "validate", examples+"vai-smart-ingest.json", "multi-collection-search")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "vai-smart-ingest.json: valid, 3 steps")
	require.Contains(t, out, "multi-collection-search: valid, 4 steps")

	code, out, _ = weft(t, "", "validate", "../testdata/bad/unknown-tool.json")
	require.Equal(t, 2, code)
	require.Contains(t, out, `testdata/bad/unknown-tool.json:12:15: steps[0].tool: unknown tool "serch" (did you mean "search"?)`)

	code, out, _ = weft(t, "", "validate", "--json", "../testdata/bad/many-errors.json", examples+"flow-minimal.json")
	require.Equal(t, 2, code)
	var res []struct {
		File        string
		Valid       bool
		Errors      int
		Diagnostics []dsl.Diagnostic
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res, 2)
	require.False(t, res[0].Valid)
	require.Equal(t, 5, res[0].Errors)
	require.Equal(t, 12, res[0].Diagnostics[0].Line)
	require.True(t, res[1].Valid)

	code, _, errOut := weft(t, "", "validate", "no-such-file.json")
	require.Equal(t, 2, code)
	_ = errOut
}

func TestPlan(t *testing.T) {
	code, out, errOut := weft(t, "", "plan", examples+"vai-multi-collection-search.json", "--input", "query=How does auth work?")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `1. search_api  → query(collection="api_docs", limit=10, query="How does auth work?", rerank=false)`)
	require.Contains(t, out, "(1 and 2 can run in parallel: stage 1)")
	require.Contains(t, out, "embedding calls: 2")

	code, out, _ = weft(t, "", "plan", "--json", "multi-collection-search", "-i", "query=x", "--db", "other")
	require.Equal(t, 0, code)
	var p dsl.Plan
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.Equal(t, [][]string{{"search_primary", "search_secondary"}, {"merged"}, {"ranked"}}, p.Stages)
	require.Equal(t, 2, p.Calls.VectorSearch)

	code, _, errOut = weft(t, "", "plan", "multi-collection-search", "--input", "limit=ten", "--input", "qury=x")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `input "limit": "ten" is not a number`)
	require.Contains(t, errOut, `unknown input "qury" (did you mean "query"?)`)
	require.NotContains(t, errOut, `missing required input`, "a plan shows a placeholder for inputs not given")
	code, _, errOut = weft(t, "", "run", "multi-collection-search", "--input", "qury=x")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `missing required input "query"`, "a run needs them")
}

func TestListSchemaToolsConvert(t *testing.T) {
	code, out, _ := weft(t, "", "list")
	require.Equal(t, 0, code)
	for _, name := range []string{"multi-collection-search", "smart-ingest", "research-and-summarize", "consistency-check", "cost-analysis"} {
		require.Contains(t, out, name)
	}
	code, out, _ = weft(t, "", "schema")
	require.Equal(t, 0, code)
	var schema map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &schema))
	require.Equal(t, "weft workflow", schema["title"])

	code, out, _ = weft(t, "", "tools", "rerank")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"readOnlyHint": true`)

	code, out, _ = weft(t, "", "convert", examples+"flow-parallel.json")
	require.Equal(t, 0, code)
	var def dsl.Definition
	require.NoError(t, json.Unmarshal([]byte(out), &def))
	require.Len(t, def.Steps, 4)
	require.Equal(t, []string{"lint", "test"}, def.Steps[3].DependsOn)

	code, _, errOut := weft(t, "", "convert", "../testdata/bad/flow-bad-refs.json")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `contextRefs names "out_x", which no node outputs (did you mean "out_a"?)`)
}

func TestInitFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "qa.weft.json")
	code, out, errOut := weft(t, "", "init", "--name", "Docs QA", "--step", "query:docs", "--step", "search:notes", "--step", "merge", "--step", "generate", "-o", file)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Created: "+file)
	code, out, _ = weft(t, "", "validate", file)
	require.Equal(t, 0, code, out)
	w, err := dsl.LoadFile(file)
	require.NoError(t, err)
	require.Equal(t, []string{"query", "search", "merge", "generate"}, []string{w.Steps[0].Tool, w.Steps[1].Tool, w.Steps[2].Tool, w.Steps[3].Tool})

	code, _, errOut = weft(t, "", "init", "--name", "Docs QA", "-o", file)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "already exists")

	code, _, errOut = weft(t, "", "init", "--name", "x", "--step", "rerank", "-o", filepath.Join(dir, "x.json"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "needs an earlier step")

	// A file made without naming a collection still runs: the collection becomes an input.
	solo := filepath.Join(dir, "solo.json")
	code, _, errOut = weft(t, "", "init", "--name", "solo", "-o", solo)
	require.Equal(t, 0, code, errOut)
	w, err = dsl.LoadFile(solo)
	require.NoError(t, err)
	require.Empty(t, w.Warnings, "nothing the run would fail on")
	require.Equal(t, "{{ inputs.collection }}", w.Steps[0].Inputs["collection"])
	require.Equal(t, "docs", w.Def.Inputs["collection"].Default)
}

// TestInitDB: the README's `weft init --step query:api_docs` finds what weft dev's demo
// ingested only when the file says which database the collection is in (issue 21: without
// defaults.db the query searched the empty database weft).
func TestInitDB(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "my.weft.json")
	code, out, errOut := weft(t, "", "init", "--name", "my", "--step", "query:api_docs", "--db", "weft_demo", "-o", file)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "default database", "a file that names its database needs no advice")
	w, err := dsl.LoadFile(file)
	require.NoError(t, err)
	require.Equal(t, "weft_demo", w.Def.Defaults["db"])
	code, out, _ = weft(t, "", "validate", file)
	require.Equal(t, 0, code, out)

	// Without --db the file says nothing about the database, and init says where it will look.
	other := filepath.Join(dir, "other.weft.json")
	code, out, errOut = weft(t, "", "init", "--name", "other", "--step", "query:api_docs", "-o", other)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "--db NAME (weft dev's demo: weft_demo)")
	w, err = dsl.LoadFile(other)
	require.NoError(t, err)
	require.Nil(t, w.Def.Defaults["db"])
}

func TestInitInteractive(t *testing.T) {
	dir := t.TempDir()
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	defer func() { _ = os.Chdir(wd) }()
	answers := "My Research Pipeline\nSearch docs and summarize\n1\nknowledge\n9\n6\n7\n\nweft_demo\n"
	code, out, errOut := weft(t, answers, "init")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"9" is not a choice`)
	require.Contains(t, out, "Created: my-research-pipeline.weft.json")
	w, err := dsl.LoadFile(filepath.Join(dir, "my-research-pipeline.weft.json"))
	require.NoError(t, err)
	require.Equal(t, "Search docs and summarize", w.Def.Description)
	require.Len(t, w.Steps, 3)
	require.Equal(t, "review", w.Steps[2].Tool)
	require.Equal(t, "knowledge", w.Steps[0].Inputs["collection"])
	require.Contains(t, out, "? Database of the collections", "a file that searches asks where the collections are")
	require.Equal(t, "weft_demo", w.Def.Defaults["db"])

	code, _, errOut = weft(t, "", "init")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "without a terminal use --name and --step")
}

func TestUnknownCommand(t *testing.T) {
	code, _, errOut := weft(t, "", "frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "unknown command")
}

func TestWeftTest(t *testing.T) {
	code, out, errOut := weft(t, "", "test", "../templates/tests", "../testdata/examples", "../testdata/fixtures/review-before-publish.edited.test.json")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "✔ an edited draft is what gets published")
	require.Contains(t, out, "25 passed, 0 failed")

	code, out, _ = weft(t, "", "test", "../testdata/fixtures/review-before-publish.wrong.test.json")
	require.Equal(t, 1, code)
	for _, want := range []string{
		`review "approval" is waiting and the fixture has no reviews.approval decision`,
		"0 passed, 1 failed",
	} {
		require.Contains(t, out, want)
	}

	// An invalid decision in a fixture fails that case with a message; it neither hangs nor
	// stops the other cases.
	hostile := t.TempDir()
	for name, d := range map[string]string{"yolo": `{"decision":"yolo"}`, "edit-without-data": `{"decision":"edit"}`} {
		require.NoError(t, os.WriteFile(filepath.Join(hostile, "approval-demo."+name+".test.json"), []byte(`{"reviews":{"approval":`+d+`},"expect":{"noErrors":true}}`), 0o644))
	}
	code, out, _ = weft(t, "", "test", hostile)
	require.Equal(t, 1, code)
	require.Contains(t, out, `reviews.approval: decision "yolo" is not approve, edit or reject`)
	require.Contains(t, out, "reviews.approval: an edit decision needs data")
	require.Contains(t, out, "0 passed, 2 failed")

	dir := t.TempDir()
	wrong := filepath.Join(dir, "multi-collection-search.wrong.test.json")
	require.NoError(t, os.WriteFile(wrong, []byte(`{"inputs":{"query":"x"},"mocks":{"query":{"results":[{"source":"a"}]},"rerank":{"results":[]}},
	  "expect":{"steps":{"merged":{"status":"skipped"}},"output":{"resultCount":7}}}`), 0o644))
	code, out, _ = weft(t, "", "test", wrong)
	require.Equal(t, 1, code)
	for _, want := range []string{
		"step merged: status completed, want skipped",
		"output.resultCount: got 1, want 7",
	} {
		require.Contains(t, out, want)
	}
}

func TestInputsFromFiles(t *testing.T) {
	dir := t.TempDir()
	ids := make([]string, 20000)
	for i := range ids {
		ids[i] = fmt.Sprintf("doc-%05d", i)
	}
	b, _ := json.Marshal(ids)
	idsFile := filepath.Join(dir, "ids.json")
	require.NoError(t, os.WriteFile(idsFile, b, 0o644))
	wf := filepath.Join(dir, "wf.json")
	require.NoError(t, os.WriteFile(wf, []byte(`{"name":"ids","inputs":{"ids":{"type":"array","required":true},"label":{"type":"string","required":true}},
	  "steps":[{"id":"n","tool":"template","inputs":{"text":"{{ inputs.label }}: {{ inputs.ids.length }}"}}],"output":"{{ n.output.text }}"}`), 0o644))
	inputs := filepath.Join(dir, "inputs.json")
	require.NoError(t, os.WriteFile(inputs, []byte(`{"label":"from file","ids":["a"]}`), 0o644))

	code, out, errOut := weft(t, "", "plan", wf, "--json", "--input", "ids=@"+idsFile, "--input-file", inputs, "--input", "label=flag wins")
	require.Equal(t, 0, code, errOut)
	var p struct{ Inputs map[string]any }
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.Len(t, p.Inputs["ids"], 20000, "an array too long for a command line, from a file")
	require.Equal(t, "flag wins", p.Inputs["label"])

	// A plan without the required inputs shows placeholders; a run refuses.
	code, out, errOut = weft(t, "", "plan", wf)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `label: "<label>"`)
	code, _, errOut = weft(t, "", "run", wf, "--input", "ids=[]")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `missing required input "label"`)

	// A wrong type is one problem, not also "missing".
	code, _, errOut = weft(t, "", "plan", wf, "--input", "ids=notjson", "--input", "label=x")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `input "ids"`)
	require.NotContains(t, errOut, "missing required")

	// Too big: refused before reading, naming the limit.
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(50<<20))
	require.NoError(t, f.Close())
	code, _, errOut = weft(t, "", "plan", wf, "--input", "ids=@"+big, "--input", "label=x")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "50.0 MB, over the 4 MB")
	code, _, errOut = weft(t, "", "plan", wf, "--input-file", filepath.Join(dir, "nope.json"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--input-file")
}

// TestVaiCorpus runs the vai-style files and fixtures in testdata/vai, one expected line per case,
// checks what validate says of each leniency class (the dialect, the warnings), and that the files
// in testdata/vai/bad are still refused.
func TestVaiCorpus(t *testing.T) {
	code, out, errOut := weft(t, "", "test", "../testdata/vai")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "17 passed, 0 failed")
	for _, line := range []string{
		"✔ reads results.0 as the first result (numeric-segments.basic.test.json)",
		"✔ runs with the fields vai ignores ignored (ignored-fields.basic.test.json)",
		"✔ runs with vai's own fields ignored (vai-fields-only.basic.test.json)",
		"✔ runs with vai's tool fields ignored (vai-tool-fields.basic.test.json) (ran for real, unmocked: chunk)",
		"✔ answers from the best code chunk (code-search.basic.test.json)",
		// vai's own code-review template and fixture, unchanged: code_index source, a template
		"✔ code-review: fresh index required (no existing index) (code-review.fresh-index.test.json)",
		"✔ merges and reshapes as vai does (merge-transform.basic.test.json)",
		// pure local tools run for real unless mocked, and the output says which
		"✔ chunks for real and ingests a novel document (intelligent-ingest.unmocked-chunk.test.json) (ran for real, unmocked: chunk, estimate)",
	} {
		require.Contains(t, out, line+"\n")
	}

	validate := []struct {
		file  string
		lines []string
	}{
		// in vai's dialect, fields a tool does not take are warnings with what to write instead
		{"ignored-fields.json", []string{
			`warning: steps[1].inputs.topK: unknown field "topK": rerank does not take it, so it is ignored (vai's rerank does not read it either and returns every document: remove it, or write limit to keep only the best)`,
			"ignored-fields.json: read in vai's dialect: steps[0].timeout is in milliseconds",
			"valid, 2 steps, 1 warning",
		}},
		// a field of vai's own tool is enough to read the file as vai's for those fields, a loop's
		// nested step included (any other unknown field stays an error: bad/vai-fields-typo.json)
		{"vai-fields-only.json", []string{
			`warning: steps[0].inputs.followRedirects: unknown field "followRedirects": http does not take it, so it is ignored (remove it: weft's http follows up to 5 redirects whatever it says (vai follows none unless it is true))`,
			`warning: steps[1].inputs.step.inputs.followRedirects: unknown field "followRedirects"`,
			`warning: steps[2].inputs.topK: unknown field "topK"`,
			"vai-fields-only.json: read in vai's dialect: steps[0].inputs.followRedirects is a field of vai's http tool",
			"valid, 3 steps, 3 warnings",
		}},
		// each field vai's own tool reads and weft's does not says what vai does with it and what
		// to write instead (vai's src/lib/workflow.js)
		{"vai-tool-fields.json", []string{
			`warning: steps[0].inputs.followRedirects: unknown field "followRedirects": http does not take it, so it is ignored (remove it: weft's http follows up to 5 redirects whatever it says (vai follows none unless it is true))`,
			`warning: steps[1].inputs.source: unknown field "source": chunk does not take it, so it is ignored (weft's chunks are strings and carry no source (vai's are objects with it): give the source where the chunks are stored, as ingest's source)`,
			`warning: steps[3].inputs.allowWrites: unknown field "allowWrites": aggregate does not take it, so it is ignored (remove it: weft's aggregate is read-only and refuses $out and $merge whatever it says)`,
			"vai-tool-fields.json: read in vai's dialect: steps[0].inputs.followRedirects is a field of vai's http tool",
			"valid, 4 steps, 3 warnings",
		}},
		// vai's merge and transform answer as vai's do, with a warning where weft's own dialect
		// would answer otherwise (merge-transform.basic.test.json checks the answers)
		{"merge-transform.json", []string{
			`warning: steps[2].inputs.dedup: vai's merge drops duplicates only when dedup_field is set too: this merge keeps every item (in weft's dialect, dedup alone drops duplicate items)`,
			`warning: steps[4].inputs.mapping: vai's transform uses fields and ignores mapping when both are given: mapping is ignored (in weft's dialect, both apply)`,
			"valid, 6 steps, 2 warnings",
		}},
		// vai's chunk gives objects (content, charCount...) and totalChunks, weft's strings and
		// count: each read of one of vai's fields is a warning that it is null in weft
		{"chunk-fields.json", []string{
			`warning: steps[1].inputs.condition: item.charCount is null in weft: vai's chunk gives objects {index, content, charCount, source, metadata} and totalChunks, weft's gives the chunks as strings and count`,
			`warning: steps[2].inputs.step.inputs.query: chunk.content is null in weft`,
			`warning: output.totalChunks: split.output.totalChunks is null in weft`,
			"valid, 3 steps, 4 warnings",
		}},
		{"numeric-segments.json", []string{"numeric-segments.json: read in vai's dialect: a path has a numeric segment (results.0.score)", "valid, 3 steps"}},
		{"code-review.json", []string{
			`warning: steps[1].inputs.refresh: unknown field "refresh": code_index does not take it, so it is ignored`,
			// vai's code tools answer fields weft's do not: null in weft, said where they are read
			`warning: steps[1].condition: {{ check_index.output.totalChunks }}: check_index's output (code_status) has no field "totalChunks": it resolves to null (its fields: chunks, collection, db, files, languages, roots)`,
			`warning: output.similarCount: {{ find_similar.output.metadata.resultCount }}: find_similar's output (code_find_similar) has no field "metadata": it resolves to null`,
			"code-review.json: read in vai's dialect: $schema names vai",
			"valid, 5 steps, 10 warnings",
		}},
		{"code-search.json", []string{"code-search.json: read in vai's dialect: steps[0].timeout is in milliseconds", "valid, 4 steps"}},
		{"packages/vai-workflow-digest/workflow.json", []string{"valid, "}},
	}
	for _, v := range validate {
		code, out, errOut := weft(t, "", "validate", filepath.Join("../testdata/vai", v.file))
		require.Equal(t, 0, code, v.file+": "+out+errOut)
		for _, l := range v.lines {
			require.Contains(t, out, l, v.file)
		}
	}

	// the package in vai's layout is checked as a directory, installs, and runs by name
	const pkg = "../testdata/vai/packages/vai-workflow-digest"
	code, out, errOut = weft(t, "", "check", pkg)
	require.Equal(t, 0, code, out+errOut)
	require.Equal(t, pkg+"/package.json: warning: package.json declares scripts (postinstall): weft never runs them\n"+
		pkg+": 0 errors, 1 warning, 0 notes\n", out)
	packagesEnv(t)
	code, out, errOut = weft(t, "", "install", pkg)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "installed vai-workflow-digest@1.0.0 (community)")
	code, out, errOut = weft(t, "", "validate", "vai-workflow-digest")
	require.Equal(t, 0, code, out+errOut)

	bad := map[string]string{
		"weft-unknown-field.json":   `steps[0].inputs.followRedirects: unknown field "followRedirects"`,
		"unmarked-typo-field.json":  `steps[0].inputs.maxByte: unknown field "maxByte" (did you mean "maxBytes"?)`,
		"vai-fields-typo.json":      `steps[0].inputs.maxByte: unknown field "maxByte" (did you mean "maxBytes"?)`,
		"weft-numeric-segment.json": "write an index in brackets: search.output.results[0].source",
		"mixed-text-condition.json": "must be a single expression, not text with templates",
		"timeout-words.json":        `"ten seconds" is not a duration`,
		"unknown-tool.json":         `unknown tool "summarize"`,
		"negative-timeout.json":     "must be at least 1",
	}
	entries, err := os.ReadDir("../testdata/vai/bad")
	require.NoError(t, err)
	require.Len(t, entries, len(bad), "every file in testdata/vai/bad has its expected error here")
	for file, msg := range bad {
		code, out, errOut := weft(t, "", "validate", filepath.Join("../testdata/vai/bad", file))
		require.Equal(t, 2, code, file)
		require.Contains(t, out+errOut, msg, file)
	}
}

func TestValidateWarnsWithoutLLMEndpoint(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
	code, out, _ := weft(t, "", "validate", "research-agent")
	require.Equal(t, 0, code)
	require.Contains(t, out, "agent steps need an OpenAI-compatible endpoint")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
	_, out, _ = weft(t, "", "validate", "research-agent")
	require.NotContains(t, out, "endpoint")
}

func TestToolsShowsOutputFields(t *testing.T) {
	code, out, _ := weft(t, "", "tools", "search")
	require.Equal(t, 0, code)
	var spec map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &spec))
	require.NotNil(t, spec["inputSchema"])
	props := spec["outputSchema"].(map[string]any)["properties"].(map[string]any)
	require.Contains(t, props, "results")
}

// TestValidateEndpointWarningSaysWhatItChecked: without an endpoint in this shell, validate warns
// that it checked this shell and that the worker's environment is what counts (issue 21: it said
// "none is configured here", as if the CLI's environment mattered).
func TestValidateEndpointWarningSaysWhatItChecked(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
	code, out, _ := weft(t, "", "validate", "research-and-summarize")
	require.Equal(t, 0, code, "a warning, not an error: %s", out)
	require.Contains(t, out, "this shell sets no OPENAI_BASE_URL or OPENAI_API_KEY")
	require.Contains(t, out, "only the worker's environment counts")
	require.NotContains(t, out, "configured here")

	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
	code, out, _ = weft(t, "", "validate", "research-and-summarize")
	require.Equal(t, 0, code, out)
	require.NotContains(t, out, "OPENAI_BASE_URL")
}

// TestWeftTestRefusesKeysThatNameNothing: a fixture's mock or review keyed by a step the
// workflow does not have, a mock for a step that never calls a tool, a typo'd key in a decision
// or a mock: each fails the case before it runs, naming the key and its position, with a
// did-you-mean (issue 21: they were ignored, so the fixture tested something else than it said).
func TestWeftTestRefusesKeysThatNameNothing(t *testing.T) {
	for _, tc := range []struct {
		name, workflow, fixture string
		want                    []string
	}{
		{"a mock for a step that does not exist", "multi-collection-search",
			`{"inputs": {"query": "x"},
  "mocks": {"query": {"results": []}, "serch_primary": {"results": []}}, "expect": {"noErrors": true}}`,
			[]string{`:2:39: mocks.serch_primary: the workflow has no step "serch_primary" and there is no tool "serch_primary" (did you mean "search_primary"?`}},
		{"a mock keyed by a misspelt tool", "multi-collection-search",
			`{"inputs": {"query": "x"}, "mocks": {"qurey": {"results": []}}, "expect": {"noErrors": true}}`,
			[]string{`mocks.qurey: the workflow has no step "qurey" and there is no tool "qurey" (did you mean "query"?`}},
		{"a mock for a data step", "multi-collection-search",
			`{"inputs": {"query": "x"}, "mocks": {"query": {"results": []}, "merged": {"results": []}}, "expect": {"noErrors": true}}`,
			[]string{`mocks.merged: step "merged" is a merge step, which never calls a tool: its mock would never be used`}},
		{"a misspelt $error", "multi-collection-search",
			`{"inputs": {"query": "x"}, "mocks": {"query": {"$eror": "down"}}, "expect": {"error": "down"}}`,
			[]string{`mocks.query.$eror: unknown key "$eror" in a mock (did you mean "$error"?`}},
		{"a review for a step that does not exist", "approval-demo",
			`{"reviews": {"aproval": {"decision": "approve", "reviewer": "ana"}}, "expect": {"noErrors": true}}`,
			[]string{`reviews.aproval: the workflow has no step "aproval" (did you mean "approval"?`}},
		{"a review for a step that never waits", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"}, "published": {"decision": "approve"}}, "expect": {"noErrors": true}}`,
			[]string{`reviews.published: step "published" is a template step, which never waits for a review (the steps that can: approval)`}},
		{"a misspelt key in a decision", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve", "reviewr": "ana"}}, "expect": {"noErrors": true}}`,
			[]string{`reviews.approval.reviewr: unknown key "reviewr" in a review decision (did you mean "reviewer"?`}},
		{"an expected status that is not one", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"}}, "expect": {"steps": {"approval": {"status": "complete"}}}}`,
			[]string{`expect.steps.approval.status: "complete" is not a step status (did you mean "completed"?`}},
		{"an expected step that does not exist", "approval-demo",
			`{"reviews": {"approval": {"decision": "approve"}}, "expect": {"steps": {"aproval": {"status": "completed"}}}}`,
			[]string{`expect.steps.aproval: the workflow has no step "aproval" (did you mean "approval"?`}},
		{"an item of a forEach review and an agent's call name their step", "research-agent",
			`{"inputs": {"question": "q"}, "mocks": {"llm": {"$calls": [{"text": "done"}]}},
  "reviews": {"agent[0]": {"decision": "approve"}, "agent/call_1": {"decision": "approve"}}, "expect": {"noErrors": true}}`,
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), tc.workflow+".case.test.json")
			require.NoError(t, os.WriteFile(file, []byte(tc.fixture), 0o644))
			code, out, errOut := weft(t, "", "test", file)
			if tc.want == nil {
				require.NotContains(t, out, "no step", out+errOut)
				return
			}
			require.Equal(t, 1, code, out+errOut)
			for _, w := range tc.want {
				require.Contains(t, out, w)
			}
			require.Contains(t, out, "0 passed, 1 failed")
		})
	}
}

// TestOverrideNoStepReadsIsSaid: --collection on a file whose steps set their own collection (as
// weft init writes it, from an input) would do nothing: weft says so and names the input to pass.
func TestOverrideNoStepReadsIsSaid(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "y.weft.json")
	code, _, errOut := weft(t, "", "init", "--name", "y", "--step", "query", "-o", file)
	require.Equal(t, 0, code, errOut)
	code, _, errOut = weft(t, "", "run", file, "--dry-run", "--collection", "api_docs", "--input", "query=limits")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "--collection api_docs: no step reads defaults.collection")
	require.Contains(t, errOut, "--input collection=api_docs")
	code, _, errOut = weft(t, "", "plan", file, "--collection", "api_docs")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "no step reads defaults.collection", "weft plan says it too")

	code, _, errOut = weft(t, "", "run", "multi-collection-search", "--dry-run", "--db", "weft_demo", "--input", "query=limits")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, errOut, "no step reads", "a flag some step reads is not warned about")
}
