package starter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"google.golang.org/protobuf/proto"

	weftclient "github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// writeProto prints a message as indented JSON, in the one encoding every surface writes
// (weftclient.ProtoJSON: 64-bit integers as numbers, durationMs: 19, not "19"), indented to stay
// stable for people and scripts.
func writeProto(w io.Writer, m proto.Message) error {
	b, err := weftclient.ProtoJSON(m)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

// stepLine renders a step the way progress output shows it; pending are the run's pending
// reviews, for the command that decides a step awaiting review.
func stepLine(s *weftv1.StepState, runID string, pending []*weftv1.ReviewRequest) string {
	name := s.Name
	if name == "" {
		name = s.Id
	}
	switch s.Status {
	case runwire.StatusCompleted:
		if s.Reason != "" { // reused from run X (weft retry)
			return fmt.Sprintf("  ✔ %-32s %-28s [%s]", name, s.Summary, s.Reason)
		}
		return fmt.Sprintf("  ✔ %-32s %-28s [%dms]", name, s.Summary, s.DurationMs)
	case runwire.StatusSkipped:
		return fmt.Sprintf("  ⊘ %-32s skipped (%s)", name, s.Reason)
	case runwire.StatusFailed:
		return fmt.Sprintf("  ✗ %-32s %s", name, s.Error)
	case runwire.StatusCancelled:
		return fmt.Sprintf("  ⊘ %-32s cancelled", name)
	case runwire.StatusNotRun:
		return fmt.Sprintf("  · %-32s not run (%s)", name, s.Reason)
	case runwire.StatusAwaitingReview:
		return fmt.Sprintf("  ⏸ %-32s awaiting review (%s)", name, reviewHint(runID, s.Id, pending))
	case runwire.StatusRunning:
		if s.ItemsTotal > 0 {
			return fmt.Sprintf("  … %-32s running %d/%d", name, s.ItemsDone, s.ItemsTotal)
		}
		return fmt.Sprintf("  … %-32s running", name)
	}
	return fmt.Sprintf("  · %-32s %s", name, s.Status)
}

// reviewHint is a command that decides the pending reviews of a step, as written: a review's own
// id always names it, where --step is refused for a step with several (a forEach review, an agent's
// parallel tool calls).
func reviewHint(runID, step string, pending []*weftv1.ReviewRequest) string {
	var ids []string
	for _, r := range pending {
		if r.Step == step {
			ids = append(ids, r.Id)
		}
	}
	switch len(ids) {
	case 0: // reviews of a child run, say: `weft reviews` and `weft status` list their ids
		return fmt.Sprintf("weft review %s approve --id REVIEW; weft reviews lists the ids", runID)
	case 1:
		return fmt.Sprintf("weft review %s approve --id '%s'", runID, ids[0])
	}
	return fmt.Sprintf("%d reviews: weft review %s approve --id '%s', or all of them: --step %s --all", len(ids), runID, ids[0], step)
}

func header(w io.Writer, title string) {
	fmt.Fprintf(w, "%s\n%s\n", title, strings.Repeat("═", len([]rune(title))))
}

// toolCallLine renders an agent's tool call under its step.
func toolCallLine(tc *weftv1.ToolCall) string {
	detail := ""
	if tc.Error != "" {
		detail = tc.Error
	} else if tc.Result != nil {
		b, _ := tc.Result.MarshalJSON()
		detail = string(b)
	}
	args := ""
	if tc.Arguments != nil {
		b, _ := tc.Arguments.MarshalJSON()
		args = string(b)
	}
	line := fmt.Sprintf("      ↳ #%d %s %s → %s [%s, %dms]", tc.Iteration, tc.Tool, truncate(args, 80), truncate(detail, 80), tc.Status, tc.DurationMs)
	if tc.Rule != "" {
		line += " · " + tc.Rule
	}
	return line
}

// usageText renders token usage and cost as every surface does (weftclient.Usage).
func usageText(u *weftv1.TokenUsage) string { return weftclient.UsageOf(u).String() }

// printReviews shows pending review gates and how to decide each.
func printReviews(out io.Writer, id string, reviews []*weftv1.ReviewRequest) {
	for _, r := range reviews {
		fmt.Fprintf(out, "\nAwaiting review %s — %s\n", r.Id, r.Title)
		if r.Instructions != "" {
			fmt.Fprintf(out, "  %s\n", r.Instructions)
		}
		if r.Data != nil {
			b, _ := r.Data.MarshalJSON()
			fmt.Fprintf(out, "  data: %s\n", truncate(string(b), 600))
		}
		if r.ExecutionId != "" && r.ExecutionId != id {
			fmt.Fprintf(out, "  in child run %s\n", r.ExecutionId)
		}
		fmt.Fprintf(out, "  decide: weft review %s approve|edit|reject --id '%s'\n", id, r.Id)
		if r.Kind == runwire.GateToolCall {
			fmt.Fprintf(out, "  (approve or reject with --always: the later calls of %s in this run too)\n", r.Tool)
		}
	}
}

// protoList renders proto messages as a JSON array (never null).
func protoList[M proto.Message](list []M) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, m := range list {
		if i > 0 {
			buf.WriteByte(',')
		}
		b, _ := weftclient.ProtoJSON(m)
		buf.Write(b)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}
