package console

import (
	"net/url"
	"strings"
)

// Pager is the runs list's paging: the page's filters, where it starts (After, a client page
// token) and the trail of the pages before it (Back), so that Newer goes back one page as Older
// goes on one. The links keep the filters.
type Pager struct {
	Search string `json:"q,omitempty"`
	After  string `json:"after,omitempty"`
	Back   string `json:"back,omitempty"` // the After of each earlier page but the first, "."-separated
	Next   string `json:"next,omitempty"` // the next page's token ("" : this is the last page)
	Page   int    `json:"page"`           // 1 for the newest runs
	Newer  string `json:"newerURL,omitempty"`
	Newest string `json:"newestURL,omitempty"`
	Older  string `json:"olderURL,omitempty"`

	filters url.Values
}

func newPager(q url.Values) Pager {
	p := Pager{Search: q.Get("q"), After: q.Get("after"), Back: q.Get("back"), Page: 1, filters: url.Values{}}
	for _, k := range []string{"status", "workflow", "q"} {
		if v := q.Get(k); v != "" {
			p.filters.Set(k, v)
		}
	}
	if p.After == "" {
		p.Back = ""
		return p
	}
	var trail []string
	if p.Back != "" {
		trail = strings.Split(p.Back, ".")
	}
	p.Page = len(trail) + 2
	p.Newest = p.link("", nil)
	if len(trail) == 0 {
		p.Newer = p.Newest
	} else {
		p.Newer = p.link(trail[len(trail)-1], trail[:len(trail)-1])
	}
	return p
}

// next records the token of the page after this one.
func (p *Pager) next(token string) {
	p.Next = token
	if token == "" {
		return
	}
	var trail []string
	if p.Back != "" {
		trail = strings.Split(p.Back, ".")
	}
	if p.After != "" {
		trail = append(trail, p.After)
	}
	p.Older = p.link(token, trail)
}

func (p *Pager) link(after string, trail []string) string {
	q := url.Values{}
	for k, v := range p.filters {
		q[k] = v
	}
	if after != "" {
		q.Set("after", after)
	}
	if len(trail) > 0 {
		q.Set("back", strings.Join(trail, "."))
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}
