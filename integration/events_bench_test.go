package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows/dsl"
)

// BenchmarkStepVisible measures how long after a step finishes in the workflow (its finishedAt,
// the workflow's time) a client following the run sees it: "polled" reads the state every 250ms
// and compares (Stream before issue 23, weft run's default interval); "waited" reads the run's
// events and waits for the next with the wait-events Update. The step is a template step right
// after a review and before another (the run goes on: its end does not reveal the step), so the
// time is not an activity's.
//
//	go test ./integration -run '^$' -bench StepVisible -benchtime 20x
func BenchmarkStepVisible(b *testing.B) {
	c := dial(b)
	queue := "events-bench"
	startWorker(b, c, queue, nil)
	wc := weftclient.New(c, queue)
	w, err := dsl.Load("visible.json", []byte(`{"name":"visible","steps":[
	  {"id":"gate","tool":"review","inputs":{"title":"go?","data":{"n":1}}},
	  {"id":"after","tool":"template","inputs":{"text":"{{ gate.output.decision }}"}},
	  {"id":"hold","tool":"review","inputs":{"title":"{{ after.output.text }}: done?","data":{"n":2}}}]}`))
	require.NoError(b, err)
	for _, mode := range []struct {
		name   string
		polled bool
	}{{"polled", true}, {"waited", false}} {
		b.Run(mode.name, func(b *testing.B) {
			var ms []float64
			for i := 0; b.Loop(); i++ {
				id := fmt.Sprintf("events-bench-%s-%d-%d", mode.name, time.Now().UnixNano(), i)
				_, err := wc.Start(context.Background(), w, weftclient.StartOptions{ID: id})
				require.NoError(b, err)
				var seen time.Duration
				_, err = wc.Stream(context.Background(), id, weftclient.StreamOptions{Polled: mode.polled, NoDeltas: true}, func(e weftclient.Event) {
					switch {
					case e.Type == weftclient.EventReviewRequested:
						go func() {
							_, err := wc.Review(context.Background(), id, weftclient.Decision{Step: e.Step, Decision: "approve"})
							if err != nil {
								b.Error(err)
							}
						}()
					case e.Type == weftclient.EventStepCompleted && e.Step == "after":
						seen = time.Since(e.StepState.GetFinishedAt().AsTime())
					}
				})
				require.NoError(b, err)
				require.NotZero(b, seen)
				ms = append(ms, float64(seen.Microseconds())/1000)
			}
			b.ReportMetric(median(ms), "ms-median-visible")
		})
	}
}
