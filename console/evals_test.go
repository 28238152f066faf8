package console_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/eval/report"
)

// TestEvalPages: the Evals page lists the reports weft eval keeps (report.Save, its one
// writer), newest first with their counts and scores, and a report's page shows each case's
// inputs, expectation, output, the reviews decided, each grader's result and a link to its run;
// workflow data is escaped, and ids that are not a report's are 404.
func TestEvalPages(t *testing.T) {
	dir := t.TempDir()
	older := &report.Report{Workflow: "qa", Dataset: "cases.jsonl", StartedAt: time.Now().Add(-2 * time.Hour), Concurrency: 4,
		Summary: report.Summary{Cases: 1, Passed: 1, PassRate: 1, MeanScore: 1, DurationMs: 1500},
		Cases:   []report.Case{{Name: "q01", Pass: true, Score: 1, RunID: "qa-1", Grades: []report.Grade{}}}}
	newer := &report.Report{Workflow: "reviewed", Dataset: "reviews.jsonl", StartedAt: time.Now().Add(-time.Minute), Concurrency: 2,
		Summary:  report.Summary{Cases: 2, Passed: 1, Failed: 1, PassRate: 0.5, MeanScore: 0.75, Tokens: 42, CostUSD: 0.0123, DurationMs: 800},
		Baseline: &report.Comparison{File: "base.json", Regressions: []string{"undecided"}, Fixed: []string{}, PassRateDelta: -0.5},
		Cases: []report.Case{
			{Name: "edited", Pass: true, Score: 1, RunID: "reviewed-abc", Inputs: map[string]any{"text": "hello"},
				Expect: json.RawMessage(`{"path":"text","equals":"changed"}`), Output: map[string]any{"text": "<script>alert(1)</script>"},
				Reviews: []report.Review{{ID: "approval", Step: "approval", Key: "approval", Decision: "edit", Data: "changed", Reviewer: "eval"}},
				Grades:  []report.Grade{{Grader: "equals", Pass: true, Score: 1}}},
			{Name: "undecided", RunID: "reviewed-def", Inputs: map[string]any{"text": "hi"}, Expect: json.RawMessage(`{}`),
				Error:  `the run waits for review "confirm" (step "confirm") and the case has no decision for it`,
				Grades: []report.Grade{{Grader: "judge", Pass: false, Score: 0.2, Detail: "it hedges"}}},
		}}
	oldID, err := report.Save(dir, older)
	require.NoError(t, err)
	newID, err := report.Save(dir, newer)
	require.NoError(t, err)
	require.Contains(t, newID, "-reviewed")

	srv := newConsole(t, console.Options{EvalsDir: dir})

	tests := []struct {
		name string
		path string
		code int
		has  []string
		not  []string
	}{
		{"the list, newest first", "/evals", 200, []string{
			`<a href="/evals/` + newID + `">`, `<a href="/evals/` + oldID + `">`, "reviewed", "reviews.jsonl", "1/2", "50.0%", "0.75",
			"$0.0123", "1 regressed", `<a href="/evals" class="on">Evals</a>`}, nil},
		{"a report", "/evals/" + newID, 200, []string{
			"Eval of reviewed", "1 of 2 (50.0%)", "base.json: pass rate -50.0 points", "regressions: undecided",
			`<a href="/runs/reviewed-abc">reviewed-abc</a>`, `<a href="/runs/reviewed-def">reviewed-def</a>`,
			"&#34;text&#34;: &#34;hello&#34;", "&#34;equals&#34;: &#34;changed&#34;", "&lt;script&gt;alert(1)&lt;/script&gt;",
			"<code>approval</code>: edit as eval", "it hedges", "0.20", "the case has no decision for it",
			`<span class="status s-completed">pass</span>`, `<span class="status s-failed">fail</span>`,
		}, []string{"<script>alert(1)"}},
		{"the older report", "/evals/" + oldID, 200, []string{"Eval of qa", `<a href="/runs/qa-1">qa-1</a>`}, nil},
		{"no such report", "/evals/20990101T000000.000Z-nope", 404, []string{"no such eval report"}, nil},
		{"a path out of the folder", "/evals/..%2Fsecret", 404, []string{"no such eval report"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, page := getPage(t, srv, tc.path)
			require.Equal(t, tc.code, code, page)
			for _, s := range tc.has {
				require.Contains(t, page, s)
			}
			for _, s := range tc.not {
				require.NotContains(t, page, s)
			}
		})
	}
	_, page := getPage(t, srv, "/evals")
	require.Less(t, strings.Index(page, newID), strings.Index(page, oldID), "newest first")

	empty := newConsole(t, console.Options{EvalsDir: t.TempDir() + "/none"})
	resp, err := http.Get(empty.URL + "/evals")
	require.NoError(t, err)
	require.Contains(t, body(t, resp), "No eval reports yet")
}

