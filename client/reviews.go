package client

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// PendingReview is a review gate waiting for a decision: a review step, a forEach item's review,
// an agent's tool call, or a chat session's tool call.
type PendingReview struct {
	// Run is the run the review belongs to: the run someone started, or the chat session. A child
	// run's review belongs to the run that started it (weft status RUN lists it).
	Run RunSummary
	// Chat says Run is a chat session (the review approves one of its tool calls).
	Chat bool
	// In is where the gate lives: Run itself, or one of its child runs ("RUN/step"). A decision
	// sent to In (weft review IN --id REVIEW) reaches this gate and no other.
	In     RunSummary
	Review *weftv1.ReviewRequest
}

// MarshalJSON writes the review as proto JSON (camelCase field names; ProtoJSON).
func (p PendingReview) MarshalJSON() ([]byte, error) {
	review := json.RawMessage("null")
	if p.Review != nil {
		b, err := ProtoJSON(p.Review)
		if err != nil {
			return nil, err
		}
		review = b
	}
	return json.Marshal(struct {
		Run    RunSummary      `json:"run"`
		Chat   bool            `json:"chat,omitempty"`
		In     RunSummary      `json:"in"`
		Review json.RawMessage `json:"review"`
	}{p.Run, p.Chat, p.In, review})
}

// MaxReviewRuns is the most waiting executions PendingReviews reads (its o.Limit is bounded by
// it): the listing is newest first, so past it the longest waiting reviews are the ones left out.
const MaxReviewRuns = 1000

// PendingReviewList is the reviews waiting, the longest waiting first, and whether more
// executions waited than were read (Capped: Reviews are those of the Limit newest of them, and
// how many wait in all is more than they tell).
type PendingReviewList struct {
	Reviews []PendingReview
	Capped  bool
	// Runs is how many waiting executions were read.
	Runs int
}

// Cut says where the listing's bound cut it, for people and agents to read beside the reviews
// they were shown: "" when every execution waiting was read, else how many wait at least (shown:
// how many reviews the reader was shown, what their read rule kept; none gets a sentence of its
// own), that runs started earlier were left out, and how to read more. more is the sentence
// saying how this reader reads more (a larger bound: "weft reviews --limit 1000 reads more."),
// "" when they cannot: then it says that the older ones are listed once newer ones are decided,
// which is true too of a reader who may decide nothing. Every listing of the reviews that says
// its cut (weft reviews, MCP's, the console's) says it with this.
func (l PendingReviewList) Cut(shown int, more string) string {
	if !l.Capped {
		return ""
	}
	s := fmt.Sprintf("At least %d waiting: the reviews of the %d newest runs waiting are listed; older runs wait too, and they may have waited longest.", shown, l.Runs)
	if shown == 0 {
		s = fmt.Sprintf("No review you may see waits in the %d newest runs waiting; older runs wait too, and they may have waited longest.", l.Runs)
	}
	if more == "" {
		more = "The older ones are listed once newer ones are decided."
	}
	return s + " " + more
}

// PendingReviews lists the reviews waiting for a decision across runs, chat sessions and their
// child runs, the longest waiting first. o.Workflow keeps the runs of one workflow ("chat": chat
// sessions); o.Limit bounds how many waiting executions are read (default 100, at most
// MaxReviewRuns); o.Status and o.AwaitingReview are ignored. ListPendingReviews says too whether
// that bound left executions out.
func (c *Client) PendingReviews(ctx context.Context, o ListOptions) ([]PendingReview, error) {
	l, err := c.ListPendingReviews(ctx, o)
	if err != nil {
		return nil, err
	}
	return l.Reviews, nil
}

