package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
)

// Long-term memory (what agents remembered with remember), within the caller's own scopes
// (weftclient.CheckMemoryScope: a scope ends with its owner's name), in the gateway's knowledge
// store (Options.Memory).

// MemoryIn names a scope.
type MemoryIn struct {
	Scope string `query:"scope" json:"-" jsonschema:"the memory scope: one of your own, ending with your key's name (support:ana is ana's)"`
}

// MemoryList is a scope's facts.
type MemoryList struct {
	Scope string                  `json:"scope"`
	Facts []weftclient.MemoryFact `json:"facts" jsonschema:"newest first"`
}

// RememberIn adds a fact.
type RememberIn struct {
	Scope string `json:"scope" jsonschema:"one of your own scopes, ending with your key's name"`
	Text  string `json:"text" jsonschema:"the fact (at most 20000 characters)"`
}

// ForgetIn forgets a fact.
type ForgetIn struct {
	ID    string `path:"id" json:"-" jsonschema:"the fact's id (GET /v1/memory)"`
	Scope string `query:"scope" json:"-" jsonschema:"the scope that holds it"`
}

// ForgetOut says what was forgotten.
type ForgetOut struct {
	ID     string `json:"id"`
	Scope  string `json:"scope"`
	Forgot int64  `json:"forgot" jsonschema:"how many facts were forgotten (1)"`
}

// memory is the store, once who may reach scope (pointer: where scope was sent).
func (c *call) memory(scope, pointer string) (weftclient.MemoryStore, error) {
	if scope == "" {
		return nil, invalid(pointer, "send scope: one of your own memory scopes, ending with your key's name (support:"+c.who.Name+")")
	}
	if err := weftclient.CheckMemoryScope(scope, c.caller()); err != nil {
		var ie *weftclient.InvalidError
		if errors.As(err, &ie) {
			return nil, invalid(pointer, err.Error())
		}
		return nil, err
	}
	if c.api.o.Memory == nil {
		return nil, kindUnavailable.problem("this server has no knowledge store for memory: start weft mcp with MONGODB_URI set")
	}
	return c.api.o.Memory, nil
}

func listMemory(c *call, in MemoryIn) (MemoryList, error) {
	m, err := c.memory(in.Scope, "?scope")
	if err != nil {
		return MemoryList{}, err
	}
	facts, err := m.Memories(c.ctx, in.Scope)
	if err != nil {
		return MemoryList{}, err
	}
	if facts == nil {
		facts = []weftclient.MemoryFact{}
	}
	return MemoryList{Scope: in.Scope, Facts: facts}, nil
}

func addMemory(c *call, in RememberIn) (weftclient.Remembered, error) {
	if in.Text == "" || len([]rune(in.Text)) > 20000 {
		return weftclient.Remembered{}, invalid("/text", fmt.Sprintf("text of %d characters: send the fact, 1 to 20000 characters", len([]rune(in.Text))))
	}
	m, err := c.memory(in.Scope, "/scope")
	if err != nil {
		return weftclient.Remembered{}, err
	}
	return m.Remember(c.ctx, in.Scope, in.Text)
}

func forgetMemory(c *call, in ForgetIn) (ForgetOut, error) {
	m, err := c.memory(in.Scope, "?scope")
	if err != nil {
		return ForgetOut{}, err
	}
	n, err := m.Forget(c.ctx, in.Scope, in.ID)
	if err != nil {
		if errors.Is(err, weftclient.ErrNoFact) {
			return ForgetOut{}, kindNotFound.problem(err.Error())
		}
		return ForgetOut{}, err
	}
	return ForgetOut{ID: in.ID, Scope: in.Scope, Forgot: n}, nil
}

func memoryRoutes() []route {
	return []route{
		op(http.MethodGet, "/v1/memory", auth.RoleReader, "listMemory", "memory", "List a memory scope",
			"The facts of one of the caller's memory scopes (a scope ends with its owner's key name; an admin key reads any), newest first, as `weft memory list --json` prints them.",
			[]int{http.StatusBadRequest}, listMemory),
		op(http.MethodPost, "/v1/memory", auth.RoleRunner, "addMemory", "memory", "Remember a fact",
			"Stores a fact in one of the caller's memory scopes as an agent's remember does (the same text twice is stored once: stored false). Agents of chat sessions with that scope recall it.",
			[]int{http.StatusBadRequest}, addMemory),
		op(http.MethodDelete, "/v1/memory/{id}", auth.RoleRunner, "forgetMemory", "memory", "Forget a fact",
			"Forgets the fact with the id from one of the caller's memory scopes (`scope`), as `weft memory forget` does.",
			[]int{http.StatusBadRequest, http.StatusNotFound}, forgetMemory),
	}
}