// TestEvalCancelledCase: a case whose run weft eval cancelled (report.Case.Cancelled) says so
// on its row in words, with the reason, beside its fail, and the summary counts it; a case that
// ended by itself does not.
func TestEvalCancelledCase(t *testing.T) {
	dir := t.TempDir()
	rep := &report.Report{Workflow: "slow", Dataset: "slow.jsonl", StartedAt: time.Now().Add(-time.Minute), Concurrency: 1,
		Summary: report.Summary{Cases: 3, Passed: 1, Failed: 2, PassRate: 1.0 / 3},
		Cases: []report.Case{
			{Name: "quick", Pass: true, Score: 1, RunID: "slow-1", Grades: []report.Grade{}},
			{Name: "stuck", RunID: "slow-2", Cancelled: "the case ran past --case-timeout 2m0s",
				Error: "the case ran past --case-timeout 2m0s; the run was cancelled", Grades: []report.Grade{}},
			{Name: "wrong", RunID: "slow-3", Grades: []report.Grade{{Grader: "equals", Pass: false}}},
		}}
	id, err := report.Save(dir, rep)
	require.NoError(t, err)
	srv := newConsole(t, console.Options{EvalsDir: dir})
	code, page := getPage(t, srv, "/evals/"+id)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, page, `<span class="status s-failed">2 failed</span>, <span class="status s-cancelled">1 cancelled</span>`, "the summary counts the cancelled cases")

	tests := []struct {
		name string
		has  []string
		not  []string
	}{
		{"stuck", []string{`<span class="status s-failed">fail</span>`, `<span class="status s-cancelled">cancelled</span>`,
			"the case ran past --case-timeout 2m0s", `data-cancelled="the case ran past --case-timeout 2m0s"`}, nil},
		{"quick", []string{`<span class="status s-completed">pass</span>`}, []string{"cancelled"}},
		{"wrong", []string{`<span class="status s-failed">fail</span>`}, []string{"cancelled"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := caseRow(t, page, tc.name)
			for _, s := range tc.has {
				require.Contains(t, row, s)
			}
			for _, s := range tc.not {
				require.NotContains(t, row, s)
			}
		})
	}
}

// caseRow is the row of case name on a report's page (its first <tr>, not its details).
func caseRow(t *testing.T, page, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `<tr id="case-`+name+`"`)
	require.True(t, ok, "the page has a row for case %s", name)
	row, _, ok := strings.Cut(rest, "</tr>")
	require.True(t, ok, "the row of case %s ends", name)
	return row
}

