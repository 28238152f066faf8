package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

const taskQueue = "rawtemporal-brief"

// maxTurns bounds the agent loop: a model that keeps calling tools fails the workflow.
const maxTurns = 10

// Word is the shout tool's input and output.
type Word struct{ Word string }

// ChatRequest is the input of the Chat activity.
type ChatRequest struct {
	Messages []openai.ChatCompletionMessage
	Tools    []openai.Tool
}

// ChatReply is the model's message and the tokens it cost.
type ChatReply struct {
	Message openai.ChatCompletionMessage
	Tokens  int
}

// Result is the workflow's output.
type Result struct {
	Output      string
	TotalTokens int
}

var shoutTool = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name: "shout", Description: "Upper-cases a word",
	Parameters: json.RawMessage(`{"type":"object","properties":{"Word":{"type":"string"}},"required":["Word"]}`),
}}

// Activities holds what the activities need; the worker registers its methods.
type Activities struct {
	LLM   *openai.Client
	Model string
}

// Chat is one model call. Client errors other than 408 and 429 are not retried: the same
// request would fail the same way.
func (a *Activities) Chat(ctx context.Context, req ChatRequest) (ChatReply, error) {
	resp, err := a.LLM.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: a.Model, Messages: req.Messages, Tools: req.Tools})
	if err != nil {
		var apiErr *openai.APIError
		if errors.As(err, &apiErr) && apiErr.HTTPStatusCode >= 400 && apiErr.HTTPStatusCode < 500 &&
			apiErr.HTTPStatusCode != http.StatusRequestTimeout && apiErr.HTTPStatusCode != http.StatusTooManyRequests {
			return ChatReply{}, temporal.NewNonRetryableApplicationError("model request refused", "ModelClientError", err)
		}
		return ChatReply{}, err
	}
	if len(resp.Choices) == 0 {
		return ChatReply{}, errors.New("model returned no choices")
	}
	return ChatReply{Message: resp.Choices[0].Message, Tokens: resp.Usage.TotalTokens}, nil
}

// Shout is the agent's tool.
func (a *Activities) Shout(_ context.Context, in Word) (Word, error) {
	return Word{strings.ToUpper(in.Word)}, nil
}

// Brief runs the agent, then pros and cons in parallel on its answer, then the verdict on both.
func Brief(ctx workflow.Context, topic string) (Result, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 5,
		},
	})
	var res Result
	facts, err := agent(ctx, "facts", "Gather facts about "+topic+"; shout its name", &res.TotalTokens)
	if err != nil {
		return res, err
	}
	seen := "\n\nfacts:\n" + facts
	pros := chat(ctx, "pros", "List the pros"+seen, nil)
	cons := chat(ctx, "cons", "List the cons"+seen, nil)
	var p, c ChatReply
	if err := pros.Get(ctx, &p); err != nil {
		return res, err
	}
	if err := cons.Get(ctx, &c); err != nil {
		return res, err
	}
	var v ChatReply
	if err := chat(ctx, "verdict", "Weigh them in one sentence\n\npros:\n"+p.Message.Content+"\n\ncons:\n"+c.Message.Content, nil).Get(ctx, &v); err != nil {
		return res, err
	}
	res.Output = v.Message.Content
	res.TotalTokens += p.Tokens + c.Tokens + v.Tokens
	return res, nil
}

// chat starts a Chat activity whose ID names the step, so the history says which step it was.
func chat(ctx workflow.Context, id, prompt string, tools []openai.Tool, history ...openai.ChatCompletionMessage) workflow.Future {
	msgs := append([]openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: prompt}}, history...)
	ctx = workflow.WithActivityOptions(ctx, withID(ctx, id))
	return workflow.ExecuteActivity(ctx, (*Activities).Chat, ChatRequest{Messages: msgs, Tools: tools})
}

func withID(ctx workflow.Context, id string) workflow.ActivityOptions {
	o := workflow.GetActivityOptions(ctx)
	o.ActivityID = id
	return o
}

