package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
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

// BenchmarkStepVisibleProcesses is BenchmarkStepVisible with followers in separate processes
// (this test binary again, one process each, each its own connection to Temporal): "direct/N"
// follows as Stream does without a gateway (each process watches the run's history and asks the
// run's worker for its events after each workflow task), "gateway/N" through the gateway's
// /v1/runs/{id}/events (FollowThrough: the gateway's one reader answers them all), "none/0" is
// the run with no follower. It reports the median and the 99th percentile, over every follower's
// sighting, of the time from the step's finishedAt (the workflow's time) to the follower seeing
// it, and the history events per run. The step is a template step between two reviews (the run
// goes on: its end does not reveal the step); the driver decides the reviews once every follower
// is following.
//
//	go test ./integration -run '^$' -bench StepVisibleProcesses -benchtime 3x
func BenchmarkStepVisibleProcesses(b *testing.B) {
	queue := "processes-bench"
	s := newHTTPStack(b, queue)
	w, err := dsl.Load("visible.json", []byte(`{"name":"visible","steps":[
	  {"id":"gate","tool":"review","inputs":{"title":"go?","data":{"n":1}}},
	  {"id":"after","tool":"template","inputs":{"text":"{{ gate.output.decision }}"}},
	  {"id":"hold","tool":"review","inputs":{"title":"{{ after.output.text }}: done?","data":{"n":2}}}]}`))
	require.NoError(b, err)
	type mode struct {
		name      string
		gateway   bool
		followers int
	}
	modes := []mode{{"none", false, 0}}
	for _, n := range []int{1, 10, 100} {
		modes = append(modes, mode{"direct", false, n}, mode{"gateway", true, n})
	}
	for _, m := range modes {
		b.Run(fmt.Sprintf("%s/%d", m.name, m.followers), func(b *testing.B) {
			var ms []float64
			history := 0
			for i := 0; b.Loop(); i++ {
				id := fmt.Sprintf("processes-bench-%s-%d-%d-%d", m.name, m.followers, time.Now().UnixNano(), i)
				for _, f := range followInProcesses(b, s, w, id, m.followers, m.gateway, false, true) {
					require.Len(b, f.after, 1, "every follower saw the step once")
					ms = append(ms, f.after...)
				}
				history += historyLength(b, s.wc.Temporal(), id)
			}
			if len(ms) > 0 {
				b.ReportMetric(percentile(ms, 50), "ms-p50-visible")
				b.ReportMetric(percentile(ms, 99), "ms-p99-visible")
			}
			b.ReportMetric(float64(history)/float64(b.N), "history-events/run")
		})
	}
}

// followerLines is what one follower process printed: its sighting of step after (ms after
// the step's finishedAt) and, following text, each llm_delta (the text so far's length, when it
// arrived).
type followerLines struct {
	after  []float64
	deltas []textSeen
}

type textSeen struct {
	length int
	at     time.Time
}

// followInProcesses starts a run of w, starts n follower processes (with model text when text),
// approves review gate once each follows the run and review hold (when hold) once one of them saw
// it, and returns what each printed.
func followInProcesses(b *testing.B, s *httpStack, w *dsl.Workflow, id string, n int, gateway, text, hold bool) []followerLines {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err := s.wc.Start(ctx, w, weftclient.StartOptions{ID: id})
	require.NoError(b, err)
	if n == 0 {
		approveWhenPending(b, ctx, s.wc, id, "gate")
		if hold {
			approveWhenPending(b, ctx, s.wc, id, "hold")
		}
		require.NoError(b, s.wc.Temporal().GetWorkflow(ctx, id, "").Get(ctx, nil))
		return nil
	}
	env := append(os.Environ(), "WEFT_AS_FOLLOWER="+id, "WEFT_ADDRESS="+server.Address, "WEFT_NAMESPACE="+server.Namespace,
		"WEFT_TASK_QUEUE="+s.wc.TaskQueue())
	if gateway {
		env = append(env, weftclient.EnvGateway+"="+s.url, weftclient.EnvGatewayKey+"="+s.keys["rita"])
	}
	if text {
		env = append(env, "WEFT_FOLLOW_TEXT=1")
	}
	var (
		ready, held sync.WaitGroup
		heldOnce    sync.Once
		read        sync.WaitGroup
		procs       []*exec.Cmd
	)
	got := make([]followerLines, n)
	ready.Add(n)
	held.Add(1)
	for i := range n {
		cmd := exec.CommandContext(ctx, os.Args[0])
		cmd.Env = env
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		require.NoError(b, err)
		require.NoError(b, cmd.Start())
		procs = append(procs, cmd)
		read.Add(1)
		go func(out io.Reader) {
			defer read.Done()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				switch {
				case len(f) == 1 && f[0] == "ready":
					ready.Done()
				case len(f) == 1 && f[0] == "hold":
					heldOnce.Do(held.Done)
				case len(f) == 2 && f[0] == "after":
					if v, err := strconv.ParseFloat(f[1], 64); err == nil {
						got[i].after = append(got[i].after, v)
					}
				case len(f) == 3 && f[0] == "delta":
					length, err1 := strconv.Atoi(f[1])
					at, err2 := strconv.ParseInt(f[2], 10, 64)
					if err1 == nil && err2 == nil {
						got[i].deltas = append(got[i].deltas, textSeen{length, time.Unix(0, at)})
					}
				}
			}
		}(out)
	}
	ready.Wait()
	approveWhenPending(b, ctx, s.wc, id, "gate")
	if hold {
		held.Wait()
		approveWhenPending(b, ctx, s.wc, id, "hold")
	}
	read.Wait()
	for _, p := range procs {
		require.NoError(b, p.Wait(), "a follower process failed")
	}
	return got
}