// TestEvalsPaging: the Evals list shows 200 reports a page, newest first, reading only those of
// the page shown (a broken report on page 2 is named there, not on page 1); Older and Newer go
// back and forth, a before= that is not a report's id is a 400 that says so, and with 200 reports
// or fewer there is one page and no pager.
func TestEvalsPaging(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string // oldest first
	for i := range 205 {
		id, err := report.Save(dir, &report.Report{Workflow: "paged", StartedAt: at.Add(time.Duration(i) * time.Minute),
			Summary: report.Summary{Cases: 1}, Cases: []report.Case{{Name: "c", Grades: []report.Grade{}}}})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	const broken = "20000101T000000.000Z-broken"
	require.NoError(t, os.WriteFile(filepath.Join(dir, broken+".json"), []byte("{"), 0o644))
	srv := newConsole(t, console.Options{EvalsDir: dir})
	shown := regexp.MustCompile(`<tr data-eval="([^"]+)">`)
	rows := func(page string) []string {
		var out []string
		for _, m := range shown.FindAllStringSubmatch(page, -1) {
			out = append(out, m[1])
		}
		return out
	}
	link := func(t *testing.T, page, id string) string {
		t.Helper()
		m := regexp.MustCompile(`<a id="` + id + `"[^>]* href="([^"]*)"`).FindStringSubmatch(page)
		if m == nil {
			return ""
		}
		return html.UnescapeString(m[1])
	}
	// has and hasNot name the text, not the 200-row page, when they fail.
	has := func(t *testing.T, page, s, why string) {
		t.Helper()
		require.True(t, strings.Contains(page, s), "the page has %q: %s", s, why)
	}
	hasNot := func(t *testing.T, page, s, why string) {
		t.Helper()
		require.False(t, strings.Contains(page, s), "the page has no %q: %s", s, why)
	}
	newestFirst := func(ids []string) []string {
		out := slices.Clone(ids)
		slices.Reverse(out)
		return out
	}

	code, page1 := getPage(t, srv, "/evals")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, newestFirst(ids[5:]), rows(page1), "page 1: the 200 newest")
	hasNot(t, page1, "broken", "page 1 reads only its own reports")
	has(t, page1, "page 1", "the pager says which page")
	require.Empty(t, link(t, page1, "newer"))
	require.Empty(t, link(t, page1, "newest"))
	older := link(t, page1, "older")
	require.Equal(t, "/evals?before="+ids[5], older)

	code, page2 := getPage(t, srv, older)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, newestFirst(ids[:5]), rows(page2), "page 2: the 5 oldest")
	has(t, page2, broken+".json is not a weft eval report", "page 2 names the report it could not read")
	has(t, page2, "page 2", "the pager says which page")
	require.Empty(t, link(t, page2, "older"), "the last page")
	require.Equal(t, "/evals", link(t, page2, "newest"))
	newer := link(t, page2, "newer")
	require.Equal(t, "/evals", newer)
	_, back := getPage(t, srv, newer)
	require.Equal(t, rows(page1), rows(back), "Newer goes back to page 1")

	for _, tc := range []struct{ name, before string }{
		{"a path", "../secret"},
		{"a slash", "a/b"},
		{"a hidden file", ".saving-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, page := getPage(t, srv, "/evals?"+url.Values{"before": {tc.before}}.Encode())
			require.Equal(t, http.StatusBadRequest, code)
			has(t, page, "is not an eval report&#39;s id", "the error names the parameter")
			has(t, page, "start again from the newest reports", "and what to do")
			require.Equal(t, "/evals", link(t, page, "newest"))
			require.Empty(t, rows(page))
		})
	}
	code, none := getPage(t, srv, "/evals?before="+broken)
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, rows(none), "nothing is older than the oldest")
	has(t, none, "No reports here", "an empty page says so")

	// 200 reports: one page, as before paging.
	for _, id := range ids[:5] {
		require.NoError(t, os.Remove(filepath.Join(dir, id+".json")))
	}
	require.NoError(t, os.Remove(filepath.Join(dir, broken+".json")))
	code, one := getPage(t, srv, "/evals")
	require.Equal(t, http.StatusOK, code)
	require.Len(t, rows(one), 200)
	hasNot(t, one, `class="pager"`, "one page needs no pager")
}

// getPage GETs path from srv: the status and the body.
func getPage(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	require.NoError(t, err)
	return resp.StatusCode, body(t, resp)
}
