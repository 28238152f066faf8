package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/auth"
)

// memoryStore is a sessionStore in memory; down makes every call fail.
type memoryStore struct {
	mu    sync.Mutex
	recs  map[string]mongostore.MCPSession
	down  bool
	calls int
}

func (m *memoryStore) do(f func()) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.down {
		return errors.New("store down")
	}
	f()
	return nil
}

func (m *memoryStore) put(_ context.Context, rec mongostore.MCPSession, create bool) error {
	return m.do(func() {
		if _, ok := m.recs[rec.ID]; ok || create {
			m.recs[rec.ID] = rec
		}
	})
}

func (m *memoryStore) get(_ context.Context, id string) (rec mongostore.MCPSession, found bool, err error) {
	err = m.do(func() { rec, found = m.recs[id] })
	return rec, found, err
}

func (m *memoryStore) remove(_ context.Context, id string) error {
	return m.do(func() { delete(m.recs, id) })
}

func (m *memoryStore) prune(_ context.Context, before time.Time) error {
	return m.do(func() {
		for id, r := range m.recs {
			if r.LastSeen.Before(before) {
				delete(m.recs, id)
			}
		}
	})
}

// storeGateway is a gateway whose sessions are kept in st, and two keys (ana, bob).
func storeGateway(t *testing.T, st sessionStore, keys *auth.Keys) (*Gateway, *httptest.Server) {
	g := New(Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", Namespace: "default"})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	g.sessions.store = st
	return g, srv
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`

// TestSessionsResumeFromTheStore: a gateway on the store another one kept its sessions in takes
// the other's session id for the key that opened it, with its log level and elicitation
// capability, and not for another key (404, nothing restored); DELETE removes the record.
func TestSessionsResumeFromTheStore(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	ana, _, err := auth.GenerateNamedKey(keyFile, "ana", nil)
	require.NoError(t, err)
	bob, _, err := auth.GenerateNamedKey(keyFile, "bob", nil)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	st := &memoryStore{recs: map[string]mongostore.MCPSession{}}
	with := func(sid string) map[string]string {
		return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	}

	_, first := storeGateway(t, st, keys)
	status, hdr, out, _ := post(t, http.MethodPost, first.URL, ana, strings.NewReader(initBody), nil)
	require.Equal(t, http.StatusOK, status, out)
	sid := hdr.Get("Mcp-Session-Id")
	status, _, out, _ = post(t, http.MethodPost, first.URL, ana, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`), with(sid))
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, mongostore.MCPSession{ID: sid, Key: "ana", Level: "warning", Elicit: true, LastSeen: st.recs[sid].LastSeen}, st.recs[sid])
	first.Close()

	g, second := storeGateway(t, st, keys)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"weft_models","arguments":{}}}`
	status, _, _, _ = post(t, http.MethodPost, second.URL, bob, strings.NewReader(call), with(sid))
	require.Equal(t, http.StatusNotFound, status, "bob with ana's session id")
	require.False(t, g.sessions.owns(sid, "bob"))
	_, restored := g.levels.set.Load(sid)
	require.False(t, restored, "nothing of ana's session is restored for bob")

	status, _, out, _ = post(t, http.MethodPost, second.URL, ana, strings.NewReader(call), with(sid))
	require.Equal(t, http.StatusOK, status, out)
	require.Contains(t, out, `"result"`)
	level, _ := g.levels.set.Load(sid)
	require.Equal(t, mcplib.LoggingLevelWarning, level)
	_, elicit := g.caps.elicit.Load(sid)
	require.True(t, elicit)

	status, _, out, _ = post(t, http.MethodDelete, second.URL, ana, nil, with(sid))
	require.Equal(t, http.StatusOK, status, out)
	require.NotContains(t, st.recs, sid, "DELETE removes the record")
	status, _, _, _ = post(t, http.MethodPost, second.URL, ana, strings.NewReader(call), with(sid))
	require.Equal(t, http.StatusNotFound, status)
}

// TestSessionStoreDown: a store that fails is left alone for storeRest, so initializes are not
// each held for its timeout; sessions keep working in memory meanwhile.
func TestSessionStoreDown(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	ana, _, err := auth.GenerateNamedKey(keyFile, "ana", nil)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	st := &memoryStore{recs: map[string]mongostore.MCPSession{}, down: true}
	_, srv := storeGateway(t, st, keys)
	for range 3 {
		status, hdr, out, _ := post(t, http.MethodPost, srv.URL, ana, strings.NewReader(initBody), nil)
		require.Equal(t, http.StatusOK, status, out)
		status, _, out, _ = post(t, http.MethodPost, srv.URL, ana, strings.NewReader(pingBody), map[string]string{"Mcp-Session-Id": hdr.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-06-18"})
		require.Equal(t, http.StatusOK, status, out)
	}
	require.Equal(t, 1, st.calls, "one failed write, then the store rests")
}
