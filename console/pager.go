package console

import (
	"net/url"
	"sort"
	"strings"
)

// Pager is the runs list's paging (and, built by listPager, the Evals and reviews lists'): the
// page's filters, where it starts (After, a client page token) and the trail of the pages before
// it (Back), so that Newer goes back one page as Older goes on one. The links keep the filters.
type Pager struct {
	Search string `json:"q,omitempty"`
	After  string `json:"after,omitempty"`
	Back   string `json:"back,omitempty"` // the After of each earlier page but the first, "."-separated
	Next   string `json:"next,omitempty"` // the next page's token ("" : this is the last page)
	Page   int    `json:"page"`           // 1 for the newest runs
	Newer  string `json:"newerURL,omitempty"`
	Newest string `json:"newestURL,omitempty"`
	Older  string `json:"olderURL,omitempty"`
	// Of names what is paged, for the pager's label ("runs", "eval reports").
	Of string `json:"-"`
	// Queue: the list starts with the longest waiting (the reviews), and its links say First,
	// Previous and Next instead of Newest, Newer and Older.
	Queue bool `json:"-"`

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
	return pageURL("/", q)
}

// pageURL is the address of path with query q.
func pageURL(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// listPager pages a list the console holds whole, newest first and sorted backwards (the eval
// reports' ids, which start with their time): a page is the size items that sort before the one
// named before (from the newest when before is ""; that item need not be in the list any more).
// Unlike a listing read through page tokens, both neighbours of a page are known from the list, so
// the links carry no trail: Older starts after this page's last item, Newer ends just before its
// first. ids[lo:hi] is the page.
func listPager(path string, ids []string, before string, size int) (p Pager, lo, hi int) {
	p = Pager{Page: 1}
	at := func(before string) string {
		if before == "" {
			return path
		}
		return pageURL(path, url.Values{"before": {before}})
	}
	if before != "" {
		lo = sort.Search(len(ids), func(i int) bool { return ids[i] < before })
		p.Page = (lo+size-1)/size + 1
		if lo > 0 { // a before that sorts ahead of every item is the first page: no First link
			p.Newest = path
		}
	}
	hi = min(lo+size, len(ids))
	if lo > 0 {
		newer := ""
		if start := lo - size; start > 0 {
			newer = ids[start-1]
		}
		p.Newer = at(newer)
	}
	if hi < len(ids) {
		p.Next = ids[hi-1]
		p.Older = at(p.Next)
	}
	return p, lo, hi
}