// ListPendingReviews is PendingReviews with whether o.Limit left waiting executions out: it pages
// through the listing (newest first) until it has read o.Limit of them or there are no more.
//
// The listing reads visibility (WeftStatus awaiting_review, which is eventually consistent) and
// then asks each execution for its own gates: a run that was decided or ended in between is left
// out.
func (c *Client) ListPendingReviews(ctx context.Context, o ListOptions) (PendingReviewList, error) {
	limit := o.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxReviewRuns)
	q := fmt.Sprintf(`(WorkflowType = %q OR WorkflowType = %q) AND ExecutionStatus = "Running" AND %s = %q`,
		runwire.WorkflowType, runwire.ChatWorkflowType, runwire.StatusAttribute.GetName(), runwire.StatusAwaitingReview)
	type waiting struct {
		RunSummary
		chat bool
		root string // the top-level run's id
	}
	var execs []waiting
	known := map[string]waiting{}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var token []byte
	capped := false
	for {
		// a page; once the bound is met at a page's end, one more row tells whether any execution
		// was left out
		size, full := min(limit, 100), len(execs) >= limit
		if full {
			size = 1
		}
		resp, err := c.t.ListWorkflow(lctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, PageSize: int32(size), NextPageToken: token})
		if err != nil {
			return PendingReviewList{}, fmt.Errorf("listing runs waiting for a review (%s): %w", q, err)
		}
		token = resp.GetNextPageToken()
		for _, e := range resp.GetExecutions() {
			if _, dup := known[e.GetExecution().GetWorkflowId()]; dup {
				continue
			}
			if len(execs) >= limit {
				capped = true
				break
			}
			w := waiting{RunSummary: c.summary(e), chat: e.GetType().GetName() == runwire.ChatWorkflowType, root: e.GetRootExecution().GetWorkflowId()}
			if w.root == "" && e.GetParentExecution().GetWorkflowId() != "" {
				w.root = c.rootOf(ctx, e.GetParentExecution().GetWorkflowId())
			}
			if w.root == "" {
				w.root = w.ID
			}
			execs = append(execs, w)
			known[w.ID] = w
		}
		if capped || full || len(token) == 0 {
			break
		}
	}
	// The run each review belongs to: listed when it waits itself, else read.
	root := func(id string) (RunSummary, bool) {
		if w, ok := known[id]; ok {
			return w.RunSummary, w.chat
		}
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		d, err := c.t.DescribeWorkflowExecution(dctx, id, "")
		if err != nil {
			return RunSummary{ID: id}, false
		}
		info := d.GetWorkflowExecutionInfo()
		w := waiting{RunSummary: c.summary(info), chat: info.GetType().GetName() == runwire.ChatWorkflowType, root: id}
		known[id] = w
		return w.RunSummary, w.chat
	}
	// Each run's state, 8 queries at a time: a run whose worker is down answers only when its
	// query times out, and must not hold up the others one after another.
	states := make([]*weftv1.ExecutionState, len(execs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, w := range execs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if st, err := c.ownState(ctx, w.ID); err == nil {
				states[i] = st
			} // else decided or ended since the listing, or its worker is down
		}()
	}
	wg.Wait()
	out := []PendingReview{}
	for i, w := range execs {
		st := states[i]
		if st == nil {
			continue
		}
		run, chat := root(w.root)
		if o.Workflow != "" && run.Workflow != o.Workflow {
			continue
		}
		for _, r := range st.PendingReviews {
			out = append(out, PendingReview{Run: run, Chat: chat, In: w.RunSummary, Review: r})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Review.GetRequestedAt().AsTime(), out[j].Review.GetRequestedAt().AsTime()
		if !a.Equal(b) {
			return a.Before(b)
		}
		return out[i].Run.ID < out[j].Run.ID
	})
	return PendingReviewList{Reviews: out, Capped: capped, Runs: len(execs)}, nil
}

// rootOf follows a run's parents up to the run nobody started (Temporal older than 1.27 lists no
// root execution); id itself when it cannot tell.
func (c *Client) rootOf(ctx context.Context, id string) string {
	for range 8 {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		d, err := c.t.DescribeWorkflowExecution(dctx, id, "")
		cancel()
		if err != nil {
			return id
		}
		parent := d.GetWorkflowExecutionInfo().GetParentExecution().GetWorkflowId()
		if parent == "" {
			return id
		}
		id = parent
	}
	return id
}
