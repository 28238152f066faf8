package dsl

import (
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/weftworks/weft/activities/toolspec"
)

// compiled memoises Load for the interpreter: every run of a workflow (and every replay of a run
// after the worker's cache evicted it) compiles the same definition, and compiling is a pure
// function of the file name and bytes, so the result can be shared. A compiled Workflow is not
// modified after Load returns.
var compiled = struct {
	sync.Mutex
	m map[[32]byte]*Workflow
}{m: map[[32]byte]*Workflow{}}

// compiledCacheSize bounds the memo; when full it starts over (definitions in use come back at
// once, at the cost of one compile each).
const compiledCacheSize = 512

// LoadCached is Load memoised by the file name and content. Only successful compiles are kept;
// errors are computed each time (they are rare and carry their positions).
func LoadCached(file string, data []byte) (*Workflow, error) {
	return loadCached(file, data, false)
}

// LoadAcceptedCached is LoadAccepted memoised the same way.
func LoadAcceptedCached(file string, data []byte) (*Workflow, error) {
	return loadCached(file, data, true)
}

func loadCached(file string, data []byte, accepted bool) (*Workflow, error) {
	h := sha256.New()
	if accepted {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
	// the registry's generation: a compile depends on the tool schemas (changed only by tests)
	_, _ = fmt.Fprintf(h, "%d\x00", toolspec.Generation())
	h.Write([]byte(file))
	h.Write([]byte{0})
	h.Write(data)
	var key [32]byte
	copy(key[:], h.Sum(nil))
	compiled.Lock()
	w, ok := compiled.m[key]
	compiled.Unlock()
	if ok {
		return w, nil
	}
	w, err := load(file, data, loadOptions{accepted: accepted})
	if err != nil {
		return nil, err
	}
	compiled.Lock()
	if len(compiled.m) >= compiledCacheSize {
		clear(compiled.m)
	}
	compiled.m[key] = w
	compiled.Unlock()
	return w, nil
}
