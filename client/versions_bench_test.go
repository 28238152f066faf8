package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
)

// steps100 is a 100-step workflow file, one step a line, whose step 50 writes text.
func steps100(text string) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"name\": \"big\",\n  \"steps\": [\n")
	for i := range 100 {
		t := fmt.Sprintf("step %d", i)
		if i == 50 {
			t = text
		}
		fmt.Fprintf(&b, "    {\"id\": \"s%d\", \"tool\": \"template\", \"inputs\": {\"text\": %q}}", i, t)
		if i < 99 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  ]\n}\n")
	return []byte(b.String())
}

// BenchmarkSaveWorkflow100Steps: one save of a 100-step file (validate, lock, record, atomic
// write), each a one-field change over the last version, as the builder saves.
func BenchmarkSaveWorkflow100Steps(b *testing.B) {
	f := weftclient.NewWorkflowFiles(b.TempDir())
	ctx := context.Background()
	base := 0
	for i := 0; b.Loop(); i++ {
		res, err := f.SaveWorkflow(ctx, "big", steps100(fmt.Sprint("edit ", i)), base, "ana", "")
		require.NoError(b, err)
		base = res.Version.ID
	}
}

// TestDiffOfAOneFieldChange: a one-field change of a 100-step file diffs as one line out and one
// in (with 3 lines of context each side and the headers: 11 lines).
func TestDiffOfAOneFieldChange(t *testing.T) {
	f, _ := newFiles(t)
	ctx := context.Background()
	_, err := f.SaveWorkflow(ctx, "big", steps100("before"), 0, "ana", "")
	require.NoError(t, err)
	_, err = f.SaveWorkflow(ctx, "big", steps100("after"), 1, "ana", "")
	require.NoError(t, err)
	diff, err := f.DiffWorkflowVersions("big", 1, 2)
	require.NoError(t, err)
	var changed int
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			changed++
		}
	}
	require.Equal(t, 2, changed, diff)
	require.Len(t, strings.Split(strings.TrimSuffix(diff, "\n"), "\n"), 11, diff)
}
