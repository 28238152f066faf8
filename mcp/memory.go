package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
)

// The gateway's long-term memory (weftclient.MemoryStore): the knowledge store its tools use
// (Options.Config), in its database (Config.Database, default weft), as `weft memory` reads it.
// Who may reach which scope is weftclient.CheckMemoryScope, checked by the caller.

func (g *Gateway) memoryDB() string {
	if g.o.Config.Database != "" {
		return g.o.Config.Database
	}
	return "weft"
}

// Memories lists a scope's facts, newest first.
func (g *Gateway) Memories(ctx context.Context, scope string) ([]weftclient.MemoryFact, error) {
	list, err := g.store.Memories(ctx, g.memoryDB(), scope)
	if err != nil {
		return nil, fmt.Errorf("reading memory %s: %w", scope, err)
	}
	out := make([]weftclient.MemoryFact, len(list))
	for i, m := range list {
		out[i] = weftclient.MemoryFact{ID: m.ID, Text: m.Text, RememberedAt: m.RememberedAt}
	}
	return out, nil
}

// Remember stores text in scope as the remember tool does (embedded, once per text).
func (g *Gateway) Remember(ctx context.Context, scope, text string) (weftclient.Remembered, error) {
	res, _, err := g.tools[toolspec.Remember.Name](ctx, map[string]any{"scope": scope, "text": text, "db": g.memoryDB()})
	if err != nil {
		return weftclient.Remembered{}, fmt.Errorf("remembering in %s: %w", scope, err)
	}
	var out toolspec.RememberOut
	if b, err := json.Marshal(res); err != nil || json.Unmarshal(b, &out) != nil {
		return weftclient.Remembered{}, fmt.Errorf("remembering in %s: the tool answered %T", scope, res)
	}
	return weftclient.Remembered{ID: out.ID, Scope: out.Scope, Stored: out.Stored, Duplicate: out.Duplicate}, nil
}

// Forget forgets fact id of scope.
func (g *Gateway) Forget(ctx context.Context, scope, id string) (int64, error) {
	n, err := g.store.Forget(ctx, g.memoryDB(), scope, id)
	var ie *activities.InputError
	if errors.As(err, &ie) {
		return 0, fmt.Errorf("%s: %w", ie.Msg, weftclient.ErrNoFact)
	}
	return n, err
}

var _ weftclient.MemoryStore = (*Gateway)(nil)
