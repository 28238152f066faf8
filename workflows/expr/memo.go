package expr

import "sync"

// memo caches a pure function of a string. Compiled programs and templates are immutable, so one
// result serves every caller: definitions repeat templates and conditions ({{ inputs.query }} in
// many steps) and the interpreter recompiles a definition on every replay. Failed compiles are
// not cached. The memo starts over when it holds limit entries.
type memo[T any] struct {
	mu    sync.Mutex
	m     map[string]T
	limit int
}

func newMemo[T any](limit int) *memo[T] { return &memo[T]{m: map[string]T{}, limit: limit} }

func (c *memo[T]) get(key string, build func(string) (T, error)) (T, error) {
	c.mu.Lock()
	v, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := build(key)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if len(c.m) >= c.limit {
		c.m = map[string]T{}
	}
	c.m[key] = v
	c.mu.Unlock()
	return v, nil
}

func (c *memo[T]) clear() {
	c.mu.Lock()
	c.m = map[string]T{}
	c.mu.Unlock()
}

var (
	programs  = newMemo[*Program](8192)
	templates = newMemo[*Template](8192)
)

// ClearCache empties the compile memos (benchmarks measure cold compiles with it).
func ClearCache() {
	programs.clear()
	templates.clear()
}
