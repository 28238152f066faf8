package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows/dsl"
)

// Prompts: each workflow offered as a wf_ tool is also a prompt of the same name (its inputs are
// the prompt's arguments; the prompt asks the model to run the tool with them), plus "ask" (answer
// a question from the knowledge base) and "review_waiting" (the reviews the caller may read that
// wait for a decision). Getting a prompt needs the reader role.
//
// Completions (completion/complete) suggest, by the argument's name: workflow names (name,
// workflow), collection names (collection), execution ids (id, execution: the caller's own, by
// the read rule of client.Readable) and step ids (step: of the execution given in the request's
// context arguments, or of the workflow of the prompt).

const (
	promptAsk    = "ask"
	promptReview = "review_waiting"
)

// addPrompts registers the built-in prompts; the workflows' prompts follow the wf_ tools
// (refreshPrompts).
func (g *Gateway) addPrompts() {
	g.srv.AddPrompt(mcplib.NewPrompt(promptAsk,
		mcplib.WithPromptDescription("Answer a question from weft's knowledge base, citing the passages used."),
		mcplib.WithArgument("question", mcplib.RequiredArgument(), mcplib.ArgumentDescription("what to ask")),
		mcplib.WithArgument("collection", mcplib.ArgumentDescription("the collection to search (weft_collections lists them)"))),
		func(ctx context.Context, req mcplib.GetPromptRequest) (*mcplib.GetPromptResult, error) {
			if err := needRole(ctx, "the prompt "+promptAsk, auth.RoleReader); err != nil {
				return nil, err
			}
			q := strings.TrimSpace(req.Params.Arguments["question"])
			if q == "" {
				return nil, fmt.Errorf("the prompt %s needs the argument \"question\"", promptAsk)
			}
			where := ""
			if c := req.Params.Arguments["collection"]; c != "" {
				where = fmt.Sprintf(" (collection %q)", c)
			}
			text := fmt.Sprintf("Answer this question from weft's knowledge base%s: call the tool %s%s with the question, answer only from the passages it returns, cite them, and say so when they do not answer it.\n\nQuestion: %s",
				where, Prefix, toolspec.Query.Name, q)
			return mcplib.NewGetPromptResult("Ask the knowledge base", []mcplib.PromptMessage{mcplib.NewPromptMessage(mcplib.RoleUser, mcplib.NewTextContent(text))}), nil
		})
	g.srv.AddPrompt(mcplib.NewPrompt(promptReview,
		mcplib.WithPromptDescription("The reviews waiting for a decision that you may read, with their data, to decide with weft_review."),
		mcplib.WithArgument("execution", mcplib.ArgumentDescription("only this execution's reviews")),
		mcplib.WithArgument("step", mcplib.ArgumentDescription("only this step's review"))),
		g.reviewPrompt)
}

// reviewPromptRuns is how many of the newest waiting executions the review prompt reads.
const reviewPromptRuns = 50

