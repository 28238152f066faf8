package starter

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/internal/english"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

type chatOptions struct {
	conn                    connFlags
	model, collection, db   string
	tools, approve, mcp     []string
	stateful                []string
	session, memory, system string
	list, asJSON            bool
}

const chatHelp = `Commands:
  /tools              the last turn's tool calls (tool, arguments, result, time)
  /usage              tokens and cost of this session
  /export-workflow [FILE] [--all]
                      write a workflow file that replays the last turn's tool calls (--all: every turn)
  /clear              forget the conversation (the session and its usage stay)
  /help               this help
  /exit               leave; the session stays: come back with weft chat --session ID`

func newChatCommand() *cobra.Command {
	var o chatOptions
	cmd := &cobra.Command{
		Use:   "chat [--model M] [--collection C] [--db D] [--tools a,b] [--session ID]",
		Short: "Agentic chat: a model that uses weft's tools, as a durable session",
		Long: "Each message is one agent turn in a long-running Temporal workflow: every model call and tool call\n" +
			"is a durable activity, so quitting or a crash loses nothing; come back with --session ID.\n" +
			"Without a terminal it reads one message or /command per line and prints plain answers;\n" +
			"--json prints one JSON object per turn instead.\n\n" + chatHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.conn.register(cmd)
	f := cmd.Flags()
	f.StringVar(&o.model, "model", "", "model or alias (default: the worker's WEFT_CHAT_MODEL)")
	f.StringVar(&o.collection, "collection", "", "default collection for search and query")
	f.StringVar(&o.db, "db", "", "default database")
	f.StringSliceVar(&o.tools, "tools", []string{toolspec.Search.Name, toolspec.Query.Name, toolspec.Collections.Name}, "tools the model may call (weft tools, workflow:NAME)")
	f.StringSliceVar(&o.approve, "approve", nil, "tools whose calls wait for your approval")
	f.StringVar(&o.session, "session", "", "resume this session (or start one with this id)")
	f.StringVar(&o.memory, "memory", "", "long-term memory scope: adds the remember and recall tools")
	f.StringArrayVar(&o.mcp, "mcp", nil, "an external MCP server whose tools the chat may call: NAME=COMMAND [ARGS...] or NAME=https://URL (repeatable)")
	f.StringSliceVar(&o.stateful, "mcp-stateful", nil, "--mcp servers that keep one connection (one process) for the whole session, so they keep their state between calls")
	f.StringVar(&o.system, "system", "", "system prompt (default: weft's)")
	f.BoolVar(&o.list, "list", false, "list chat sessions and exit")
	jsonFlag(cmd, &o.asJSON, "print one JSON object per turn")
	return cmd
}

// chatServers reads the --mcp flags (NAME=COMMAND [ARGS...] or NAME=https://URL) and marks
// the servers --mcp-stateful names stateful; names are the agent tools that offer them.
func chatServers(specs, stateful []string) (map[string]dsl.MCPServer, []string, error) {
	servers := map[string]dsl.MCPServer{}
	var names []string
	for _, spec := range specs {
		name, target, ok := strings.Cut(spec, "=")
		if !ok || name == "" || strings.TrimSpace(target) == "" {
			return nil, nil, fmt.Errorf("--mcp %q: write NAME=COMMAND [ARGS...] or NAME=https://URL", spec)
		}
		if _, dup := servers[name]; dup {
			return nil, nil, fmt.Errorf("--mcp %q: a server named %s is given twice: give each its own name", spec, name)
		}
		if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
			servers[name] = dsl.MCPServer{URL: target, KeyEnv: strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_MCP_KEY"}
		} else {
			parts := strings.Fields(target)
			servers[name] = dsl.MCPServer{Command: parts[0], Args: parts[1:]}
		}
		names = append(names, toolspec.MCPToolPrefix+name)
	}
	for _, name := range stateful {
		s, ok := servers[name]
		if !ok {
			return nil, nil, fmt.Errorf("--mcp-stateful %q names no --mcp server: give the server with --mcp %s=COMMAND (or =URL) too", name, name)
		}
		s.Stateful = true
		servers[name] = s
	}
	if len(servers) == 0 {
		servers = nil
	}
	return servers, names, nil
}

func (o *chatOptions) run(cmd *cobra.Command) error {
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	return o.conn.with(ctx, func(c *weftclient.Client) error {
		if o.list {
			chats, err := c.ListChats(ctx, 50)
			if err != nil {
				return err
			}
			if o.asJSON {
				return writeJSON(out, chats)
			}
			if len(chats) == 0 {
				fmt.Fprintln(out, "No chat sessions yet: start one with weft chat.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tSTATUS\tSTARTED")
			for _, s := range chats {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.ID, s.Status, s.Started.Local().Format(time.DateTime))
			}
			return tw.Flush()
		}
		tools := o.tools
		if o.memory != "" {
			tools = append(tools, toolspec.Remember.Name, toolspec.Recall.Name)
		}
		servers, names, err := chatServers(o.mcp, o.stateful)
		if err != nil {
			return invalid(err)
		}
		tools = append(tools, names...)
		id, resumed, err := c.StartChat(ctx, o.session, weftclient.ChatOptions{Model: o.model, System: o.system, Tools: tools,
			Approve: o.approve, DB: o.db, Collection: o.collection, MemoryScope: o.memory, MCPServers: servers})
		if err != nil {
			return clientError(err)
		}
		if resumed {
			var ignored []string
			for _, name := range []string{"model", "collection", "db", "tools", "approve", "memory", "mcp", "mcp-stateful", "system"} {
				if cmd.Flags().Changed(name) {
					ignored = append(ignored, "--"+name)
				}
			}
			if len(ignored) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "weft chat: session %s goes on with the settings it started with; %s apply to new sessions only\n", id, strings.Join(ignored, ", "))
			}
		}
		in := cmd.InOrStdin()
		interactive := false
		if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			interactive = true
		}
		if !o.asJSON {
			if resumed {
				fmt.Fprintf(out, "Resumed chat session %s.\n", id)
			} else {
				fmt.Fprintf(out, "Chat session %s (resume it with weft chat --session %s). /help for commands.\n", id, id)
			}
		}
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		failed := 0 // turns that failed, in a script: the exit status says so
		for {
			if interactive {
				fmt.Fprint(out, "› ")
			}
			if !sc.Scan() {
				if err := sc.Err(); err != nil {
					return err
				}
				if failed > 0 && !interactive {
					return &ExitError{Code: ExitFailed, Silent: true}
				}
				return nil
			}
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			if strings.HasPrefix(line, "/") {
				stop, err := o.command(ctx, c, id, line, out)
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "weft chat: %v\n", err)
				}
				if stop {
					return nil
				}
				continue
			}
			turn, err := o.send(ctx, c, id, line, out, interactive)
			if err != nil {
				failed++
				fmt.Fprintf(cmd.ErrOrStderr(), "weft chat: %s\n", weftclient.Cause(err))
				if o.asJSON {
					_ = writeJSONLine(out, map[string]any{"session": id, "error": weftclient.Cause(err)})
				}
				continue
			}
			if o.asJSON {
				_ = writeJSONLine(out, map[string]any{"session": id, "turn": turn})
			}
		}
	})
}

