package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/weftworks/weft/runwire"
)

// ChatOptions configure a new chat session.
type ChatOptions = runwire.ChatSession

// NewChatID is the default id of a chat session.
func NewChatID() string { return NewRunID("chat") }

// StartChat starts a chat session with id (NewChatID when empty), or attaches to the running
// session with that id. It returns the session's id and whether it already existed.
func (c *Client) StartChat(ctx context.Context, id string, o ChatOptions) (string, bool, error) {
	if err := checkChatMemory(o); err != nil {
		return "", false, err
	}
	if id == "" {
		id = NewChatID()
	} else if err := CheckID(id); err != nil {
		return "", false, err
	}
	if d, err := c.Describe(ctx, id); err == nil {
		if d.Status == "running" {
			if o.StartedBy != "" {
				s, err := c.ChatSession(ctx, id)
				if err != nil {
					return "", false, err
				}
				if s.StartedBy != o.StartedBy {
					return "", false, &RefusedError{Msg: fmt.Sprintf("chat session %s was started by someone else: %s may attach only to sessions of their own; start a new one without a session id", id, o.StartedBy)}
				}
			}
			return id, true, nil
		}
		return "", false, &InvalidError{Err: fmt.Errorf("chat session %s has ended (%s); start a new one without --session", id, d.Status)}
	}
	memo := map[string]any{runwire.MemoWorkflow: "chat"}
	if o.StartedBy != "" {
		memo[MemoStartedBy] = o.StartedBy // listings filter on it (MayRead)
	}
	_, err := c.t.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{
		ID: id, TaskQueue: c.taskQueue, Memo: memo,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, runwire.ChatWorkflowType, &o)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return id, true, nil
		}
		return "", false, fmt.Errorf("starting chat session %s: %w", id, err)
	}
	return id, false, nil
}

// Send sends one message and waits for the turn's answer (reviews of tool calls included:
// decide them with Review while Send waits).
//
// from is the authenticated identity sending it ("" : nobody authenticated, the operator); a
// session started by one identity refuses messages from another.
func (c *Client) Send(ctx context.Context, id, text, from string) (*runwire.ChatTurn, error) {
	for attempt := 0; ; attempt++ {
		h, err := c.t.UpdateWorkflow(ctx, tclient.UpdateWorkflowOptions{
			WorkflowID: id, UpdateName: runwire.UpdateChatMessage,
			Args: []any{runwire.ChatMessage{Text: text, From: from}}, WaitForStage: tclient.WorkflowUpdateStageCompleted,
		})
		if err == nil {
			var reply runwire.ChatReply
			if err = h.Get(ctx, &reply); err == nil {
				return &reply.Turn, nil
			}
		}
		if isNotFound(err) {
			return nil, c.notFound(ctx, id)
		}
		// A session refuses messages while it continues as new: the next run takes them.
		if attempt < 20 && strings.Contains(Cause(err), "continuing as new") {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		return nil, &RefusedError{Msg: Cause(err)}
	}
}

// ChatSession reads a session's conversation, turns and usage.
func (c *Client) ChatSession(ctx context.Context, id string) (*runwire.ChatSession, error) {
	v, err := c.query(ctx, id, runwire.QueryChat)
	if err != nil {
		if isNotFound(err) {
			return nil, c.notFound(ctx, id)
		}
		return nil, fmt.Errorf("chat session %s: %w", id, err)
	}
	var s runwire.ChatSession
	if err := v.Get(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ClearChat forgets a session's conversation; it returns how many messages were dropped. Only
// who may act on the session clears it (CheckAct).
func (c *Client) ClearChat(ctx context.Context, id string) (int, error) {
	if err := c.CheckAct(ctx, "clear", "chat session "+id, id); err != nil {
		return 0, err
	}
	h, err := c.t.UpdateWorkflow(ctx, tclient.UpdateWorkflowOptions{WorkflowID: id, UpdateName: runwire.UpdateChatClear, WaitForStage: tclient.WorkflowUpdateStageCompleted})
	if err != nil {
		return 0, err
	}
	var n int
	err = h.Get(ctx, &n)
	return n, err
}

// ListChats lists chat sessions, newest first.
func (c *Client) ListChats(ctx context.Context, limit int) ([]RunSummary, error) {
	if limit <= 0 {
		limit = 20
	}
	q := fmt.Sprintf("WorkflowType = %q", runwire.ChatWorkflowType)
	resp, err := c.t.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, PageSize: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("listing chat sessions: %w", err)
	}
	out := []RunSummary{}
	seen := map[string]bool{}
	for _, e := range resp.GetExecutions() {
		id := e.GetExecution().GetWorkflowId()
		if seen[id] { // continued runs of one session
			continue
		}
		seen[id] = true
		r := RunSummary{ID: id, Workflow: "chat", Status: StatusName(e.GetStatus()), Started: e.GetStartTime().AsTime()}
		if p, ok := e.GetMemo().GetFields()[runwire.MemoWorkflow]; ok {
			_ = c.converter().FromPayload(p, &r.Workflow)
		}
		c.readMemo(e, &r)
		out = append(out, r)
	}
	return out, nil
}

// checkChatMemory refuses, before the session starts, a memory scope that does not belong to the
// client starting it (the rule the run applies at each remember and recall,
// runwire.ScopeOwner): carl may not start a chat on bob's memory. The operator (nobody
// authenticated) may use any scope.
func checkChatMemory(o ChatOptions) error {
	if o.MemoryScope == "" || o.Origin == OriginOperator || o.StartedBy == "" || runwire.ScopeOwner(o.MemoryScope) == o.StartedBy {
		return nil
	}
	return &RefusedError{Msg: fmt.Sprintf("memory scope %q does not belong to %s: a chat session a client starts uses only memory of its own, a scope that ends with its name (%q, or \"NAME:%s\"); leave memory out to chat without it", o.MemoryScope, o.StartedBy, o.StartedBy, o.StartedBy)}
}
