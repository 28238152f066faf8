package client

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/runwire"
)

// MemoryFact is one fact of long-term memory (what an agent's remember stored), as `weft memory
// list --json` prints it.
type MemoryFact struct {
	ID           string `json:"id" jsonschema:"the fact's id: forget it with it"`
	Text         string `json:"text"`
	RememberedAt string `json:"rememberedAt" jsonschema:"when it was first remembered (RFC 3339)"`
}

// Remembered is what remembering a fact did.
type Remembered struct {
	ID        string `json:"id"`
	Scope     string `json:"scope"`
	Stored    bool   `json:"stored" jsonschema:"false when the scope held the same text already"`
	Duplicate bool   `json:"duplicate"`
}

// MemoryStore is long-term memory in the knowledge store: the MCP gateway's (mcp.Gateway) serves
// /v1/memory.
type MemoryStore interface {
	Memories(ctx context.Context, scope string) ([]MemoryFact, error)
	Remember(ctx context.Context, scope, text string) (Remembered, error)
	// Forget forgets the fact id of scope and says how many it forgot (0: none had the id).
	Forget(ctx context.Context, scope, id string) (int64, error)
}

// ErrNoFact: the scope holds no fact with the id Forget was given.
var ErrNoFact = errors.New("no such memory fact")

var memoryScopeRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$`)

// CheckMemoryScope says whether who may read, add to and forget memory of scope: a scope is its
// owner's (runwire.ScopeOwner: its last ":" segment, "support:ana" is ana's), the rule a run
// applies at each remember and recall of a client's chat. The operator (who nil) and an admin key
// reach every scope. A scope of the wrong form is an InvalidError, another's a RefusedError
// (Access).
func CheckMemoryScope(scope string, who *auth.Identity) error {
	if !memoryScopeRE.MatchString(scope) {
		return &InvalidError{Err: fmt.Errorf("memory scope %q: use letters, digits and . _ : @ / - (up to 200), ending with your key's name, e.g. support:ana", scope)}
	}
	if who == nil || who.Has(auth.RoleAdmin) || runwire.ScopeOwner(scope) == who.Name {
		return nil
	}
	return &RefusedError{Access: true, Msg: fmt.Sprintf("memory scope %q does not belong to %s: a key reaches only memory of its own, a scope that ends with its name (%q, or \"NAME:%s\")", scope, who.Name, who.Name, who.Name)}
}