func (g *Gateway) reviewPrompt(ctx context.Context, req mcplib.GetPromptRequest) (*mcplib.GetPromptResult, error) {
	if err := needRole(ctx, "the prompt "+promptReview, auth.RoleReader); err != nil {
		return nil, err
	}
	c, err := g.temporal(ctx)
	if err != nil {
		return nil, err
	}
	l, err := c.ListPendingReviews(ctx, weftclient.ListOptions{Limit: reviewPromptRuns})
	if err != nil {
		return nil, fmt.Errorf("listing the reviews that wait: %w", err)
	}
	reviews := weftclient.ReadableReviews(caller(ctx), l.Reviews)
	exec, step := req.Params.Arguments["execution"], req.Params.Arguments["step"]
	kept := reviews[:0:0]
	for _, r := range reviews {
		if (exec == "" || r.Run.ID == exec || r.In.ID == exec) && (step == "" || r.Review.GetStep() == step) {
			kept = append(kept, r)
		}
	}
	var b strings.Builder
	// the listing's cut is said only of the whole list: a filter by execution or step keeps what
	// it names from the runs read
	cut := ""
	if exec == "" && step == "" {
		cut = l.Cut(len(kept), readMoreReviews(reviewPromptRuns))
	}
	switch {
	case len(kept) == 0 && cut != "":
		fmt.Fprintf(&b, "%s Tell the person so.", cut)
	case len(kept) == 0:
		b.WriteString("No review you may read is waiting for a decision. Say so; there is nothing to decide.")
	default:
		if cut != "" {
			fmt.Fprintf(&b, "%s Tell the person so: the reviews below are not all that wait.\n\n", cut)
		}
		fmt.Fprintf(&b, "%d review(s) wait for a decision. For each, show the person the step, its title and its data, ask them to approve, edit (with corrected data) or reject (with a comment), and send their decision with weft_review (id = the execution, review = the review id, digest = the digest below). Never decide on your own.\n\n", len(kept))
		for _, r := range kept {
			data, _ := json.MarshalIndent(r, "", "  ")
			fmt.Fprintf(&b, "execution %s, step %s:\n%s\n\n", r.In.ID, r.Review.GetStep(), data)
		}
	}
	return mcplib.NewGetPromptResult("Review what is waiting", []mcplib.PromptMessage{mcplib.NewPromptMessage(mcplib.RoleUser, mcplib.NewTextContent(b.String()))}), nil
}

// refreshPrompts offers each exposed workflow as a prompt named like its wf_ tool; called with
// the wf_ tools and the catalog they came from (refreshWorkflowTools), it changes only what
// changed.
func (g *Gateway) refreshPrompts(tools map[string]string, wfNames map[string]string, wfs map[string]*dsl.Workflow) {
	want := map[string]bool{}
	var add []server.ServerPrompt
	for toolName, def := range tools {
		want[toolName] = true
		if g.wfPrompts[toolName] == def {
			continue
		}
		g.wfPrompts[toolName] = def
		name := wfNames[toolName]
		w, ok := wfs[name]
		if !ok {
			continue
		}
		opts := []mcplib.PromptOption{mcplib.WithPromptDescription(fmt.Sprintf("Run the workflow %s (%s) as a durable weft execution. %s", name, toolName, w.Def.Description))}
		inputs := make([]string, 0, len(w.Def.Inputs))
		for in := range w.Def.Inputs {
			inputs = append(inputs, in)
		}
		sort.Strings(inputs)
		for _, in := range inputs {
			spec := w.Def.Inputs[in]
			aopts := []mcplib.ArgumentOption{mcplib.ArgumentDescription(strings.TrimSpace(spec.Type + ": " + spec.Description))}
			if spec.Required && spec.Default == nil {
				aopts = append(aopts, mcplib.RequiredArgument())
			}
			opts = append(opts, mcplib.WithArgument(in, aopts...))
		}
		tool := toolName
		add = append(add, server.ServerPrompt{Prompt: mcplib.NewPrompt(toolName, opts...), Handler: func(ctx context.Context, req mcplib.GetPromptRequest) (*mcplib.GetPromptResult, error) {
			if err := needRole(ctx, "the prompt "+tool, auth.RoleReader); err != nil {
				return nil, err
			}
			args, _ := json.Marshal(req.Params.Arguments)
			text := fmt.Sprintf("Run the weft workflow %s: call the tool %s with these arguments %s (strings; convert numbers and booleans to the types its input schema asks for). It runs as a durable execution: if it returns an executionId while still running, follow it with weft_execution; if it waits for a review, show the person what is asked and send their decision with weft_review. Then report the output.", name, tool, args)
			return mcplib.NewGetPromptResult("Run "+name, []mcplib.PromptMessage{mcplib.NewPromptMessage(mcplib.RoleUser, mcplib.NewTextContent(text))}), nil
		}})
	}
	if len(add) > 0 {
		g.srv.AddPrompts(add...)
	}
	var stale []string
	for name := range g.wfPrompts {
		if !want[name] {
			stale = append(stale, name)
			delete(g.wfPrompts, name)
		}
	}
	if len(stale) > 0 {
		sort.Strings(stale)
		g.srv.DeletePrompts(stale...)
	}
}

