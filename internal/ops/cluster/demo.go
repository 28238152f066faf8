package cluster

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"go.temporal.io/api/enums/v1"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/templates"
)

// DemoResult is what the demo saw.
type DemoResult struct {
	Runs []string
	// Workers are the identities of the worker processes that ran the runs' activities.
	Workers []string
}

// Demo runs weft's demo against a running stack: it ingests the sample corpus, searches both
// collections, and starts a run that pauses for review, approves it and waits for it to finish.
func Demo(ctx context.Context, temporal string, out io.Writer) (*DemoResult, error) {
	c, err := weftclient.Dial(ctx, weftclient.Options{Address: temporal, DialTimeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	res := &DemoResult{}
	run := func(name string, inputs map[string]any) (*weftclient.Run, error) {
		w, err := weftclient.Template(name)
		if err != nil {
			return nil, err
		}
		r, err := c.Start(ctx, w, weftclient.StartOptions{Source: name, Inputs: inputs})
		if err == nil {
			res.Runs = append(res.Runs, r.ID)
		}
		return r, err
	}
	for _, coll := range []string{"api_docs", "architecture"} {
		docs := templates.CorpusInputs(coll)
		r, err := run("batch-ingest", map[string]any{"docs": docs, "collection": coll})
		if err != nil {
			return nil, err
		}
		out1, err := r.Get(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", r.ID, weftclient.Cause(err))
		}
		fmt.Fprintf(out, "  batch-ingest: %d documents into %s [%d ms]\n", len(docs), coll, out1.DurationMs)
	}
	r, err := run("multi-collection-search", map[string]any{"query": "what happens when we hit the rate limit", "limit": 3.0})
	if err != nil {
		return nil, err
	}
	found, err := r.Get(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", r.ID, weftclient.Cause(err))
	}
	results, _ := found.Output.GetStructValue().AsMap()["results"].([]any)
	fmt.Fprintf(out, "  multi-collection-search: %d results [%d ms]\n", len(results), found.DurationMs)
	if len(results) == 0 {
		return nil, fmt.Errorf("%s: the search found nothing in the ingested corpus", r.ID)
	}
	r, err = run("approval-demo", map[string]any{"version": "cluster"})
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		d, err := c.Review(ctx, r.ID, weftclient.Decision{Decision: "approve", Reviewer: "cluster-demo"})
		if err == nil {
			fmt.Fprintf(out, "  approval-demo: paused for review, approved by %s\n", d.GetReviewer())
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: no review to approve: %w", r.ID, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := r.Get(ctx); err != nil {
		return nil, fmt.Errorf("%s: %s", r.ID, weftclient.Cause(err))
	}
	fmt.Fprintln(out, "  approval-demo: completed")
	seen := map[string]bool{}
	for _, id := range res.Runs {
		it := c.Temporal().GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return nil, err
			}
			if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
				seen[a.GetIdentity()] = true
			}
			if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil {
				seen[a.GetIdentity()] = true
			}
		}
	}
	for w := range seen {
		res.Workers = append(res.Workers, w)
	}
	sort.Strings(res.Workers)
	fmt.Fprintf(out, "  workers that ran tasks: %d (%v)\n", len(res.Workers), res.Workers)
	return res, nil
}
