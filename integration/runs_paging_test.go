package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestRunsPagesAndSearch: `weft runs` and MCP's weft_executions page through more runs than a
// page holds with the same tokens (client.ListPage): every run once, newest first, a run started
// between pages does not shift them, the last page has no next, and search keeps to its runs.
func TestRunsPagesAndSearch(t *testing.T) {
	const queue, total = "runs-paging", 5
	c := dial(t)
	startWorker(t, c, queue, nil)
	wc := weftclient.New(c, queue)
	w, err := dsl.Load("runs-paging.json", []byte(`{"name":"runs-paging","steps":[{"id":"say","tool":"template","inputs":{"text":"hi"}}]}`))
	require.NoError(t, err)
	start := func(i int) string {
		run, err := wc.Start(context.Background(), w, weftclient.StartOptions{ID: fmt.Sprintf("runs-paging-%d-%d", i, time.Now().UnixNano()), Source: "runs-paging"})
		require.NoError(t, err)
		_, err = wc.Result(context.Background(), run.ID)
		require.NoError(t, err)
		return run.ID
	}
	var ids []string // newest first
	for i := range total {
		ids = append([]string{start(i)}, ids...)
	}
	// visibility is eventually consistent
	require.Eventually(t, func() bool {
		code, out, _ := weft(t, "", "runs", "--search", "runs-paging", "--limit", "100", "--json")
		var runs []weftclient.RunSummary
		return code == 0 && json.Unmarshal([]byte(out), &runs) == nil && len(runs) == total
	}, 20*time.Second, 100*time.Millisecond)

	t.Run("weft runs", func(t *testing.T) {
		more := regexp.MustCompile(`(?m)^more: weft runs --limit 2 --search runs-paging --after (\S+)$`)
		var seen []string
		args := []string{"runs", "--limit", "2", "--search", "runs-paging"}
		for page := 0; ; page++ {
			require.Less(t, page, total, "the pages end")
			code, out, errOut := weft(t, "", args...)
			require.Equal(t, 0, code, out+errOut)
			for _, line := range strings.Split(out, "\n") {
				if id, _, ok := strings.Cut(line, " "); ok && strings.HasPrefix(id, "runs-paging-") {
					seen = append(seen, id)
				}
			}
			m := more.FindStringSubmatch(out)
			if m == nil {
				require.NotContains(t, out, "more:", "the last page says no more")
				break
			}
			if page == 0 {
				start(99) // a run started meanwhile is newer than every page after the first
			}
			args = []string{"runs", "--limit", "2", "--search", "runs-paging", "--after", m[1]}
		}
		require.Equal(t, ids, seen, "every run once, newest first")

		code, _, errOut := weft(t, "", "runs", "--after", "bogus")
		require.Equal(t, 2, code)
		require.Contains(t, errOut, `--after: page token "bogus" is not one a listing gave`)
	})

	t.Run("weft_executions", func(t *testing.T) {
		keyFile := filepath.Join(t.TempDir(), "keys.json")
		key, _, err := auth.GenerateNamedKey(keyFile, "root", []string{"admin"})
		require.NoError(t, err)
		keys, err := auth.LoadKeys(keyFile)
		require.NoError(t, err)
		g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue})
		srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
		defer srv.Close()
		s := newMCPSession(t, srv.URL+"/mcp", key, "paging")
		// the run started between the CLI's pages is listed too (visibility is eventually consistent)
		require.Eventually(t, func() bool {
			out, _, isErr := s.call("weft_executions", map[string]any{"limit": 100, "search": "runs-paging"})
			return !isErr && len(listedIDs(out)) == total+1
		}, 20*time.Second, 100*time.Millisecond)
		args := map[string]any{"limit": 2, "search": "runs-paging"}
		var seen []string
		for page := 0; ; page++ {
			require.Less(t, page, total+2, "the pages end")
			out, msg, isErr := s.call("weft_executions", args)
			require.False(t, isErr, msg)
			seen = append(seen, listedIDs(out)...)
			next, _ := out["nextCursor"].(string)
			if next == "" {
				break
			}
			args = map[string]any{"limit": 2, "search": "runs-paging", "cursor": next}
		}
		require.Len(t, seen, total+1, "the run started meanwhile is listed too, on the first page")
		require.Equal(t, ids, seen[1:], "every run once, newest first")
		require.False(t, slices.Contains(seen[1:], seen[0]))

		_, msg, isErr := s.call("weft_executions", map[string]any{"cursor": "bogus"})
		require.True(t, isErr)
		require.Contains(t, msg, `cursor: page token "bogus" is not one a listing gave`)
	})
}
