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
// each step's STEP_STARTED before its STEP_FINISHED, the review as CUSTOM events, a state
// snapshot and JSON Patch deltas that end with every step completed, and RUN_FINISHED with the run's output last; an unknown run gets RUN_ERROR.
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
	// the state: one snapshot, then JSON Patch deltas that, applied in order, end completed
	var state map[string]any
	for _, ev := range r.events {
		switch ev["type"] {
		case "STATE_SNAPSHOT":
			require.Nil(t, state, "one STATE_SNAPSHOT, then deltas: %v", types)
			state = ev["snapshot"].(map[string]any)
		case "STATE_DELTA":
			require.NotNil(t, state, "a STATE_DELTA after the snapshot: %v", types)
			for _, op := range ev["delta"].([]any) {
				op := op.(map[string]any)
				path := strings.Split(strings.TrimPrefix(op["path"].(string), "/"), "/")
				at := state
				if len(path) == 2 {
					at = state[path[0]].(map[string]any)
				}
				_, exists := at[path[len(path)-1]]
				require.True(t, exists || op["op"] == "add", "%v applies to the state %v", op, state)
				at[path[len(path)-1]] = op["value"]
			}
		}
	}
	require.Contains(t, pos, "STATE_DELTA")
	require.Equal(t, "completed", state["status"])
	require.Equal(t, map[string]any{"split": "completed", "draft": "completed", "approve": "completed", "publish": "completed"}, state["steps"])

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