// completer answers completion/complete for prompts and resource templates.
type completer struct{ g *Gateway }

func (c completer) CompletePromptArgument(ctx context.Context, prompt string, arg mcplib.CompleteArgument, cc mcplib.CompleteContext) (*mcplib.Completion, error) {
	workflow := ""
	if strings.HasPrefix(prompt, "wf_") {
		c.g.mu.Lock()
		workflow = c.g.wfNames[prompt]
		c.g.mu.Unlock()
	}
	return c.complete(ctx, arg, cc, workflow)
}

func (c completer) CompleteResourceArgument(ctx context.Context, _ string, arg mcplib.CompleteArgument, cc mcplib.CompleteContext) (*mcplib.Completion, error) {
	return c.complete(ctx, arg, cc, "")
}

// maxCompletions is what MCP allows in one answer.
const maxCompletions = 100

func (c completer) complete(ctx context.Context, arg mcplib.CompleteArgument, cc mcplib.CompleteContext, workflow string) (*mcplib.Completion, error) {
	if err := needRole(ctx, "completions", auth.RoleReader); err != nil {
		return nil, err
	}
	var all []string
	var err error
	switch arg.Name {
	case "name", "workflow":
		wfs, _ := c.g.workflowFiles()
		for n := range wfs {
			all = append(all, n)
		}
	case "collection":
		all, err = c.g.collectionNames(ctx)
	case "id", "execution":
		all, err = c.g.executionIDs(ctx)
	case "step":
		all, err = c.g.stepIDs(ctx, cc.Arguments["execution"]+cc.Arguments["id"], workflow)
	}
	if err != nil {
		return nil, err
	}
	return completion(all, arg.Value), nil
}

// completion keeps the values that start with prefix, sorted, at most maxCompletions.
func completion(all []string, prefix string) *mcplib.Completion {
	values := []string{}
	for _, v := range all {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(prefix)) {
			values = append(values, v)
		}
	}
	sort.Strings(values)
	out := &mcplib.Completion{Values: values, Total: len(values)}
	if len(values) > maxCompletions {
		out.Values, out.HasMore = values[:maxCompletions], true
	}
	return out
}

func (g *Gateway) collectionNames(ctx context.Context) ([]string, error) {
	if g.o.Config.MongoDBURI == "" {
		return nil, nil // no store configured: nothing to suggest
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	out, _, err := g.tools[toolspec.Collections.Name](ctx, map[string]any{})
	if err != nil {
		return nil, fmt.Errorf("listing the collections: %w", err)
	}
	var list toolspec.CollectionsOut
	b, _ := json.Marshal(out)
	_ = json.Unmarshal(b, &list)
	names := make([]string, 0, len(list.Collections))
	for _, c := range list.Collections {
		names = append(names, c.Name)
	}
	return names, nil
}

// executionIDs are the recent runs the caller may read.
func (g *Gateway) executionIDs(ctx context.Context) ([]string, error) {
	c, err := g.temporal(ctx)
	if err != nil {
		return nil, err
	}
	runs, err := c.List(ctx, weftclient.ListOptions{Limit: maxCompletions})
	if err != nil {
		return nil, fmt.Errorf("listing the executions: %w", err)
	}
	var ids []string
	for _, r := range c.Readable(ctx, caller(ctx), runs) {
		ids = append(ids, r.ID)
	}
	return ids, nil
}

// stepIDs are the steps of an execution the caller may read, else of a workflow.
func (g *Gateway) stepIDs(ctx context.Context, execution, workflow string) ([]string, error) {
	if execution != "" {
		st, err := g.state(ctx, execution)
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, s := range st.GetSteps() {
			ids = append(ids, s.GetId())
		}
		return ids, nil
	}
	wfs, _ := g.workflowFiles()
	w, ok := wfs[workflow]
	if !ok {
		return nil, nil
	}
	ids := make([]string, 0, len(w.Steps))
	for _, s := range w.Def.Steps {
		ids = append(ids, s.ID)
	}
	return ids, nil
}