// agent calls the model with the shout tool until it answers without tool calls. A tool call
// the model got wrong goes back to it as the tool's result, so it can correct itself.
func agent(ctx workflow.Context, step, prompt string, tokens *int) (string, error) {
	var history []openai.ChatCompletionMessage
	for turn := 1; turn <= maxTurns; turn++ {
		var r ChatReply
		if err := chat(ctx, fmt.Sprintf("%s.turn%d", step, turn), prompt, []openai.Tool{shoutTool}, history...).Get(ctx, &r); err != nil {
			return "", err
		}
		*tokens += r.Tokens
		if len(r.Message.ToolCalls) == 0 {
			return r.Message.Content, nil
		}
		history = append(history, r.Message)
		for _, call := range r.Message.ToolCalls {
			history = append(history, openai.ChatCompletionMessage{
				Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Content: runTool(ctx, step, call),
			})
		}
	}
	return "", temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: no answer after %d turns", step, maxTurns), "AgentTurns", nil)
}

func runTool(ctx workflow.Context, step string, call openai.ToolCall) string {
	if call.Function.Name != shoutTool.Function.Name {
		return fmt.Sprintf("error: no tool named %q; the tool is %q", call.Function.Name, shoutTool.Function.Name)
	}
	var in Word
	if err := json.Unmarshal([]byte(call.Function.Arguments), &in); err != nil {
		return "error: arguments are not JSON of the shout tool's schema: " + err.Error()
	}
	ctx = workflow.WithActivityOptions(ctx, withID(ctx, step+".shout."+call.ID))
	var out Word
	if err := workflow.ExecuteActivity(ctx, (*Activities).Shout, in).Get(ctx, &out); err != nil {
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func main() {
	ctx := context.Background()
	logger := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	c, err := client.Dial(client.Options{HostPort: os.Getenv("TEMPORAL_ADDRESS"), Namespace: os.Getenv("TEMPORAL_NAMESPACE"), Logger: logger})
	if err != nil {
		log.Fatalf("connecting to Temporal at %q (set TEMPORAL_ADDRESS): %v", os.Getenv("TEMPORAL_ADDRESS"), err)
	}
	defer c.Close()

	cfg := openai.DefaultConfig(os.Getenv("OPENAI_API_KEY"))
	if base := os.Getenv("OPENAI_BASE_URL"); base != "" {
		cfg.BaseURL = base
	}
	model := os.Getenv("WEFT_CHAT_MODEL")
	if model == "" {
		model = openai.GPT4oMini
	}
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(Brief)
	w.RegisterActivity(&Activities{LLM: openai.NewClientWithConfig(cfg), Model: model})
	if err := w.Start(); err != nil {
		log.Fatalf("starting worker: %v", err)
	}
	defer w.Stop()

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: fmt.Sprintf("brief-%d", time.Now().UnixNano()), TaskQueue: taskQueue, WorkflowExecutionTimeout: 30 * time.Minute,
	}, Brief, "Temporal")
	if err != nil {
		log.Fatalf("starting workflow: %v", err)
	}
	if err := printActivities(ctx, c, run); err != nil {
		log.Fatalf("reading history of %s: %v", run.GetID(), err)
	}
	var res Result
	if err := run.Get(ctx, &res); err != nil {
		log.Fatalf("workflow %s: %v", run.GetID(), err)
	}
	fmt.Printf("%s\n%d tokens\n", res.Output, res.TotalTokens)
}

// printActivities follows the workflow's history until it closes, printing each activity as it
// completes or fails.
func printActivities(ctx context.Context, c client.Client, run client.WorkflowRun) error {
	ids := map[int64]string{}
	it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return err
		}
		switch a := ev.Attributes.(type) {
		case *historypb.HistoryEvent_ActivityTaskScheduledEventAttributes:
			ids[ev.EventId] = a.ActivityTaskScheduledEventAttributes.ActivityId
		case *historypb.HistoryEvent_ActivityTaskCompletedEventAttributes:
			fmt.Println("completed", ids[a.ActivityTaskCompletedEventAttributes.ScheduledEventId])
		case *historypb.HistoryEvent_ActivityTaskFailedEventAttributes:
			fmt.Println("failed", ids[a.ActivityTaskFailedEventAttributes.ScheduledEventId], a.ActivityTaskFailedEventAttributes.Failure.GetMessage())
		}
	}
	return nil
}