// send runs one turn. While it runs, the model's text streams (in a terminal) and pending
// approvals are announced with the command that decides them. It follows the session's events
// with client.Stream from the last one recorded before the message (it asks the session again
// only when its history says something happened, writing nothing to it, and reads the model's
// text while a model call runs), into the session's next run when it continues as new.
func (o *chatOptions) send(ctx context.Context, c *weftclient.Client, id, text string, out io.Writer, stream bool) (*runwire.ChatTurn, error) {
	f := chatFollower{o: o, id: id, out: out, stream: stream && !o.asJSON, announced: map[string]bool{}}
	so := weftclient.StreamOptions{NoDeltas: !f.stream, DeltaInterval: chatReadInterval, Interval: chatPollInterval}
	if page, err := c.Events(ctx, id, math.MaxInt64); err == nil {
		so.Since, so.SinceRun = page.Last, page.Run
	}
	sctx, stop := context.WithCancel(ctx)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		_, _ = c.Stream(sctx, id, so, f.event)
	}()
	turn, err := c.Send(ctx, id, text, "")
	stop()
	<-followed // the follower prints nothing more: the answer's rest is printed here
	if err != nil {
		return nil, err
	}
	f.drain(ctx, c, so)
	if !o.asJSON {
		f.shown.finish(out, turn.Answer)
	}
	return turn, nil
}

