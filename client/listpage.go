package client

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ListPage is one page of a listing (Client.ListPage).
type ListPage struct {
	Runs []RunSummary `json:"runs"`
	// Next is the page token of the page after this one (ListOptions.After); "" on the last page.
	Next string `json:"next,omitempty"`
}

// ListPage lists one page of runs, newest start first, like List, and the token of the next page:
// pass it back as ListOptions.After (with the same filters) to read the runs after these. A token
// names the last run of its page (start time and id), so runs started since do not shift pages.
func (c *Client) ListPage(ctx context.Context, o ListOptions) (ListPage, error) {
	if o.Limit <= 0 {
		o.Limit = 20
	}
	o.Limit = min(o.Limit, 999) // List reads at most 1000: the page and one more
	limit := o.Limit
	o.Limit++ // one more, to know whether there is a next page
	runs, err := c.List(ctx, o)
	if err != nil {
		return ListPage{}, err
	}
	p := ListPage{Runs: runs}
	if len(runs) > limit {
		p.Runs = runs[:limit]
		p.Next = PageToken(p.Runs[limit-1])
	}
	return p, nil
}

// PageToken is the token of the page that starts after run r (ListOptions.After).
func PageToken(r RunSummary) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(r.Started.UnixNano(), 10) + "/" + r.ID))
}

// CheckPageToken reports whether token is one a listing gave (ListPage's Next, PageToken), so a
// caller can name its own flag or field for a bad one before it lists: nil for "" (the first
// page), an *InvalidError otherwise.
func CheckPageToken(token string) error {
	_, err := parsePageToken(token)
	return err
}

// pageCursor is a decoded page token: the listing goes on with runs that sort after (started, id).
type pageCursor struct {
	started time.Time
	id      string
}

func parsePageToken(token string) (*pageCursor, error) {
	if token == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	ns, id, ok := strings.Cut(string(b), "/")
	n, perr := strconv.ParseInt(ns, 10, 64)
	if err != nil || !ok || perr != nil || id == "" {
		return nil, &InvalidError{Err: fmt.Errorf("page token %q is not one a listing gave: start again from the first page", token)}
	}
	return &pageCursor{started: time.Unix(0, n), id: id}, nil
}

// query narrows a visibility query to runs started no later than the cursor (visibility may keep
// start times less precisely than the token: after() decides exactly).
func (p *pageCursor) query() string {
	return fmt.Sprintf(" AND StartTime <= %q", p.started.Add(time.Millisecond).UTC().Format(time.RFC3339Nano))
}

// after reports whether r comes after the cursor in a newest-first listing (sortNewestFirst).
func (p *pageCursor) after(r RunSummary) bool {
	if !r.Started.Equal(p.started) {
		return r.Started.Before(p.started)
	}
	return r.ID > p.id
}

// matches reports whether r passes the listing's filters that visibility cannot apply: the
// workflow name (a memo), the text searched, and the page cursor.
func (o ListOptions) matches(r RunSummary, cur *pageCursor) bool {
	if o.Workflow != "" && r.Workflow != o.Workflow {
		return false
	}
	if cur != nil && !cur.after(r) {
		return false
	}
	if q := strings.ToLower(strings.TrimSpace(o.Search)); q != "" {
		hay := strings.ToLower(r.ID + "\n" + r.Workflow + "\n" + r.Status + "\n" + r.Weft + "\n" + r.StartedBy)
		for _, w := range strings.Fields(q) {
			if !strings.Contains(hay, w) {
				return false
			}
		}
	}
	return true
}
