package integration

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/workflows/dsl"
)

// eventsFlow has parallel steps, a forEach with a failing item (continueOnError), a review and an
// agent that calls a tool and streams its answer.
const eventsFlow = `{"name":"events","defaults":{"collection":"docs"},"inputs":{"xs":{"type":"array","default":["good","bad"]}},"steps":[
  {"id":"a","tool":"search","inputs":{"query":"x"}},
  {"id":"b","tool":"search","inputs":{"query":"y"}},
  {"id":"each","tool":"embed","forEach":"{{ inputs.xs }}","concurrency":1,"continueOnError":true,"inputs":{"text":"{{ item }}"}},
  {"id":"ok","tool":"review","inputs":{"title":"Go on? {{ a.output.query }}{{ b.output.query }}","data":"x"}},
  {"id":"helper","tool":"agent","inputs":{"prompt":"{{ ok.output.decision }}","tools":["search"]}}],
  "output":"{{ helper.output.text }}"}`

// collector keeps the events one Stream call delivered.
type collector struct {
	mu  sync.Mutex
	evs []events.Event
}

func (c *collector) add(e events.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evs = append(c.evs, e)
}

func (c *collector) has(typ, step string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.evs {
		if e.Type == typ && e.Step == step {
			return true
		}
	}
	return false
}

// TestStreamAcrossReconnect follows a run, disconnects while it waits for a review, and follows it
// again from the last sequence number seen: together the two streams hold every event of the run
// once, in order (1, 2, 3, … as a fresh read after the end has them), a step's start before its
// tool calls and review, and the model's deltas add up to its answer, last piece included.
func TestStreamAcrossReconnect(t *testing.T) {
	c := dial(t)
	queue := "events-reconnect"
	answer := "Retries back off exponentially and stop after five attempts."
	fake := fakellm.New(
		fakellm.ToolCall("c1", "search", `{"query":"retries"}`),
		fakellm.Reply{Text: answer, ChunkDelay: 40 * time.Millisecond},
	)
	defer fake.Close()
	embed := func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		if in["text"] == "bad" {
			return nil, nil, errors.New("cannot embed bad")
		}
		return map[string]any{"dimensions": 3}, nil, nil
	}
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "m"},
		map[string]activities.Handler{"search": fakeSearch, "embed": embed})
	wc := weftclient.New(c, queue)
	w, err := dsl.Load("events.json", []byte(eventsFlow))
	require.NoError(t, err)
	ctx := context.Background()
	_, err = wc.Start(ctx, w, weftclient.StartOptions{ID: "events-reconnect-1"})
	require.NoError(t, err)

	first := &collector{}
	sctx, disconnect := context.WithCancel(ctx)
	go func() {
		require.Eventually(t, func() bool { return first.has(events.ReviewRequested, "ok") }, 60*time.Second, 10*time.Millisecond)
		disconnect()
	}()
	_, err = wc.Stream(sctx, "events-reconnect-1", weftclient.StreamOptions{}, first.add)
	require.ErrorIs(t, err, context.Canceled)
	var last int64
	for _, e := range first.evs {
		last = max(last, e.Seq)
	}
	_, err = wc.Review(ctx, "events-reconnect-1", weftclient.Decision{Step: "ok", Decision: "approve", Reviewer: "ana"})
	require.NoError(t, err)
	second := &collector{}
	res, err := wc.Stream(ctx, "events-reconnect-1", weftclient.StreamOptions{Since: last}, second.add)
	require.NoError(t, err)
	require.Contains(t, string(protoJSON(t, res.Output)), "five attempts")

	full := &collector{}
	_, err = wc.Stream(ctx, "events-reconnect-1", weftclient.StreamOptions{NoDeltas: true}, full.add)
	require.NoError(t, err)

	seqs := func(evs []events.Event) []string {
		var out []string
		for _, e := range evs {
			if e.Seq > 0 {
				out = append(out, fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.Key+"|"+e.Step))
			}
		}
		return out
	}
	joined := append(seqs(first.evs), seqs(second.evs)...)
	require.Equal(t, seqs(full.evs), joined, "the two streams together are the whole run, once, in order")
	for i, l := range joined {
		require.True(t, strings.HasPrefix(l, fmt.Sprintf("%d ", i+1)), "event %d is numbered %s", i+1, l)
	}
	pos := func(l string) int {
		for i, s := range joined {
			if strings.HasSuffix(s, " "+l) {
				return i
			}
		}
		t.Fatalf("%q is missing from %v", l, joined)
		return -1
	}
	require.Less(t, pos("step_started |ok"), pos("review_requested ok|ok"))
	require.Less(t, pos("review_decided ok|ok"), pos("step_completed |ok"))
	require.Less(t, pos("step_started |helper"), pos("tool_call_started helper/c1|helper"))
	require.Less(t, pos("tool_call_finished helper/c1|helper"), pos("step_completed |helper"))
	require.Less(t, pos("item_failed each[1]|each"), pos("step_failed |each"))

	// The model's text: by attempt, the deltas add up to the answer.
	texts := map[string]string{}
	var keys []string
	for _, e := range append(first.evs, second.evs...) {
		if e.Type == events.LLMDelta {
			k := fmt.Sprintf("%s#%d", e.Activity, e.Attempt)
			if _, ok := texts[k]; !ok {
				keys = append(keys, k)
			}
			require.Equal(t, len(texts[k]), e.Offset, "delta of %s at offset %d", k, e.Offset)
			texts[k] += e.Text
		}
	}
	sort.Strings(keys)
	require.NotEmpty(t, keys)
	require.Equal(t, answer, texts[keys[len(keys)-1]])
	require.Equal(t, events.RunCompleted, second.evs[len(second.evs)-1].Type)
}
