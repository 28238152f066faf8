package starter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows"
)

// queryState asks a run for its ExecutionState.
func queryState(ctx context.Context, c client.Client, id string) (*weftv1.ExecutionState, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, id, "", workflows.QueryState)
	if err != nil {
		return nil, fmt.Errorf("run %s: state query failed (is a weft worker running?): %w", id, err)
	}
	var st weftv1.ExecutionState
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("run %s: reading state: %w", id, err)
	}
	return &st, nil
}

// writeProto prints a message as indented JSON. protojson's own spacing varies on purpose, so
// the output is re-indented to stay stable for people and scripts.
func writeProto(w io.Writer, m proto.Message) error {
	b, err := protojson.Marshal(m)
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

// stepLine renders a step the way progress output shows it.
func stepLine(s *weftv1.StepState, runID string) string {
	name := s.Name
	if name == "" {
		name = s.Id
	}
	switch s.Status {
	case workflows.StatusCompleted:
		return fmt.Sprintf("  ✔ %-32s %-28s [%dms]", name, s.Summary, s.DurationMs)
	case workflows.StatusSkipped:
		return fmt.Sprintf("  ⊘ %-32s skipped (%s)", name, s.Reason)
	case workflows.StatusFailed:
		return fmt.Sprintf("  ✗ %-32s %s", name, s.Error)
	case workflows.StatusCancelled:
		return fmt.Sprintf("  ⊘ %-32s cancelled", name)
	case workflows.StatusAwaitingReview:
		return fmt.Sprintf("  ⏸ %-32s awaiting review (weft review %s approve --step %s)", name, runID, s.Id)
	case workflows.StatusRunning:
		if s.ItemsTotal > 0 {
			return fmt.Sprintf("  … %-32s running %d/%d", name, s.ItemsDone, s.ItemsTotal)
		}
		return fmt.Sprintf("  … %-32s running", name)
	}
	return fmt.Sprintf("  · %-32s %s", name, s.Status)
}

func header(w io.Writer, title string) {
	fmt.Fprintf(w, "%s\n%s\n", title, strings.Repeat("═", len([]rune(title))))
}
