package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
)

// TestSchedules: a schedule starts the workflow with its inputs; trigger runs it now; list,
// describe, pause and delete work on it.
func TestSchedules(t *testing.T) {
	c := dial(t)
	queue := "schedules"
	startWorker(t, c, queue, nil)
	code, out, errOut := weft(t, queue, "schedule", "create", "nightly-costs", "cost-analysis", "--every", "24h", "--input", "docs=1000", "--note", "test")
	require.Equal(t, 0, code, out+errOut)
	code, _, errOut = weft(t, queue, "schedule", "create", "bad-cron", "cost-analysis", "--cron", "not a cron", "--input", "docs=1")
	require.Equal(t, 2, code, errOut)
	code, _, errOut = weft(t, queue, "schedule", "create", "nothing", "cost-analysis", "--input", "docs=1")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "give either --cron")

	code, out, errOut = weft(t, queue, "schedule", "trigger", "nightly-costs")
	require.Equal(t, 0, code, out+errOut)
	wc := weftclient.New(c, queue)
	var started string
	require.Eventually(t, func() bool {
		s, err := wc.DescribeSchedule(context.Background(), "nightly-costs")
		if err != nil || len(s.Recent) == 0 {
			return false
		}
		started = s.Recent[0]
		return true
	}, 30*time.Second, 100*time.Millisecond, "trigger started a run")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := wc.Result(ctx, started)
	require.NoError(t, err)
	require.Contains(t, protoJSON(t, res.Output), "estimates")
	require.True(t, strings.HasPrefix(started, "nightly-costs-run"))

	require.Eventually(t, func() bool {
		_, out, _ := weft(t, queue, "schedule", "list", "--json")
		return strings.Contains(out, `"nightly-costs"`) && strings.Contains(out, `"cost-analysis"`)
	}, 15*time.Second, 100*time.Millisecond)
	code, _, errOut = weft(t, queue, "schedule", "pause", "nightly-costs")
	require.Equal(t, 0, code, errOut)
	s, err := wc.DescribeSchedule(context.Background(), "nightly-costs")
	require.NoError(t, err)
	require.True(t, s.Paused)
	// A file may declare its own schedule and inputs.
	file := writeTemp(t, `{"name":"declared","inputs":{"n":{"type":"number","required":true}},"schedule":{"every":3600000,"inputs":{"n":3}},
	  "steps":[{"id":"t","tool":"template","inputs":{"text":"n={{ inputs.n }}"}}],"output":"{{ t.output.text }}"}`)
	code, out, errOut = weft(t, queue, "schedule", "create", "declared-1", file)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "runs every 1h0m0s")
	code, _, errOut = weft(t, queue, "schedule", "delete", "declared-1")
	require.Equal(t, 0, code, errOut)

	code, _, errOut = weft(t, queue, "schedule", "delete", "nightly-costs")
	require.Equal(t, 0, code, errOut)
	code, _, errOut = weft(t, queue, "schedule", "describe", "nightly-costs")
	require.Equal(t, 2, code, errOut)
	// A schedule that does not exist is named as a schedule, with how to list them (issue 21: it
	// said "no run").
	for _, action := range []string{"delete", "pause", "describe"} {
		code, _, errOut = weft(t, queue, "schedule", action, "nope")
		require.Equal(t, 2, code, errOut)
		require.Contains(t, errOut, `no schedule named "nope"; list the schedules with `+"`weft schedule list`", action)
		require.NotContains(t, errOut, "no run", action)
	}
}
