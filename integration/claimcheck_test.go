package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
)

// TestLargeOutputsStayOutOfHistory: an http step that downloads 5 MB and a tool that returns
// 20 MB both run (Temporal refuses payloads over 2 MB); the values are kept in the knowledge
// store, the next steps receive them whole, templates see the values and status shows a
// reference.
func TestLargeOutputsStayOutOfHistory(t *testing.T) {
	c := dial(t)
	queue := "claim-check"
	page := strings.Repeat("Durable workflows keep their state. ", 5<<20/36)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	huge := strings.Repeat("x", 20<<20)
	cfg := activities.Config{MongoDBURI: store.URI, Database: "claimcheck", HTTPAllow: []string{"127.0.0.1"}}
	startWorkerWithConfig(t, queue, cfg, map[string]activities.Handler{
		"embed": func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
			return map[string]any{"text": huge, "dimensions": 1}, nil, nil
		},
		"chunk": func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
			return map[string]any{"count": len([]rune(in["text"].(string)))}, nil, nil
		},
	})
	def := `{"name":"large","inputs":{"url":{"type":"string"}},"steps":[
	  {"id":"page","tool":"http","inputs":{"url":"{{ inputs.url }}","maxBytes":10485760}},
	  {"id":"measure","tool":"chunk","inputs":{"text":"{{ page.output.text }}"}},
	  {"id":"huge","tool":"embed","inputs":{"text":"huge"}}],
	  "output":{"pageLength":"{{ measure.output.count }}","hugeLength":"{{ huge.output.text.length }}"}}`
	code, out, errOut := weft(t, queue, "run", writeTemp(t, def), "--id", "large-1", "--input", "url="+srv.URL, "--json")
	require.Equal(t, 0, code, out+errOut)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	output := res["output"].(map[string]any)
	require.EqualValues(t, len([]rune(page)), output["pageLength"], "the next step received the 5 MB body whole")
	require.EqualValues(t, 20<<20, output["hugeLength"], "a 20 MB output ran; templates see the value")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := weftclient.New(c, queue).State(ctx, "large-1")
	require.NoError(t, err)
	body := st.Steps[0].Output.GetStructValue().AsMap()["text"].(map[string]any)
	require.NotEmpty(t, body[activities.BlobKey], "history holds a reference")
	require.EqualValues(t, len(page)+2, body["size"], "the JSON string's size")
	require.Less(t, len(historyJSON(t, c, "large-1")), 1<<20, "history stayed small")
}

// TestForEachOf50MB: a forEach whose items produce 50 MB in total runs; each item's output is
// kept in the store, history holds references only, and the next step reads an item whole.
func TestForEachOf50MB(t *testing.T) {
	c := dial(t)
	queue := "claim-check-foreach"
	cfg := activities.Config{MongoDBURI: store.URI, Database: "claimcheck"}
	startWorkerWithConfig(t, queue, cfg, map[string]activities.Handler{
		"embed": func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
			return map[string]any{"text": strings.Repeat(in["text"].(string)[:1], 1<<20), "dimensions": 1}, nil, nil
		},
		"chunk": func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
			return map[string]any{"count": len(in["text"].(string))}, nil, nil
		},
	})
	items := make([]string, 50)
	for i := range items {
		items[i] = string(rune('a' + i%26))
	}
	b, _ := json.Marshal(items)
	def := `{"name":"big-foreach","inputs":{"items":{"type":"array","default":` + string(b) + `}},"steps":[
	  {"id":"each","tool":"embed","forEach":"{{ inputs.items }}","concurrency":8,"inputs":{"text":"{{ item }}"}},
	  {"id":"last","tool":"chunk","inputs":{"text":"{{ each.output.results[49].text }}"}}],
	  "output":{"items":"{{ each.output.count }}","lastSize":"{{ last.output.count }}"}}`
	code, out, errOut := weft(t, queue, "run", writeTemp(t, def), "--id", "big-foreach-1", "--json")
	require.Equal(t, 0, code, out+errOut)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	output := res["output"].(map[string]any)
	require.EqualValues(t, 50, output["items"])
	require.EqualValues(t, 1<<20, output["lastSize"], "the next step read the 50th item's 1 MB whole")
	require.Less(t, len(historyJSON(t, c, "big-foreach-1")), 2<<20, "50 MB of outputs, references in history")
}
