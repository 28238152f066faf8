package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/ops/soak"
)

// TestSoakShort is the short fault campaign (make soak runs the full one): the stack as separate
// weft processes, worker kill -9, server SIGTERM and SIGKILL, the store unreachable, provider
// faults and load on the gateway; every scenario's checks must pass.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the fault campaign starts real processes")
	}
	bin := buildWeft(t)
	o := soak.Short
	o.Weft, o.Dir = bin, t.TempDir()
	rows, err := soak.Run(context.Background(), o)
	var table bytes.Buffer
	soak.Print(&table, rows)
	t.Log("\n" + table.String())
	require.NoError(t, err)
	require.Len(t, rows, 5)
	for _, r := range rows {
		if !r.Passed() {
			logs, _ := filepath.Glob(filepath.Join(o.Dir, "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				if len(b) > 4000 {
					b = b[len(b)-4000:]
				}
				t.Logf("--- %s (tail)\n%s", filepath.Base(l), b)
			}
			t.Fatalf("scenario %q failed:\n%s", r.Scenario, table.String())
		}
	}
}
