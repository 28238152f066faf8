package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	weftgo "github.com/weftworks/weft"
	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/worker"
)

// TestAgentSDKOnTheEmbeddedStack: an agent with a handoff, a stop condition and guardrails runs
// on the embedded stack against the scripted model over HTTP; `weft fork` then starts a new run
// from its iteration 1 with an edited message, asking the model only for what comes after.
func TestAgentSDKOnTheEmbeddedStack(t *testing.T) {
	c := dial(t)
	queue := "agent-sdk-e2e"
	fake := fakellm.New(
		fakellm.ToolCall("t1", "transfer_to_billing", `{}`),
		fakellm.Text("DONE: refunded"),
	)
	defer fake.Close()
	cfg := activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	file := filepath.Join(t.TempDir(), "support.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"support","steps":[
  {"id":"triage","tool":"agent","inputs":{"instructions":"Route questions (turn {{ agent.iteration }}).","prompt":"I want a refund","maxIterations":5,
    "stopWhen":{"textMatches":"^DONE:"},
    "guardrails":{"input":[{"name":"no-secrets","forbid":"(?i)password"}],"output":[{"name":"no-card","forbid":"\\d{16}"}]},
    "handoffs":[{"name":"billing","description":"Money questions.","agent":{"system":"You handle billing."}}]}}
],"output":"{{ triage.output }}"}`), 0o644))

	code, out, errOut := weft(t, queue, "run", file, "--detach", "--id", "sdk-e2e")
	require.Equal(t, 0, code, out+errOut)
	wc := weftclient.New(c, queue)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := wc.Result(ctx, "sdk-e2e")
	require.NoError(t, err)
	got := res.Output.GetStructValue().AsMap()
	require.Equal(t, "DONE: refunded", got["text"])
	require.Equal(t, "text_matched", got["stopReason"])
	require.Equal(t, "billing", got["agent"])
	reqs := fake.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, "Route questions (turn 1).", reqs[0].Messages[0]["content"])
	require.Equal(t, "You handle billing.", reqs[1].Messages[0]["content"], "billing continues the conversation")

	// Fork from iteration 1 (the handoff) with a new message: one more model call, by billing.
	fork := fakellm.New(fakellm.Text("DONE: refund declined"))
	defer fork.Close()
	w.Stop()
	cfg.OpenAIBaseURL = fork.BaseURL
	w2, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w2.Start())
	t.Cleanup(w2.Stop)
	code, out, errOut = weft(t, queue, "fork", "sdk-e2e", "--step", "triage", "--iteration", "1", "--message", "Actually, it was a gift.", "--id", "sdk-e2e-fork")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "forking sdk-e2e at triage iteration 1")
	res, err = wc.Result(ctx, "sdk-e2e-fork")
	require.NoError(t, err)
	got = res.Output.GetStructValue().AsMap()
	require.Equal(t, "DONE: refund declined", got["text"])
	require.Equal(t, "billing", got["agent"])
	require.EqualValues(t, 2, got["iterations"])
	require.Equal(t, 1, fork.Count(), "iteration 1 was reused, not asked again")
	msgs := fork.Requests()[0].Messages
	require.Equal(t, "You handle billing.", msgs[0]["content"])
	require.Equal(t, "Actually, it was a gift.", msgs[len(msgs)-1]["content"])
	require.True(t, strings.HasPrefix(got["text"].(string), "DONE:"))
}

// TestAgentSDKFromGo is the test above written with the Go API's typed options: the handoff, the
// stop condition, the guardrails and the tool choice declared in Go run on the embedded stack, and
// Engine.Fork goes on from iteration 1 asking the model only for what comes after.
func TestAgentSDKFromGo(t *testing.T) {
	c := dial(t)
	queue := "agent-sdk-go"
	fake := fakellm.New(
		fakellm.ToolCall("t1", "transfer_to_billing", `{}`),
		fakellm.Text("DONE: refunded"),
	)
	defer fake.Close()
	cfg := activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e, err := weftgo.Start(ctx, weftgo.Options{Temporal: c, TaskQueue: queue, Config: &cfg})
	require.NoError(t, err)
	wf := weftgo.New("support-go").Agent("triage", "I want a refund",
		weftgo.Instructions("Route questions (turn {{ agent.iteration }})."),
		weftgo.MaxIterations(5), weftgo.ToolChoice(weftgo.ChooseRequired),
		weftgo.StopWhenText("^DONE:"),
		weftgo.InputGuardrails(weftgo.Forbid("no-secrets", "(?i)password")),
		weftgo.OutputGuardrails(weftgo.Forbid("no-card", `\d{16}`)),
		weftgo.Handoffs(weftgo.Handoff("billing", "Money questions.", weftgo.System("You handle billing.")))).
		Output("{{ triage.output }}")
	res, err := weftgo.Run[map[string]any](ctx, e, wf, nil)
	require.NoError(t, err)
	require.Equal(t, "DONE: refunded", res.Output["text"])
	require.Equal(t, "text_matched", res.Output["stopReason"])
	require.Equal(t, "billing", res.Output["agent"])
	reqs := fake.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, "Route questions (turn 1).", reqs[0].Messages[0]["content"])
	require.Equal(t, "required", reqs[0].Body["tool_choice"], "ToolChoice reached the provider")
	require.Equal(t, "You handle billing.", reqs[1].Messages[0]["content"], "billing continues the conversation")
	e.Close()

	// Fork from iteration 1 on a second engine (its worker asks another scripted model).
	fork := fakellm.New(fakellm.Text("DONE: refund declined"))
	defer fork.Close()
	cfg.OpenAIBaseURL = fork.BaseURL
	e2, err := weftgo.Start(ctx, weftgo.Options{Temporal: c, TaskQueue: queue, Config: &cfg})
	require.NoError(t, err)
	defer e2.Close()
	run, plan, err := e2.Fork(ctx, res.ID, weftgo.ForkOptions{Step: "triage", Iteration: 1, Message: "Actually, it was a gift."})
	require.NoError(t, err)
	require.Equal(t, 1, plan.Iterations)
	forked, err := weftgo.Get[map[string]any](ctx, run)
	require.NoError(t, err)
	require.Equal(t, "DONE: refund declined", forked.Output["text"])
	require.Equal(t, "billing", forked.Output["agent"])
	require.Equal(t, 1, fork.Count(), "iteration 1 was reused, not asked again")
	msgs := fork.Requests()[0].Messages
	require.Equal(t, "Actually, it was a gift.", msgs[len(msgs)-1]["content"])
}

// verdict is the typed answer of TestAgentTypedAnswerAndTripwireFromGo.
type verdict struct {
	Answer string `json:"answer" weft:"minLength=1"`
	Score  int    `json:"score" weft:"min=1,max=5"`
}

// TestAgentTypedAnswerAndTripwireFromGo: an agent step asked for a Go type's schema sends it as a
// strict json_schema, sends an answer that does not fit back to the model, and Run decodes the
// repaired answer into the type; an output guardrail that trips returns stopReason guardrail with
// ReturnOnTrip and fails the run, naming the check, without it.
func TestAgentTypedAnswerAndTripwireFromGo(t *testing.T) {
	c := dial(t)
	queue := "agent-sdk-go-typed"
	fake := fakellm.New(
		fakellm.Text(`{"answer":"yes"}`), // no score: repaired
		fakellm.Text(`{"answer":"yes","score":4}`),
		fakellm.Text("Your card 4111111111111111 is refunded."),
		fakellm.Text("Your card 4111111111111111 is refunded."),
	)
	defer fake.Close()
	cfg := activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e, err := weftgo.Start(ctx, weftgo.Options{Temporal: c, TaskQueue: queue, Config: &cfg})
	require.NoError(t, err)
	defer e.Close()

	typed := weftgo.New("typed-go").Agent("judge", "Is weft durable?", weftgo.ResponseSchema(weftgo.SchemaOf[verdict]()))
	res, err := weftgo.Run[verdict](ctx, e, typed, nil)
	require.NoError(t, err)
	require.Equal(t, verdict{Answer: "yes", Score: 4}, res.Output)
	reqs := fake.Requests()
	require.Len(t, reqs, 2, "one answer, one repair")
	require.Equal(t, "json_schema", reqs[0].ResponseFormat["type"], "the schema went to the provider as a strict json_schema")
	schema := reqs[0].ResponseFormat["json_schema"].(map[string]any)["schema"].(map[string]any)
	require.Contains(t, schema["properties"], "score")
	last := reqs[1].Messages[len(reqs[1].Messages)-1]["content"].(string)
	require.Contains(t, last, "score", "the repair names what is missing")

	guarded := func(opts ...weftgo.Option) *weftgo.Workflow {
		return weftgo.New("guarded-go").Agent("reply", "Refund me",
			append([]weftgo.Option{weftgo.OutputGuardrails(weftgo.Forbid("no-card", `\d{16}`))}, opts...)...).
			Output("{{ reply.output }}")
	}
	tripped, err := weftgo.Run[map[string]any](ctx, e, guarded(weftgo.ReturnOnTrip()), nil)
	require.NoError(t, err)
	require.Equal(t, "guardrail", tripped.Output["stopReason"])
	require.Equal(t, "", tripped.Output["text"], "the answer that tripped is not returned")
	require.Equal(t, "no-card", tripped.Output["guardrail"].(map[string]any)["name"])

	_, err = weftgo.Run[map[string]any](ctx, e, guarded(), nil)
	require.ErrorContains(t, err, "no-card")
	require.Equal(t, 4, fake.Count())
}

// TestAgentTranscriptAProviderTakes: an agent that a stopWhen textMatches ends while its answer
// asks for a call hands on a conversation the strict OpenAI-compatible fake takes (it answers 400
// to an unanswered tool call, as OpenAI does): the next agent goes on from it.
func TestAgentTranscriptAProviderTakes(t *testing.T) {
	c := dial(t)
	queue := "agent-transcript-e2e"
	fake := fakellm.New(
		fakellm.Reply{Text: "DONE: enough", Calls: []fakellm.Call{{ID: "s1", Name: "search", Arguments: `{"query":"more"}`}}},
		fakellm.Text("summary"),
	)
	defer fake.Close()
	cfg := activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	file := filepath.Join(t.TempDir(), "handon.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"handon","steps":[
  {"id":"first","tool":"agent","inputs":{"prompt":"Look it up","tools":["search"],"stopWhen":{"textMatches":"^DONE:"}}},
  {"id":"second","tool":"agent","dependsOn":["first"],"inputs":{"messages":"{{ first.output.messages }}","prompt":"Sum it up"}}
],"output":"{{ second.output.text }}"}`), 0o644))
	code, out, errOut := weft(t, queue, "run", file, "--detach", "--id", "transcript-e2e")
	require.Equal(t, 0, code, out+errOut)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := weftclient.New(c, queue).Result(ctx, "transcript-e2e")
	require.NoError(t, err)
	require.Equal(t, "summary", res.Output.GetStringValue())
	reqs := fake.Requests()
	require.Len(t, reqs, 2)
	var answer map[string]any
	for _, m := range reqs[1].Messages {
		if m["role"] == "tool" {
			answer = m
		}
	}
	require.NotNil(t, answer, "the skipped call is answered: %v", reqs[1].Messages)
	require.Equal(t, "s1", answer["tool_call_id"])
	require.Contains(t, answer["content"], "skipped")
}
