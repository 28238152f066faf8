package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestAGUICarriesHandoffsAndGuardrailTrips: an agent that hands off to billing, whose answer
// trips an output guardrail (onTrip return), followed through the console's /runs/{id}/agui by
// the public AG-UI client (check.mjs), which accepts the stream: the handoff and the trip are
// CUSTOM events weft.handoff (from, to) and weft.guardrail_tripped (guardrail, stage, reason), in
// the order the run recorded them, between the step's STEP_STARTED and STEP_FINISHED.
func TestAGUICarriesHandoffsAndGuardrailTrips(t *testing.T) {
	check := aguiCheck(t)
	queue := "agui-agent"
	fake := fakellm.New(
		fakellm.ToolCall("t1", "transfer_to_billing", `{}`),
		fakellm.Text("Refunded to card 4111111111111111."),
	)
	defer fake.Close()
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "m"}, nil)
	wc := weftclient.New(dial(t), queue)
	s, err := console.New(console.Options{Client: wc, WorkflowsDir: t.TempDir(), Reviewer: "console-test", PollInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	w, err := dsl.Load("support.json", []byte(`{"name":"support","steps":[
	  {"id":"triage","tool":"agent","inputs":{"prompt":"I want a refund","maxIterations":5,
	    "guardrails":{"output":[{"name":"no-card","forbid":"\\d{16}"}],"onTrip":"return"},
	    "handoffs":[{"name":"billing","description":"Money questions.","agent":{"system":"You handle billing."}}]}}],
	  "output":"{{ triage.output.stopReason }}"}`))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := "agui-agent-1"
	_, err = wc.Start(ctx, w, weftclient.StartOptions{ID: id})
	require.NoError(t, err)

	cmd := exec.CommandContext(ctx, "node", check, srv.URL+"/runs/"+id+"/agui")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var evs []map[string]any
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l aguiLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
		if l.Event != nil {
			evs = append(evs, l.Event)
		}
	}
	require.NoError(t, sc.Err())
	require.NoError(t, cmd.Wait(), "check.mjs: %s", stderr.String())
	require.Contains(t, stderr.String(), "the AG-UI client accepted")

	var order []string
	values := map[string]map[string]any{}
	for _, e := range evs {
		switch e["type"] {
		case "CUSTOM":
			name := e["name"].(string)
			order = append(order, name)
			values[name] = e["value"].(map[string]any)
		case "STEP_STARTED", "STEP_FINISHED", "RUN_FINISHED":
			order = append(order, e["type"].(string))
		}
	}
	require.Equal(t, []string{"STEP_STARTED", "weft.handoff", "weft.guardrail_tripped", "STEP_FINISHED", "RUN_FINISHED"}, order)
	h := values["weft.handoff"]
	require.Equal(t, "triage", h["step"])
	require.Equal(t, "billing", h["to"])
	require.NotEmpty(t, h["from"])
	g := values["weft.guardrail_tripped"]
	require.Equal(t, "triage", g["step"])
	require.Equal(t, "no-card", g["guardrail"])
	require.Equal(t, "output", g["stage"])
	require.NotEmpty(t, g["reason"])
	require.Equal(t, "guardrail", evs[len(evs)-1]["result"], "the run returned with stopReason guardrail")
}