// BenchmarkTextVisibleProcesses is BenchmarkTextVisible with followers in separate processes,
// "direct/N" and "gateway/N" as in BenchmarkStepVisibleProcesses: how long after the model sent a
// piece of text (the fake endpoint flushed it) each follower sees it in an llm_delta, for each of
// the 40 pieces (one every 25 ms; a piece no delta reaches before llm_finished is not counted),
// median and 99th percentile over every follower's pieces. The run waits for a review first, so
// that every follower follows it before the model starts.
//
//	go test ./integration -run '^$' -bench TextVisibleProcesses -benchtime 2x
func BenchmarkTextVisibleProcesses(b *testing.B) {
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
	s := newHTTPStack(b, "text-processes-bench", activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "local-model"})
	w, err := dsl.Load("text.json", []byte(`{"name":"text","steps":[
	  {"id":"gate","tool":"review","inputs":{"title":"go?","data":{"n":1}}},
	  {"id":"say","tool":"llm","inputs":{"prompt":"say it {{ gate.output.decision }}"}}]}`))
	require.NoError(b, err)
	for _, n := range []int{1, 10, 100} {
		for _, gateway := range []bool{false, true} {
			name := map[bool]string{false: "direct", true: "gateway"}[gateway]
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				var ms []float64
				for i := 0; b.Loop(); i++ {
					mu.Lock()
					clear(sentAt)
					mu.Unlock()
					id := fmt.Sprintf("text-processes-%s-%d-%d-%d", name, n, time.Now().UnixNano(), i)
					got := followInProcesses(b, s, w, id, n, gateway, true, false)
					mu.Lock()
					for _, f := range got {
						seen := 0 // the length of text whose pieces are measured
						for _, d := range f.deltas {
							for length, at := range sentAt {
								if length > seen && length <= d.length {
									ms = append(ms, float64(d.at.Sub(at).Microseconds())/1000)
								}
							}
							seen = d.length
						}
					}
					mu.Unlock()
				}
				require.NotEmpty(b, ms, "no piece was seen in a delta")
				b.ReportMetric(percentile(ms, 50), "ms-p50-visible")
				b.ReportMetric(percentile(ms, 99), "ms-p99-visible")
				b.ReportMetric(float64(len(ms))/float64(b.N*n), "pieces-seen/follower")
			})
		}
	}
}

// approveWhenPending approves step's review once the run's state lists it.
func approveWhenPending(b *testing.B, ctx context.Context, wc *weftclient.Client, id, step string) {
	require.Eventually(b, func() bool {
		st, err := wc.State(ctx, id)
		if err != nil {
			return false
		}
		for _, r := range st.GetPendingReviews() {
			if r.Step == step {
				return true
			}
		}
		return false
	}, time.Minute, 10*time.Millisecond)
	_, err := wc.Review(ctx, id, weftclient.Decision{Step: step, Decision: "approve"})
	require.NoError(b, err)
}

// followerMain is a follower process of BenchmarkStepVisibleProcesses: it follows run
// WEFT_AS_FOLLOWER (through WEFT_GATEWAY when set) and prints "ready" once it saw the first
// review requested, "after MS" when it sees step after completed (MS after the step's
// finishedAt), "hold" when it sees the second review requested, and with WEFT_FOLLOW_TEXT
// "delta LENGTH UNIXNANO" for each llm_delta (the text's length so far, when it arrived).
func followerMain() int {
	ctx := context.Background()
	wc, err := weftclient.Dial(ctx, weftclient.Options{Address: os.Getenv("WEFT_ADDRESS"), Namespace: os.Getenv("WEFT_NAMESPACE"), TaskQueue: os.Getenv("WEFT_TASK_QUEUE")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer wc.Close()
	if g := os.Getenv(weftclient.EnvGateway); g != "" {
		wc.FollowThrough(weftclient.Gateway{URL: g, Key: os.Getenv(weftclient.EnvGatewayKey)})
	}
	out := bufio.NewWriter(os.Stdout)
	text := 0
	_, err = wc.Stream(ctx, os.Getenv("WEFT_AS_FOLLOWER"), weftclient.StreamOptions{NoDeltas: os.Getenv("WEFT_FOLLOW_TEXT") == ""}, func(e events.Event) {
		switch {
		case e.Type == events.LLMDelta:
			text += len(e.Text)
			fmt.Fprintf(out, "delta %d %d\n", text, time.Now().UnixNano())
		case e.Type == events.ReviewRequested && e.Step == "gate":
			fmt.Fprintln(out, "ready")
		case e.Type == events.StepCompleted && e.Step == "after":
			fmt.Fprintf(out, "after %.3f\n", float64(time.Since(e.StepState.GetFinishedAt().AsTime()).Microseconds())/1000)
		case e.Type == events.ReviewRequested && e.Step == "hold":
			fmt.Fprintln(out, "hold")
		default:
			return
		}
		_ = out.Flush()
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// percentile is the p-th percentile of xs (nearest rank).
func percentile(xs []float64, p float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
