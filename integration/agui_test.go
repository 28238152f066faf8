package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
)

// TestAGUIStreamOfARealRun: the console serves a run's events as AG-UI events over SSE at
// /runs/{id}/agui (POST with a RunAgentInput, as AG-UI's HttpAgent sends it): RUN_STARTED first,
// each step's STEP_STARTED before its STEP_FINISHED, the review as CUSTOM events, state
// snapshots, and RUN_FINISHED with the run's output last; an unknown run gets RUN_ERROR.
func TestAGUIStreamOfARealRun(t *testing.T) {
	e := startConsole(t, "agui-q")
	id := e.start(t)

	type result struct {
		events []map[string]any
		err    error
	}
	done := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/runs/"+id+"/agui", strings.NewReader(`{"threadId":"`+id+`","runId":"`+id+`","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}`))
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		var evs []map[string]any
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					done <- result{err: err}
					return
				}
				evs = append(evs, m)
			}
		}
		done <- result{events: evs, err: sc.Err()}
	}()
	_, err := e.client.Review(context.Background(), id, weftclient.Decision{Decision: "approve", Reviewer: "ana"})
	require.NoError(t, err)
	r := <-done
	require.NoError(t, r.err)

	var types []string
	pos := map[string]int{}
	for i, ev := range r.events {
		typ := ev["type"].(string)
		key := typ
		if s, ok := ev["stepName"].(string); ok {
			key += " " + s
		}
		if n, ok := ev["name"].(string); ok {
			key += " " + n
		}
		types = append(types, key)
		if _, seen := pos[key]; !seen {
			pos[key] = i
		}
	}
	require.Equal(t, "RUN_STARTED", types[0], types)
	require.Equal(t, "RUN_FINISHED", types[len(types)-1], types)
	for _, step := range []string{"split", "draft", "approve", "publish"} {
		require.Contains(t, pos, "STEP_STARTED "+step, types)
		require.Less(t, pos["STEP_STARTED "+step], pos["STEP_FINISHED "+step], types)
	}
	require.Less(t, pos["STEP_FINISHED approve"], pos["STEP_STARTED publish"], types)
	require.Less(t, pos["CUSTOM weft.review_requested"], pos["CUSTOM weft.review_decided"], types)
	require.Contains(t, pos, "STATE_SNAPSHOT")
	fin := r.events[len(r.events)-1]
	require.Equal(t, id, fin["runId"])
	require.Contains(t, fin["result"], "<img src=x", "the run's output is the result")
	snap := r.events[len(r.events)-2]["snapshot"].(map[string]any)
	require.Equal(t, "completed", snap["status"])

	resp, err := http.Get(e.url + "/runs/no-such-run/agui")
	require.NoError(t, err)
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	require.Contains(t, b.String(), `"type":"RUN_ERROR"`, b.String())
}
