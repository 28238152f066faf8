package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/starter"
)

// TestStreamThroughAWorkerCrash: a worker is killed with SIGKILL while its model call streams
// the answer; another worker runs the call again (after the llm heartbeat timeout) and it streams
// the same answer from its start. Every client is told the answer restarts and ends with it once,
// never the abandoned text with the answer after it: client.Stream's deltas kept by attempt (the
// new attempt's first delta Restarted, at offset 0), the console's AG-UI stream as the public
// AG-UI client accepts and applies it (the abandoned message named in weft.text_restarted: its
// messages less that one hold the answer once), the console run page's snapshots (the answer so far,
// the new attempt marked) and weft run's printed text (the new attempt on a line of its own,
// marked restarted).
func TestStreamThroughAWorkerCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	queue := "stream-crash"
	id := "stream-crash-1"
	answer := "Retries back off exponentially from one second, doubling each time, and stop after five attempts; a 429 waits for its Retry-After first."
	var mu sync.Mutex
	sent := "" // what the model sent of its first answer
	fake := fakellm.New(
		fakellm.Reply{Text: answer, ChunkDelay: 150 * time.Millisecond},
		fakellm.Reply{Text: answer, ChunkDelay: 20 * time.Millisecond},
	)
	fake.Sent = func(soFar string) {
		mu.Lock()
		defer mu.Unlock()
		if len(fake.Requests()) == 1 {
			sent = soFar
		}
	}
	defer fake.Close()
	c := dial(t)
	se := &sideEffects{path: filepath.Join(t.TempDir(), "effects.log")}
	proc := startCrashWorker(t, queue, se, "OPENAI_BASE_URL="+fake.BaseURL, "WEFT_CHAT_MODEL=m")
	wc := weftclient.New(c, queue)
	s, err := console.New(console.Options{Client: wc, WorkflowsDir: t.TempDir(), Reviewer: "console-test", PollInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "answer.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"crash-stream","steps":[
	  {"id":"answer","tool":"llm","inputs":{"prompt":"How do retries work?"}}],"output":"{{ answer.output.text }}"}`), 0o644))

	// weft run starts the run and prints it as it goes
	var cliOut, cliErr syncBuffer
	cliDone := make(chan int, 1)
	go func() {
		cliDone <- starter.Execute([]string{"run", file, "--id", id, "--address", server.Address, "--namespace", server.Namespace, "--task-queue", queue},
			strings.NewReader(""), &cliOut, &cliErr)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.Eventually(t, func() bool { _, err := wc.Describe(ctx, id); return err == nil }, 30*time.Second, 20*time.Millisecond, "weft run started the run: %s", cliErr.String())

	// a Go program follows it
	var deltas []events.Event
	var finished string
	streamed := make(chan error, 1)
	go func() {
		_, err := wc.Stream(ctx, id, weftclient.StreamOptions{DeltaInterval: 50 * time.Millisecond}, func(e events.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch e.Type {
			case events.LLMDelta:
				deltas = append(deltas, e)
			case events.LLMFinished:
				finished = e.Text
			}
		})
		streamed <- err
	}()
	// an AG-UI frontend follows it: the public AG-UI client (@ag-ui/client, check.mjs), which
	// verifies the stream and applies it to its messages
	var agui []map[string]any
	var aguiEnd *aguiLine
	var aguiErr bytes.Buffer
	aguiDone := make(chan error, 1)
	cmd := exec.CommandContext(ctx, "node", aguiCheck(t), srv.URL+"/runs/"+id+"/agui")
	cmd.Stderr = &aguiErr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l aguiLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				aguiDone <- err
				return
			}
			mu.Lock()
			if l.Event != nil {
				agui = append(agui, l.Event)
			} else {
				aguiEnd = &l
			}
			mu.Unlock()
		}
		if err := sc.Err(); err != nil {
			aguiDone <- err
			return
		}
		aguiDone <- cmd.Wait()
	}()
	// the console's run page follows it (its snapshots carry the streaming text)
	type pageText struct {
		Text    string
		Attempt int32
	}
	var page []pageText
	pageDone := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/runs/"+id+"/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			pageDone <- err
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		kind := ""
		for sc.Scan() {
			if k, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				kind = k
			}
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && kind == "snapshot" {
				var snap console.Snapshot
				if err := json.Unmarshal([]byte(data), &snap); err != nil {
					pageDone <- err
					return
				}
				if text, ok := snap.Streaming["answer"]; ok {
					mu.Lock()
					page = append(page, pageText{text, snap.StreamingAttempt["answer"]})
					mu.Unlock()
				}
			}
		}
		pageDone <- sc.Err()
	}()

	// Every client has shown some of the answer: the worker dies mid-answer.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		aguiText := false
		for _, a := range agui {
			aguiText = aguiText || a["type"] == "TEXT_MESSAGE_CONTENT"
		}
		return len(deltas) > 0 && aguiText && len(page) > 0 && strings.Contains(cliOut.String(), "  … answer: ")
	}, 30*time.Second, 20*time.Millisecond, "every client showed text before the crash: %s", cliOut.String())
	proc.kill(t)
	mu.Lock()
	require.NotEqual(t, answer, sent, "the worker died mid-answer")
	mu.Unlock()
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "m"}, nil)

	res, err := wc.Result(ctx, id)
	require.NoError(t, err)
	require.Equal(t, `"`+answer+`"`, protoJSON(t, res.Output))
	require.Len(t, fake.Requests(), 2, "the model call ran again on the new worker")
	for _, ch := range []chan error{aguiDone, streamed, pageDone} {
		select {
		case err := <-ch:
			require.NoError(t, err, "check.mjs: %s", aguiErr.String()) // aguiDone first: check.mjs has ended
		case <-ctx.Done():
			t.Fatal("a follower did not end with the run")
		}
	}
	select {
	case code := <-cliDone:
		require.Equal(t, 0, code, cliErr.String())
	case <-ctx.Done():
		t.Fatal("weft run did not end with the run")
	}
	mu.Lock()
	defer mu.Unlock()

	// Go: the text kept by attempt; the restart says so, and the last attempt is the answer once
	texts := map[int32]string{}
	var last int32
	var restarts []int32
	shown := "" // what a consumer that discards on Restarted shows
	all := ""   // what one that appends every delta would show
	for _, e := range deltas {
		require.Equal(t, "answer", e.Step)
		require.GreaterOrEqual(t, e.Attempt, last, "attempts only go up")
		if e.Restarted {
			restarts = append(restarts, e.Attempt)
			require.Equal(t, 0, e.Offset, "a restarted attempt starts at offset 0")
			shown = ""
		}
		require.LessOrEqual(t, e.Offset, len(texts[e.Attempt]), "attempt %d's text goes on where it was", e.Attempt)
		texts[e.Attempt] = texts[e.Attempt][:e.Offset] + e.Text
		shown = shown[:min(len(shown), e.Offset)] + e.Text
		all += e.Text
		last = e.Attempt
	}
	require.Equal(t, []int32{last}, restarts, "one restart, the last attempt's first delta: %v", texts)
	require.Greater(t, last, int32(1))
	require.Equal(t, answer, texts[last], "the last attempt adds up to the answer")
	require.Equal(t, answer, shown, "shown once")
	require.NotEqual(t, answer, all, "the abandoned attempt streamed text too: without the restart it would be doubled")
	require.Equal(t, answer, finished)

	// AG-UI: the messages less the abandoned ones hold the answer once
	msgs := map[string]string{}
	var order []string
	dropped := map[string]bool{}
	for _, a := range agui {
		switch a["type"] {
		case "TEXT_MESSAGE_START":
			order = append(order, a["messageId"].(string))
		case "TEXT_MESSAGE_CONTENT":
			msgs[a["messageId"].(string)] += a["delta"].(string)
		case "CUSTOM":
			if a["name"] == "weft.text_restarted" {
				dropped[a["value"].(map[string]any)["messageId"].(string)] = true
			}
		}
	}
	require.Len(t, order, 2, "a message per attempt: %v", msgs)
	require.True(t, dropped[order[0]], "the abandoned message is named: %v", agui)
	kept := ""
	for _, m := range order {
		if !dropped[m] {
			kept += msgs[m]
		}
	}
	require.Equal(t, answer, kept)
	require.Equal(t, "RUN_FINISHED", agui[len(agui)-1]["type"])
	require.Contains(t, aguiErr.String(), "the AG-UI client accepted", "no error or warning from the client")
	// the client's messages: the abandoned one (a generic client keeps it) and the answer, once
	require.NotNil(t, aguiEnd)
	var contents []string
	keptAbandoned := false
	for _, m := range aguiEnd.Agent.Messages {
		keptAbandoned = keptAbandoned || m["id"] == order[0]
		if c, ok := m["content"].(string); ok && !dropped[m["id"].(string)] {
			contents = append(contents, c)
		}
	}
	require.True(t, keptAbandoned, "AG-UI has no event that takes one message back: the client keeps the abandoned one (docs/console.md)")
	require.Equal(t, []string{answer}, contents, "the client's messages less the abandoned one: %v", aguiEnd.Agent.Messages)

	// the console: each snapshot's streaming text is the answer so far, never the abandoned text
	// with the answer after it; once the call started over the page is told so
	restartedOnPage := false
	for _, p := range page {
		require.True(t, strings.HasPrefix(answer, p.Text), "the page shows part of the answer, not doubled: %q", p.Text)
		restartedOnPage = restartedOnPage || p.Attempt > 1
	}
	require.True(t, restartedOnPage, "a snapshot marks the new attempt: %v", page)

	// weft run: the abandoned text on its line, the answer once on a line of its own marked restarted
	var lines []string
	for _, l := range strings.Split(cliOut.String(), "\n") {
		if strings.HasPrefix(l, "  … answer") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 2, cliOut.String())
	first, ok := strings.CutPrefix(lines[0], "  … answer: ")
	require.True(t, ok, lines[0])
	require.True(t, strings.HasPrefix(answer, first) && first != answer, "the first line is the abandoned part: %q", first)
	require.Equal(t, "  … answer (attempt 2, restarted: the text above is discarded): "+answer, lines[1])
}