const (
	// chatReadInterval: how often the model's text is read while a model call runs.
	chatReadInterval = 100 * time.Millisecond
	// chatPollInterval: how often a session that cannot be waited on is read.
	chatPollInterval = 250 * time.Millisecond
)

// chatFollower shows one turn's events.
type chatFollower struct {
	o         *chatOptions
	id        string
	out       io.Writer
	stream    bool
	announced map[string]bool
	shown     streamPrinter
}

// event shows one of the session's events: an approval asked (of the session, or of a child run
// a workflow: tool started) and the model's text.
func (f *chatFollower) event(e events.Event) {
	switch e.Type {
	case events.ReviewRequested:
		if rv := e.Review; rv != nil {
			run := f.id
			if e.Child != "" {
				run = e.Child
			}
			f.announce(run, rv.Id, rv.Step, rv.Tool, rv.Data)
		}
	case events.LLMDelta:
		if f.stream {
			f.shown.add(f.out, e)
		}
	}
}

// drain announces what the turn asked of a person that the follower had not read yet when the
// turn ended (a review decided within the history watch's latency): the turn's events are read
// once more from where the follower started, and a review announced here that is already
// decided says so and by whom, so nothing the turn waited for goes unmentioned.
func (f *chatFollower) drain(ctx context.Context, c *weftclient.Client, so weftclient.StreamOptions) {
	page, err := c.EventsOf(ctx, f.id, so.SinceRun, so.Since)
	if err != nil {
		return
	}
	late := map[string]bool{}
	for _, e := range page.Events {
		switch {
		case e.Type == events.ReviewRequested && e.Review != nil && !f.announced[e.Review.Id] && !f.o.asJSON:
			late[e.Review.Id] = true
			f.event(e)
		case e.Type == events.ReviewDecided && e.Review != nil && late[e.Review.Id]:
			fmt.Fprintf(f.out, "  decided: %s by %s\n", e.Decision, e.Reviewer)
		}
	}
}

func (f *chatFollower) announce(run, gate, step, tool string, data interface{ MarshalJSON() ([]byte, error) }) {
	if f.announced[gate] || f.o.asJSON {
		return
	}
	f.announced[gate] = true
	b, _ := data.MarshalJSON()
	fmt.Fprintf(f.out, "⏸ %s wants to call %s with %s\n  decide: weft review %s approve|edit|reject --id '%s'\n", step, tool, truncate(string(b), 300), run, gate)
}

// streamPrinter prints a turn's model text as it streams (llm_delta events): a later model call
// (the agent's next iteration) or a new attempt of one (a retry, a repair) starts a new line, and
// a call whose text started over (Restarted: a worker died mid-answer) says the text above is
// discarded before its new text, so the answer is read once.
type streamPrinter struct {
	text    string // what was printed of the model call attempt shown last
	call    string // its activity id
	attempt int32
}

