package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
)

// TestTemplatesReadStoredValues: with a 4 KiB claim-check threshold, two http steps download a
// 64 KB page and a JSON document with a 64 KB field (both kept in the store). A template's
// len(), a field read, a slice, a when condition, a forEach over a stored list, an inline data
// step and the workflow output all see the values, not the references; a value passed whole and
// text around a stored value both reach the next tool whole. History holds no part of the values,
// and the run replays.
func TestTemplatesReadStoredValues(t *testing.T) {
	c := dial(t)
	queue := "claim-check-eval"
	page := strings.Repeat("Durable workflows keep their state. ", 64<<10/36)
	doc, err := json.Marshal(map[string]any{"title": "Rate limits", "content": page, "sections": []string{"429", "Retry-After", "quotas"}})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/doc" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(doc)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	cfg := activities.Config{MongoDBURI: store.URI, Database: "claimcheck", HTTPAllow: []string{"127.0.0.1"}, ClaimCheckAbove: 4 << 10}
	startWorkerWithConfig(t, queue, cfg, map[string]activities.Handler{
		"chunk": func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
			return map[string]any{"count": len([]rune(in["text"].(string)))}, nil, nil
		},
	})
	def := `{"name":"stored-values","inputs":{"url":{"type":"string"}},"steps":[
	  {"id":"get","tool":"http","inputs":{"url":"{{ inputs.url }}/page"}},
	  {"id":"doc","tool":"http","inputs":{"url":"{{ inputs.url }}/doc"}},
	  {"id":"size","tool":"template","inputs":{"text":"{{ len(get.output.text) }}"}},
	  {"id":"long","tool":"template","condition":"{{ len(get.output.text) > 4096 }}","inputs":{"text":"long"}},
	  {"id":"short","tool":"template","condition":"{{ get.output.text.length <= 4096 }}","inputs":{"text":"short"}},
	  {"id":"each","tool":"chunk","forEach":"{{ doc.output.body.sections }}","inputs":{"text":"{{ item }}: {{ doc.output.body.title }}"}},
	  {"id":"pick","tool":"filter","inputs":{"array":"{{ doc.output.body.sections }}","condition":"len(item) > 3"}},
	  {"id":"whole","tool":"chunk","inputs":{"text":"{{ get.output.text }}"}},
	  {"id":"framed","tool":"chunk","inputs":{"text":"Page: {{ get.output.text }}"}}],
	  "output":{"length":"{{ len(get.output.text) }}","size":"{{ size.output.text }}","head":"{{ get.output.text[0:8] }}",
	    "title":"{{ doc.output.body.title }}","content":"{{ doc.output.body.content.length }}","long":"{{ long.status }}",
	    "short":"{{ short.status }}","each":"{{ each.output.results[1].count }}","picked":"{{ pick.output.results }}",
	    "whole":"{{ whole.output.count }}","framed":"{{ framed.output.count }}","status":"{{ get.output.status }}"}}`
	code, out, errOut := weft(t, queue, "run", writeTemp(t, def), "--id", "history-stored-values", "--input", "url="+srv.URL, "--json")
	require.Equal(t, 0, code, out+errOut)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	n := len([]rune(page))
	want := map[string]any{
		"length": n, "size": strconv.Itoa(n), "head": "Durable ", "title": "Rate limits",
		"content": n, "long": "completed", "short": "skipped", "each": len("Retry-After: Rate limits"),
		"picked": []any{"Retry-After", "quotas"}, "whole": n, "framed": n + len("Page: "), "status": 200,
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(res["output"])
	require.JSONEq(t, string(wantJSON), string(gotJSON))

	// The values stayed out of history: references and the evaluations' small results only.
	data := historyJSON(t, c, "history-stored-values")
	hist := historyPayloads(t, data)
	require.Contains(t, hist, `"$weftBlob"`, "payloads decoded")
	require.NotContains(t, hist, page[:2048], "the page is not in history")
	require.NotContains(t, hist, strings.Repeat("Durable workflows keep their state. ", 20), "nor any part of it larger than a preview")

	// The run replays (with -update-histories it is kept for the workflows package's replay test).
	replayAndStore(t, "history-stored-values", "stored-values", data)
}

// historyPayloads is the text of every payload in a history (protojson shows them in base64).
func historyPayloads(t *testing.T, hist []byte) string {
	var b strings.Builder
	for _, m := range regexp.MustCompile(`"data":\s*"([A-Za-z0-9+/=]+)"`).FindAllSubmatch(hist, -1) {
		data, err := base64.StdEncoding.DecodeString(string(m[1]))
		require.NoError(t, err)
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}
