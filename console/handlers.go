package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

// pageData is what every page template gets.
type pageData struct {
	Title  string
	Active string
	CSRF   string
	User   string
	Login  bool // a login is required (shows the log-out button)
	Next   string
	Error  string

	Runs     []RunRow
	Status   string
	Workflow string
	Statuses []string
	Pager    Pager

	RunID      string
	Run        *RunView
	TemporalUI string

	Reviews []PendingReview
	// Counted is the reviews page's sentences (reviewCounts): how many wait, and what an empty
	// page means.
	Counted ReviewCounts

	Catalog []CatalogRow
	Entry   *CatalogRow
	Source  string
	Data    string // JSON handed to the page script, in a data attribute

	Evals []EvalRow
	Eval  *EvalView
}

var funcs = template.FuncMap{
	// ago: a <time> saying how long ago, with the absolute time as its tooltip (format.go)
	"ago":      timeTag,
	"duration": duration,
	"cost": func(v float64) string {
		if v == 0 {
			return "—"
		}
		return fmt.Sprintf("$%.4f", v)
	},
}

func (s *Server) render(w http.ResponseWriter, page string, d pageData, code int) {
	var buf bytes.Buffer
	if err := s.pages[page].ExecuteTemplate(&buf, "layout.html", d); err != nil {
		s.o.Log.Error("console: rendering a page", "page", page, "error", err)
		http.Error(w, "rendering the page failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

func (s *Server) base(sess *session, title, active string) pageData {
	return pageData{Title: title, Active: active, CSRF: sess.csrf, User: sess.name, Login: s.o.RequireLogin,
		Statuses: []string{"running", "awaiting_review", "completed", "failed", "cancelled", "terminated", "timed_out"}}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

// clientError turns the client package's errors into HTTP statuses.
func clientError(w http.ResponseWriter, err error) {
	code := http.StatusBadGateway
	var nf *weftclient.NotFoundError
	var fin *weftclient.FinishedError
	var inv *weftclient.InvalidError
	var ref *weftclient.RefusedError
	var diags dsl.Diagnostics
	switch {
	case errors.As(err, &nf):
		code = http.StatusNotFound
	case errors.As(err, &fin):
		code = http.StatusConflict
	case errors.As(err, &ref) && ref.Access:
		code = http.StatusForbidden
	case errors.As(err, &inv), errors.As(err, &ref), errors.As(err, &diags):
		code = http.StatusBadRequest
	}
	writeError(w, code, err.Error())
}

// ---- runs ----

// RunRow is one line of the runs page.
type RunRow struct {
	weftclient.RunSummary
	Duration string  `json:"duration"`
	Awaiting bool    `json:"awaitingReview"`
	Cost     float64 `json:"costUsd"`
	Tokens   int64   `json:"tokens"`
}

// reader is the session's identity for weftclient's read rule (CheckRead, Readable): nil for the
// operator on this machine, who reads everything.
func (sess *session) reader() *auth.Identity {
	if id, ok := sess.identity(); ok {
		return &id
	}
	return nil
}

// mayRead reports whether the session may read run id (weftclient.CheckRead: a login reads the
// runs it started, the operator's, those waiting for its decision as a reviewer, or any as an
// admin); when not, it writes the refusal (403) or the error.
func (s *Server) mayRead(w http.ResponseWriter, r *http.Request, sess *session, id string) bool {
	err := s.o.Client.CheckRead(r.Context(), "run "+id, id, sess.reader())
	if err == nil {
		return true
	}
	var ref *weftclient.RefusedError
	if errors.As(err, &ref) {
		s.o.Log.Warn("console: read refused", "run", id, "identity", sess.who.Name)
		writeError(w, http.StatusForbidden, err.Error())
		return false
	}
	clientError(w, err)
	return false
}

func (s *Server) runRows(ctx context.Context, q url.Values, sess *session) ([]RunRow, Pager, error) {
	pg := newPager(q)
	pg.Of = "runs"
	page, err := s.o.Client.ListPage(ctx, weftclient.ListOptions{Status: q.Get("status"), Workflow: q.Get("workflow"),
		Search: q.Get("q"), After: q.Get("after"), Limit: s.o.RunsPerPage})
	if err != nil {
		return nil, pg, err
	}
	pg.next(page.Next)
	runs := s.o.Client.Readable(ctx, sess.reader(), page.Runs)
	rows := make([]RunRow, len(runs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, r := range runs {
		rows[i] = RunRow{RunSummary: r, Awaiting: r.RunStatus() == weftclient.RunAwaitingReview}
		end := r.Closed
		if end.IsZero() {
			end = time.Now()
		}
		rows[i].Duration = duration(end.Sub(r.Started))
		wg.Add(1)
		go func(row *RunRow) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			row.Cost, row.Tokens = s.usage(ctx, row.RunSummary)
		}(&rows[i])
	}
	wg.Wait()
	return rows, pg, nil
}

// usage reads a run's token cost from its state; a closed run's never changes, so it is kept.
func (s *Server) usage(ctx context.Context, r weftclient.RunSummary) (float64, int64) {
	closed := !r.Closed.IsZero()
	key := r.ID + "@" + r.Started.String()
	if closed {
		s.mu.Lock()
		u, ok := s.costs[key]
		s.mu.Unlock()
		if ok {
			return u.cost, u.tokens
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := s.o.Client.State(ctx, r.ID)
	if err != nil {
		return 0, 0
	}
	lu := weftclient.UsageOf(st.GetUsage())
	u := runUsage{lu.CostUSD, lu.Tokens}
	if closed {
		s.mu.Lock()
		if len(s.costs) > 10000 {
			clear(s.costs)
		}
		s.costs[key] = u
		s.mu.Unlock()
	}
	return u.cost, u.tokens
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	d := s.base(sess, "Runs", "runs")
	d.Status, d.Workflow = r.URL.Query().Get("status"), r.URL.Query().Get("workflow")
	rows, pg, err := s.runRows(r.Context(), r.URL.Query(), sess)
	if err != nil {
		d.Error = err.Error()
	}
	d.Runs, d.Pager = rows, pg
	s.render(w, "runs", d, http.StatusOK)
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request, sess *session) {
	rows, pg, err := s.runRows(r.Context(), r.URL.Query(), sess)
	if err != nil {
		clientError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": rows, "next": pg.Next, "pager": pg})
}

// ---- one run ----

// RunView is what the run page starts from; its live updates come as Snapshots.
type RunView struct {
	ID       string    `json:"id"`
	Workflow string    `json:"workflow"`
	Graph    *Graph    `json:"graph,omitempty"`
	GraphErr string    `json:"graphError,omitempty"`
	Snapshot *Snapshot `json:"snapshot"`
	UI       string    `json:"temporalUI,omitempty"`
	// MayAct: the viewer may cancel and retry the run (the runner role, and weftclient.MayAct:
	// its starter, an admin, the operator). The page shows Cancel and Retry only then; the
	// server refuses the others still.
	MayAct bool `json:"mayAct"`
}

// Snapshot is a run's state as the page shows it: the state query's answer (steps, reviews,
// usage), the Temporal status, and the text streamed so far by running model calls, by step.
type Snapshot struct {
	Status    string            `json:"status"`
	Closed    bool              `json:"closed"`
	Started   time.Time         `json:"started"`
	Ended     time.Time         `json:"ended,omitzero"`
	State     json.RawMessage   `json:"state,omitempty"`
	StateErr  string            `json:"stateError,omitempty"`
	Streaming map[string]string `json:"streaming,omitempty"`
	// StreamingAttempt is, by step, the attempt of its streaming text when that text started over
	// (2, 3, …: a worker died mid-answer and the call runs again, or a repair); the page shows it
	// in place of the text before, marked restarted. A first attempt is not listed.
	StreamingAttempt map[string]int32 `json:"streamingAttempt,omitempty"`
	// Usage is the run's usage ledger (weftclient.Usage), the same every surface shows.
	Usage *weftclient.Usage `json:"usage,omitempty"`
	// Retryable: the run failed, so it has a failed step to resume from (the page shows "Retry
	// from the failed step"). A cancelled, terminated or timed-out run has none: the console
	// offers no retry of it (weft retry still resumes one).
	Retryable bool `json:"retryable,omitempty"`
	// ReviewAccess says, by gate id, who may decide each pending review and whether the viewer
	// may (reviewAccess): the card shows its buttons only to who may.
	ReviewAccess map[string]ReviewAccess `json:"reviewAccess,omitempty"`
	// Decided is the run's decided gates as its state records them (decidedReviews): who
	// decided what, when, shown on every reload and to every viewer.
	Decided []DecidedReview `json:"decided,omitempty"`
}

func (s *Server) snapshot(ctx context.Context, id string) (*Snapshot, error) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// The run as every surface shows it (weftclient.Resolve): status, steps' outcomes, usage.
	e, err := s.o.Client.Execution(qctx, id)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Status: e.Status, Closed: e.Closed, Started: e.Started, Ended: e.Ended, Retryable: retryOffered(e.Status),
		StateErr: e.StateErr}
	if e.State != nil {
		snap.Usage = &e.Usage
		if b, err := weftclient.ProtoJSON(e.State); err == nil {
			snap.State = b
		}
		who := weftclient.Caller(ctx)
		for _, r := range e.State.GetPendingReviews() {
			if snap.ReviewAccess == nil {
				snap.ReviewAccess = map[string]ReviewAccess{}
			}
			snap.ReviewAccess[r.GetId()] = reviewAccess(who, r)
		}
		snap.Decided = decidedReviews(e.State)
	}
	for _, t := range weftclient.LLMText(e.Description.Pending) {
		if snap.Streaming == nil {
			snap.Streaming = map[string]string{}
		}
		snap.Streaming[t.Step] = t.Text
		if t.TemporalAttempt > 1 { // a retry: its text started over
			if snap.StreamingAttempt == nil {
				snap.StreamingAttempt = map[string]int32{}
			}
			snap.StreamingAttempt[t.Step] = t.TemporalAttempt
		}
	}
	return snap, nil
}

// mayAct says whether ctx's caller may cancel or retry run id: the runner role, as the endpoints
// ask (Server.may), and weftclient.CheckAct's rule. A starter that cannot be read says no.
func (s *Server) mayAct(ctx context.Context, id string) bool {
	who := weftclient.Caller(ctx)
	if who == nil || who.Has(auth.RoleAdmin) {
		return true
	}
	if !who.Has(auth.RoleRunner) {
		return false
	}
	owner, err := s.o.Client.StartedBy(ctx, id)
	return err == nil && weftclient.MayAct(who, owner)
}

// retryOffered says whether the console offers to retry a run of status: a failed one, which has
// a failed step to resume from.
func retryOffered(status string) bool { return status == weftclient.RunFailed }

func (s *Server) runView(ctx context.Context, id string) (*RunView, error) {
	snap, err := s.snapshot(ctx, id)
	if err != nil {
		return nil, err
	}
	v := &RunView{ID: id, Snapshot: snap, MayAct: s.mayAct(ctx, id)}
	if w, err := s.o.Client.Workflow(ctx, id); err != nil {
		v.GraphErr = err.Error()
	} else {
		v.Graph, v.Workflow = NewGraph(w), w.Def.Name
	}
	if s.o.TemporalUI != "" {
		v.UI = fmt.Sprintf("%s/namespaces/%s/workflows/%s", strings.TrimRight(s.o.TemporalUI, "/"), url.PathEscape(s.o.Namespace), url.PathEscape(id))
	}
	return v, nil
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request, sess *session) {
	id := r.PathValue("id")
	d := s.base(sess, "Run "+id, "runs")
	d.RunID = id
	if err := s.o.Client.CheckRead(r.Context(), "run "+id, id, sess.reader()); err != nil {
		var ref *weftclient.RefusedError
		if errors.As(err, &ref) {
			d.Error = err.Error()
			s.render(w, "run", d, http.StatusForbidden)
			return
		}
	}
	v, err := s.runView(r.Context(), id)
	if err != nil {
		d.Error = err.Error()
		s.render(w, "run", d, http.StatusNotFound)
		return
	}
	d.Run, d.Data = v, mustJSON(v)
	s.render(w, "run", d, http.StatusOK)
}

func (s *Server) apiRun(w http.ResponseWriter, r *http.Request, sess *session) {
	if !s.mayRead(w, r, sess, r.PathValue("id")) {
		return
	}
	v, err := s.runView(r.Context(), r.PathValue("id"))
	if err != nil {
		clientError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// apiEvents streams a run's snapshots as server-sent events, one whenever something changed
// (read as soon as the run records an event; model text streamed goes into the last one), and
// the run's own events as "run-event", until the run ends or the page goes away: followRun.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request, sess *session) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming is not supported by this connection")
		return
	}
	id := r.PathValue("id")
	if !s.mayRead(w, r, sess, id) {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	s.followRun(r.Context(), w, fl, r, id)
}

// ---- reviews ----

// PendingReview is a gate waiting for a decision, with the run it belongs to (client.PendingReviews).
type PendingReview struct {
	Run      string `json:"run"`
	Workflow string `json:"workflow"`
	// Chat: Run is a chat session. In is where the gate lives when that is a child run of Run.
	Chat   bool                  `json:"chat,omitempty"`
	In     string                `json:"in,omitempty"`
	Review *weftv1.ReviewRequest `json:"-"`
	JSON   json.RawMessage       `json:"review"`
	// Access: who may decide it, and whether the viewer may (reviewAccess).
	Access ReviewAccess `json:"access"`
}

// pendingReviews is the reviews waiting that sess may read, the longest waiting first, read
// from at most weftclient.MaxReviewRuns waiting executions, and the listing they came from (the
// newest runs: l.Capped says there were more, and how many wait in all is then at least the
// count). The listing is shared by every poll (s.reviews); sess's read rule is applied to it
// here, on each read.
func (s *Server) pendingReviews(ctx context.Context, sess *session) ([]PendingReview, weftclient.PendingReviewList, error) {
	l, err := s.reviews.get(ctx)
	if err != nil {
		return nil, l, err
	}
	reviews := weftclient.ReadableReviews(sess.reader(), l.Reviews)
	out := make([]PendingReview, 0, len(reviews))
	for _, p := range reviews {
		b, _ := weftclient.ProtoJSON(p.Review)
		r := PendingReview{Run: p.Run.ID, Workflow: p.Run.Workflow, Chat: p.Chat, Review: p.Review, JSON: b, Access: reviewAccess(sess.reader(), p.Review)}
		if p.In.ID != p.Run.ID {
			r.In = p.In.ID
		}
		out = append(out, r)
	}
	return out, l, nil
}

// ReviewCounts is what the reviews page says of how many reviews wait (the page renders it, its
// script writes it again from each read of /api/reviews): Total, or "" when the list could not
// be read; None, what a page without reviews means.
type ReviewCounts struct {
	Total string `json:"total"`
	None  string `json:"none"`
	// More: more runs wait than were read (the nav's count shows "N+").
	More bool `json:"more,omitempty"`
}

// reviewCounts words total reviews waiting, shown of them on this page, read from the listing l;
// when l was cut (l.Capped: total is of its newest runs waiting, and more wait) it says so in the
// sentences every listing of the reviews says it with (PendingReviewList.Cut): the console reads
// the most runs it may, so more are listed only once newer ones are decided.
func reviewCounts(l weftclient.PendingReviewList, total, shown int) ReviewCounts {
	c := ReviewCounts{More: l.Capped}
	switch {
	case total > 0:
		c.None = "Nothing waits on this page: the first page has the reviews still waiting."
	case l.Capped:
		// the count says it (Cut's sentence for none): the page says it once
	default:
		c.None = "Nothing waits for a decision."
	}
	if cut := l.Cut(total, ""); cut != "" {
		c.Total = cut
		if total > shown {
			c.Total += fmt.Sprintf(" %d on this page.", shown)
		}
		return c
	}
	c.Total = fmt.Sprintf("%d waiting in all", total)
	if total > shown {
		c.Total += fmt.Sprintf(", %d on this page", shown)
	}
	c.Total += "."
	return c
}

// reviewKey orders the pending reviews as the list shows them, the longest waiting first, in the
// backwards order listPager pages: the time the review was asked counted back from the end of
// time, then its run and gate.
func reviewKey(p PendingReview) string {
	at := max(p.Review.GetRequestedAt().AsTime().UnixNano(), 0)
	return fmt.Sprintf("%019d.%s.%s", math.MaxInt64-at, p.Run, p.Review.GetId())
}

// reviewList is a page of the pending reviews, as the reviews page hands it to its script and
// /api/reviews answers it.
type reviewList struct {
	Reviews []PendingReview `json:"reviews"`
	Pager   Pager           `json:"pager"`
	Total   int             `json:"total"` // how many reviews wait in all, on every page
	Counted ReviewCounts    `json:"counted"`
}

// reviewPage is the page of the pending reviews that starts after the review q's "before" names
// (ReviewsPerPage of them, the longest waiting first; that review need not wait any more), its
// pager, and how many reviews wait in all with the page's sentences.
func (s *Server) reviewPage(ctx context.Context, q url.Values, sess *session) (reviewList, error) {
	all, l, err := s.pendingReviews(ctx, sess)
	if err != nil {
		return reviewList{Pager: Pager{Page: 1, Of: "reviews", Queue: true}}, err
	}
	keys := make([]string, len(all))
	for i := range all {
		keys[i] = reviewKey(all[i])
	}
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return keys[order[a]] > keys[order[b]] })
	sorted, sortedKeys := make([]PendingReview, len(all)), make([]string, len(all))
	for i, j := range order {
		sorted[i], sortedKeys[i] = all[j], keys[j]
	}
	pg, lo, hi := listPager("/reviews", sortedKeys, q.Get("before"), s.o.ReviewsPerPage)
	pg.Of, pg.Queue = "reviews", true
	return reviewList{Reviews: sorted[lo:hi], Pager: pg, Total: len(all), Counted: reviewCounts(l, len(all), hi-lo)}, nil
}

func (s *Server) reviewsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	d := s.base(sess, "Reviews", "reviews")
	page, err := s.reviewPage(r.Context(), r.URL.Query(), sess)
	if err != nil {
		d.Error = err.Error()
	}
	d.Reviews, d.Pager, d.Counted, d.Data = page.Reviews, page.Pager, page.Counted, mustJSON(page)
	s.render(w, "reviews", d, http.StatusOK)
}

// apiReviews answers a page of the pending reviews (?before= as the reviews page), its pager and
// how many wait in all (the nav's count).
func (s *Server) apiReviews(w http.ResponseWriter, r *http.Request, sess *session) {
	page, err := s.reviewPage(r.Context(), r.URL.Query(), sess)
	if err != nil {
		clientError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// ---- workflows ----

// CatalogRow is one workflow of the playground.
type CatalogRow struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Path        string         `json:"path,omitempty"`
	Steps       int            `json:"steps"`
	Categories  map[string]int `json:"categories,omitempty"`
	Error       string         `json:"error,omitempty"`
}

func catalogRow(e weftclient.CatalogEntry) CatalogRow {
	row := CatalogRow{Name: e.Name}
	if e.Path != "" {
		row.Path = filepath.Base(e.Path) // the file in the workflows directory, not the worker's path
	}
	if e.Err != nil {
		row.Error = e.Err.Error()
		return row
	}
	row.Description, row.Steps, row.Categories = e.Workflow.Def.Description, len(e.Workflow.Steps), map[string]int{}
	for _, cs := range e.Workflow.Steps {
		row.Categories[cs.Spec.Category()]++
	}
	return row
}

func (s *Server) entry(name string) (weftclient.CatalogEntry, bool) {
	for _, e := range weftclient.Catalog(s.o.WorkflowsDir, true) {
		if e.Name == name {
			return e, true
		}
	}
	return weftclient.CatalogEntry{}, false
}

func (s *Server) workflowsPage(w http.ResponseWriter, _ *http.Request, sess *session) {
	d := s.base(sess, "Workflows", "workflows")
	for _, e := range weftclient.Catalog(s.o.WorkflowsDir, true) {
		d.Catalog = append(d.Catalog, catalogRow(e))
	}
	s.render(w, "workflows", d, http.StatusOK)
}

// Playground is what the workflow page starts from.
type Playground struct {
	Name   string   `json:"name"`
	Graph  *Graph   `json:"graph,omitempty"`
	Errors []string `json:"errors,omitempty"`
}

func (s *Server) workflowPage(w http.ResponseWriter, r *http.Request, sess *session) {
	name := r.PathValue("name")
	e, ok := s.entry(name)
	d := s.base(sess, name, "workflows")
	if !ok {
		d.Error = fmt.Sprintf("no workflow %q: the workflows page lists the built-in templates and the files of --workflows-dir", name)
		s.render(w, "workflow", d, http.StatusNotFound)
		return
	}
	row := catalogRow(e)
	d.Entry, d.Source = &row, string(e.Data)
	pg := Playground{Name: name}
	if e.Workflow != nil {
		pg.Graph = NewGraph(e.Workflow)
	}
	d.Data = mustJSON(pg)
	s.render(w, "workflow", d, http.StatusOK)
}

// apiGraph draws a definition the page's editor holds once POST /v1/workflows/validate found it
// valid: the graph is the console's drawing (steps in their stages, edges with their kinds,
// branches), which no program asks the API for. The definition is checked as /v1 checks it
// (weftclient.Validate, the one check); one that does not validate is refused (400) with its
// first error.
func (s *Server) apiGraph(w http.ResponseWriter, r *http.Request, _ *session) {
	var b struct {
		Source string `json:"source"`
	}
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		writeError(w, http.StatusBadRequest, "send {\"source\": \"...workflow JSON...\"}: "+err.Error())
		return
	}
	v := weftclient.Validate("editor", []byte(b.Source), weftclient.FileResolver(s.o.WorkflowsDir))
	if !v.Valid {
		msg := "the definition is not valid: POST /v1/workflows/validate lists its problems"
		if es := v.Diagnostics.Errors(); len(es) > 0 {
			msg += " (the first: " + es[0].String() + ")"
		}
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"graph": NewGraph(v.Workflow)})
}

// notFound answers a path the console has no page for: a JSON error under /api/, else a page that
// says so and where to go (the console's pages, and a search of the runs for the path's last part,
// which is often a run's id), behind the login as every page is.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path))
		return
	}
	s.page(func(w http.ResponseWriter, r *http.Request, sess *session) {
		d := s.base(sess, "Not found", "")
		d.Next = r.URL.Path
		if last := path.Base(strings.TrimRight(r.URL.Path, "/")); last != "/" && last != "." && len(last) <= 200 {
			d.Workflow = last
		}
		s.render(w, "notfound", d, http.StatusNotFound)
	})(w, r)
}
