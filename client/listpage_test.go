package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// TestListPages: ListPage's tokens walk through every run once, newest start first, whatever the
// page size; runs that start meanwhile do not shift the later pages; ties on start time are kept
// apart by id; Search filters before the page is cut.
func TestListPages(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	runs := []fakeRun{
		{id: "old-paused", started: at(0)},
		{id: "long-job", started: at(1), closed: at(50)},
		{id: "newest-done", started: at(10), closed: at(11)},
		{id: "mid-running", started: at(8)},
		{id: "older-done", started: at(5), closed: at(6)},
		{id: "tie-b", started: at(3), closed: at(4)},
		{id: "tie-a", started: at(3), closed: at(7)},
		{id: "oldest-done", started: at(-5), closed: at(-4)},
	}
	all := []string{"newest-done", "mid-running", "older-done", "tie-a", "tie-b", "long-job", "old-paused", "oldest-done"}
	workflow := func(id string) *commonpb.Payload {
		p, _ := converter.GetDefaultDataConverter().ToPayload(map[bool]string{true: "tied", false: "other"}[id[:3] == "tie"])
		return p
	}
	for size := 1; size <= len(all)+1; size++ {
		t.Run(fmt.Sprintf("page size %d", size), func(t *testing.T) {
			f := &fakeTemporal{runs: runs, memo: workflow}
			c := &Client{t: f}
			var got []string
			o := ListOptions{Limit: size}
			for pages := 0; ; pages++ {
				require.Less(t, pages, len(all)+1, "the listing ends")
				p, err := c.ListPage(context.Background(), o)
				require.NoError(t, err)
				require.LessOrEqual(t, len(p.Runs), size)
				for _, r := range p.Runs {
					got = append(got, r.ID)
				}
				if p.Next == "" {
					break
				}
				if pages == 0 { // a run started after the first page was read
					f.runs = append(f.runs, fakeRun{id: "newer", started: at(20)})
				}
				o.After = p.Next
			}
			require.Equal(t, all, got)
		})
	}

	c := &Client{t: &fakeTemporal{runs: runs, memo: workflow}}
	p, err := c.ListPage(context.Background(), ListOptions{Limit: 1, Search: "TIED"})
	require.NoError(t, err)
	require.Len(t, p.Runs, 1)
	require.Equal(t, "tie-a", p.Runs[0].ID)
	p, err = c.ListPage(context.Background(), ListOptions{Limit: 1, Search: "tied", After: p.Next})
	require.NoError(t, err)
	require.Equal(t, "tie-b", p.Runs[0].ID)
	require.Empty(t, p.Next, "the last match ends the listing")
	p, err = c.ListPage(context.Background(), ListOptions{Search: "done older"})
	require.NoError(t, err)
	require.Len(t, p.Runs, 1, "every word must match")
	require.Equal(t, "older-done", p.Runs[0].ID)

	_, err = c.ListPage(context.Background(), ListOptions{After: "not-a-token"})
	var inv *InvalidError
	require.ErrorAs(t, err, &inv)
	require.Contains(t, err.Error(), "first page")
}
