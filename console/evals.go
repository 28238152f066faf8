package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/eval/report"
)

// The Evals pages show the reports `weft eval` keeps (eval/report, written by weft eval
// alone): a list, newest first, and a report's cases. The console only reads them.

// evalsPerPage is how many reports a page of the list reads and shows; ?before=ID pages back
// (listPager).
const evalsPerPage = 200

// EvalRow is one report of the Evals page.
type EvalRow struct {
	ID, Workflow, Dataset string
	Started               time.Time
	Cases, Passed, Failed int
	PassRate, MeanScore   float64
	Tokens                int64
	Cost                  float64
	Duration              string
	Regressions           []string
}

// EvalView is one report's page.
type EvalView struct {
	EvalRow
	Concurrency            int
	LatencyP50, LatencyP95 string
	JudgeTokens            int64
	JudgeCost              float64
	Baseline               *report.Comparison
	// BaselineDelta is the pass rate's change from the baseline, in points.
	BaselineDelta float64
	// Cancelled counts the cases whose run weft eval cancelled (Case.Cancelled).
	Cancelled int
	Rows      []EvalCaseView
}

// EvalCaseView is one case of a report.
type EvalCaseView struct {
	report.Case
	Latency                string
	InputsJSON, ExpectJSON string
	OutputJSON             string
	Decided                []EvalDecided
}

// EvalDecided is a review decision the eval sent for a case.
type EvalDecided struct {
	ID, Decision, Comment, Reviewer string
	DataJSON                        string
}

// evalsDir is where reports are read.
func (s *Server) evalsDir() string {
	if s.o.EvalsDir != "" {
		return s.o.EvalsDir
	}
	return report.DefaultDir
}

// mayReadEvals: weft eval runs its cases as the operator (no identity starts them), so a report is
// read by whoever may read the operator's runs (weftclient.MayRead, the one read rule).
func (s *Server) mayReadEvals(w http.ResponseWriter, sess *session) bool {
	if weftclient.MayRead(sess.reader(), "") {
		return true
	}
	writeError(w, http.StatusForbidden, "eval reports are the operator's: this login may not read them")
	return false
}

func evalRow(id string, r *report.Report) EvalRow {
	row := EvalRow{ID: id, Workflow: r.Workflow, Dataset: r.Dataset, Started: r.StartedAt,
		Cases: r.Summary.Cases, Passed: r.Summary.Passed, Failed: r.Summary.Failed,
		PassRate: 100 * r.Summary.PassRate, MeanScore: r.Summary.MeanScore, Tokens: r.Summary.Tokens, Cost: r.Summary.CostUSD,
		Duration: duration(time.Duration(r.Summary.DurationMs) * time.Millisecond)}
	if r.Baseline != nil {
		row.Regressions = r.Baseline.Regressions
	}
	return row
}

func (s *Server) evalsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	if !s.mayReadEvals(w, sess) {
		return
	}
	d := s.base(sess, "Evals", "evals")
	d.Source = s.evalsDir()
	before := r.URL.Query().Get("before")
	if before != "" && !report.ValidID(before) {
		d.Error = fmt.Sprintf("before=%q is not an eval report's id (a file name of %s without .json): "+
			"the Older and Newer links give one; start again from the newest reports", before, d.Source)
		d.Pager = Pager{Page: 1, Newest: "/evals", Of: "eval reports"}
		s.render(w, "evals", d, http.StatusBadRequest)
		return
	}
	// Only the names are listed whole; the reports of the page shown are read.
	ids, err := report.IDs(d.Source)
	if err != nil {
		d.Error = err.Error()
	}
	pg, lo, hi := listPager("/evals", ids, before, evalsPerPage)
	pg.Of = "eval reports"
	d.Pager = pg
	entries, err := report.Entries(d.Source, ids[lo:hi])
	if err != nil {
		// The reports that could be read are shown; the error names the others.
		d.Error = err.Error()
	}
	for i := range entries {
		d.Evals = append(d.Evals, evalRow(entries[i].ID, &entries[i].Report))
	}
	s.render(w, "evals", d, http.StatusOK)
}

// evalJSON is a value for a <pre>: indented JSON, "" for nothing.
func evalJSON(v any) string {
	if v == nil {
		return ""
	}
	if raw, ok := v.(json.RawMessage); ok {
		if len(raw) == 0 || string(raw) == "{}" || string(raw) == "null" {
			return ""
		}
		var x any
		if json.Unmarshal(raw, &x) != nil {
			return string(raw)
		}
		v = x
	}
	// The page escapes it: < and > stay as they are, not \u003c.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (s *Server) evalPage(w http.ResponseWriter, r *http.Request, sess *session) {
	if !s.mayReadEvals(w, sess) {
		return
	}
	id := r.PathValue("id")
	rep, err := report.Read(s.evalsDir(), id)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, report.ErrNotFound) {
			code = http.StatusNotFound
		}
		d := s.base(sess, "Eval", "evals")
		d.Error = err.Error()
		s.render(w, "eval", d, code)
		return
	}
	v := &EvalView{EvalRow: evalRow(id, rep), Concurrency: rep.Concurrency, Baseline: rep.Baseline,
		LatencyP50:  duration(time.Duration(rep.Summary.LatencyP50Ms) * time.Millisecond),
		LatencyP95:  duration(time.Duration(rep.Summary.LatencyP95Ms) * time.Millisecond),
		JudgeTokens: rep.Summary.JudgeTokens, JudgeCost: rep.Summary.JudgeCostUSD}
	if rep.Baseline != nil {
		v.BaselineDelta = 100 * rep.Baseline.PassRateDelta
	}
	for _, c := range rep.Cases {
		cv := EvalCaseView{Case: c, Latency: duration(time.Duration(c.LatencyMs) * time.Millisecond),
			ExpectJSON: evalJSON(c.Expect), OutputJSON: evalJSON(c.Output)}
		if len(c.Inputs) > 0 {
			cv.InputsJSON = evalJSON(c.Inputs)
		}
		for _, rv := range c.Reviews {
			cv.Decided = append(cv.Decided, EvalDecided{ID: rv.ID, Decision: rv.Decision, Comment: rv.Comment, Reviewer: rv.Reviewer, DataJSON: evalJSON(rv.Data)})
		}
		if c.Cancelled != "" {
			v.Cancelled++
		}
		v.Rows = append(v.Rows, cv)
	}
	d := s.base(sess, "Eval "+rep.Workflow, "evals")
	d.Eval = v
	s.render(w, "eval", d, http.StatusOK)
}