func (p *streamPrinter) add(out io.Writer, e events.Event) {
	if e.Text == "" {
		return
	}
	if e.Activity != p.call || e.Attempt != p.attempt {
		if p.text != "" {
			fmt.Fprintln(out)
		}
		if e.Restarted && p.call != "" {
			fmt.Fprint(out, "↻ "+restartNote(e.Attempt)+" ")
		}
		p.text, p.call, p.attempt = "", e.Activity, e.Attempt
	}
	fmt.Fprint(out, e.Text)
	p.text += e.Text
}

// finish prints the turn's answer: the rest of it when the streamed text began it, else all of it
// on a line of its own.
func (p *streamPrinter) finish(out io.Writer, answer string) {
	if p.text != "" && strings.HasPrefix(answer, p.text) {
		fmt.Fprintln(out, answer[len(p.text):])
		return
	}
	if p.text != "" {
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out, answer)
}

// command runs a slash command; stop is true for /exit.
func (o *chatOptions) command(ctx context.Context, c *weftclient.Client, id, line string, out io.Writer) (bool, error) {
	fields := strings.Fields(line)
	switch fields[0] {
	case "/exit", "/quit":
		if !o.asJSON {
			fmt.Fprintf(out, "Bye. Resume with: weft chat --session %s\n", id)
		}
		return true, nil
	case "/help":
		fmt.Fprintln(out, chatHelp)
	case "/clear":
		n, err := c.ClearChat(ctx, id)
		if err != nil {
			return false, err
		}
		fmt.Fprintf(out, "Forgot %s.\n", english.Count(n, "message"))
	case "/usage":
		s, err := c.ChatSession(ctx, id)
		if err != nil {
			return false, err
		}
		if o.asJSON {
			return false, writeJSON(out, s.Usage)
		}
		fmt.Fprintf(out, "%d turns: %d tokens (%d in, %d out), $%.4f, %d calls\n", len(s.Turns), s.Usage.TotalTokens, s.Usage.PromptTokens, s.Usage.CompletionTokens, s.Usage.CostUSD, s.Usage.Calls)
	case "/tools":
		s, err := c.ChatSession(ctx, id)
		if err != nil {
			return false, err
		}
		if len(s.Turns) == 0 {
			fmt.Fprintln(out, "No turn yet.")
			return false, nil
		}
		last := s.Turns[len(s.Turns)-1]
		if o.asJSON {
			return false, writeJSON(out, last.ToolCalls)
		}
		if len(last.ToolCalls) == 0 {
			fmt.Fprintln(out, "The last turn called no tools.")
		}
		for _, raw := range last.ToolCalls {
			tc, _ := raw.(map[string]any)
			args, _ := json.Marshal(tc["arguments"])
			res := fmt.Sprint(tc["result"])
			if e, ok := tc["error"].(string); ok && e != "" {
				res = "error: " + e
			}
			fmt.Fprintf(out, "#%v %v %s → %s [%v, %vms]\n", tc["iteration"], tc["tool"], truncate(string(args), 120), truncate(res, 120), tc["status"], tc["durationMs"])
		}
	case "/export-workflow":
		all := false
		file := ""
		for _, f := range fields[1:] {
			if f == "--all" {
				all = true
			} else {
				file = f
			}
		}
		s, err := c.ChatSession(ctx, id)
		if err != nil {
			return false, err
		}
		name := strings.TrimSuffix(strings.TrimSuffix(baseName(file), ".json"), ".weft")
		def, err := weftclient.ExportWorkflow(s, all, name)
		if err != nil {
			return false, err
		}
		if file == "" {
			file = def.Name + ".weft.json"
		}
		b, err := json.MarshalIndent(def, "", "  ")
		if err != nil {
			return false, err
		}
		if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
			return false, err
		}
		fmt.Fprintf(out, "Wrote %s (%s). Check it: weft validate %s; run it: weft run %s\n", file, english.Count(len(def.Steps), "step"), file, file)
	default:
		return false, fmt.Errorf("unknown command %s (/help lists them)", fields[0])
	}
	return false, nil
}

func baseName(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}
