package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/workflows/dsl"
)

// BenchmarkStepVisible measures how long after a step finishes in the workflow (its finishedAt,
// the workflow's time) a client following the run sees it, and how many history events the run
// has: "polled" reads the state every 250ms and compares (Stream before issue 23, weft run's
// default interval); "followed/N" is N clients reading the run's events when its history grows
// (the median over every follower's sighting; the first follower decides the reviews): in one
// process (one Client: they share a query per change) or "apart/N", each its own Client. The step
// is a template step right after a review and before another (the run goes on: its end does not
// reveal the step), so the time is not an activity's.
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
		name      string
		polled    bool
		followers int
		apart     bool // each follower its own Client (as separate processes are)
	}{{"polled", true, 1, false}, {"followed/1", false, 1, false}, {"followed/10", false, 10, false}, {"followed/100", false, 100, false},
		{"apart/10", false, 10, true}, {"apart/100", false, 100, true}} {
		b.Run(mode.name, func(b *testing.B) {
			var ms []float64
			var mu sync.Mutex
			history := 0
			for i := 0; b.Loop(); i++ {
				id := fmt.Sprintf("events-bench-%s-%d-%d", strings.ReplaceAll(mode.name, "/", "-"), time.Now().UnixNano(), i)
				_, err := wc.Start(context.Background(), w, weftclient.StartOptions{ID: id})
				require.NoError(b, err)
				var wg sync.WaitGroup
				for f := range mode.followers {
					wg.Add(1)
					fc := wc
					if mode.apart {
						fc = weftclient.New(c, queue)
					}
					go func() {
						defer wg.Done()
						var seen time.Duration
						_, err := fc.Stream(context.Background(), id, weftclient.StreamOptions{Polled: mode.polled, NoDeltas: true}, func(e events.Event) {
							switch {
							case e.Type == events.ReviewRequested && f == 0:
								go func() {
									_, err := wc.Review(context.Background(), id, weftclient.Decision{Step: e.Step, Decision: "approve"})
									if err != nil {
										b.Error(err)
									}
								}()
							case e.Type == events.StepCompleted && e.Step == "after":
								seen = time.Since(e.StepState.GetFinishedAt().AsTime())
							}
						})
						if err != nil || seen == 0 {
							b.Errorf("follower %d: %v (saw the step after %s)", f, err, seen)
						}
						mu.Lock()
						ms = append(ms, float64(seen.Microseconds())/1000)
						mu.Unlock()
					}()
				}
				wg.Wait()
				history += historyLength(b, c, id)
			}
			b.ReportMetric(median(ms), "ms-median-visible")
			b.ReportMetric(float64(history)/float64(b.N), "history-events/run")
		})
	}
}

// BenchmarkTextVisible measures how long after the model sent a piece of text (the fake endpoint
// flushed it) a client following the run sees it in an llm_delta, for each of the 40 pieces
// (a piece the last delta does not reach arrives with llm_finished and is not counted): "polled" is
// the state-polling Stream (before issue 23), "followed" the event model with its text reads. The
// model sends 40 words, one every 25 ms.
//
//	go test ./integration -run '^$' -bench TextVisible -benchtime 5x
func BenchmarkTextVisible(b *testing.B) {
	words := make([]string, 40)
	for i := range words {
		words[i] = fmt.Sprintf("w%02d", i)
	}
	answer := strings.Join(words, " ")
	var mu sync.Mutex
	sentAt := map[int]time.Time{} // text length -> when it was flushed
	fake := fakellm.New()
	fake.Respond = func(fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: answer, ChunkDelay: 25 * time.Millisecond}
	}
	fake.Sent = func(soFar string) {
		mu.Lock()
		sentAt[len(soFar)] = time.Now()
		mu.Unlock()
	}
	b.Cleanup(fake.Close)
	c := dial(b)
	queue := "text-bench"
	startWorkerWithConfig(b, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "local-model"}, nil)
	wc := weftclient.New(c, queue)
	w, err := dsl.Load("text.json", []byte(`{"name":"text","steps":[{"id":"say","tool":"llm","inputs":{"prompt":"say it"}}]}`))
	require.NoError(b, err)
	for _, mode := range []struct {
		name   string
		polled bool
	}{{"polled", true}, {"followed", false}} {
		b.Run(mode.name, func(b *testing.B) {
			var ms []float64
			for i := 0; b.Loop(); i++ {
				mu.Lock()
				clear(sentAt)
				mu.Unlock()
				id := fmt.Sprintf("text-bench-%s-%d-%d", mode.name, time.Now().UnixNano(), i)
				_, err := wc.Start(context.Background(), w, weftclient.StartOptions{ID: id})
				require.NoError(b, err)
				text, seen := "", 0 // seen: the length of text whose pieces are measured
				_, err = wc.Stream(context.Background(), id, weftclient.StreamOptions{Polled: mode.polled}, func(e events.Event) {
					if e.Type != events.LLMDelta {
						return
					}
					text += e.Text
					now := time.Now()
					mu.Lock()
					defer mu.Unlock()
					// every piece this delta makes visible for the first time: how long after it
					// was flushed
					for n, at := range sentAt {
						if n > seen && n <= len(text) {
							ms = append(ms, float64(now.Sub(at).Microseconds())/1000)
						}
					}
					seen = len(text)
				})
				require.NoError(b, err)
			}
			require.NotEmpty(b, ms, "no piece was seen in a delta")
			b.ReportMetric(median(ms), "ms-median-visible")
			b.ReportMetric(float64(len(ms))/float64(b.N), "pieces-seen/run")
		})
	}
}
