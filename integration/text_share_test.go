package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestStreamsShareTextReads: the Streams of one Client that follow a run while its model writes
// (a gateway's streams, a console's pages) share the reads of its text, one description of the
// run per DeltaInterval however many follow it: ten followers of a model call that writes for
// a second make about ten reads, not a hundred, and each gets the whole answer, its pieces in
// order.
func TestStreamsShareTextReads(t *testing.T) {
	queue := "text-share"
	words := make([]string, 40)
	for i := range words {
		words[i] = fmt.Sprintf("w%02d", i)
	}
	answer := strings.Join(words, " ")
	fake := fakellm.New()
	fake.Respond = func(fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: answer, ChunkDelay: 25 * time.Millisecond}
	}
	defer fake.Close()
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "local-model"}, nil)
	var describes atomic.Int64
	count := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if strings.HasSuffix(method, "/DescribeWorkflowExecution") {
			describes.Add(1)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	tc, err := client.Dial(client.Options{HostPort: server.Address, Namespace: server.Namespace, Logger: quiet(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(count)}}})
	require.NoError(t, err)
	defer tc.Close()
	wc := weftclient.New(tc, queue)
	w, err := dsl.Load("text-share.json", []byte(`{"name":"text-share","steps":[{"id":"say","tool":"llm","inputs":{"prompt":"say it"}}]}`))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := wc.Start(ctx, w, weftclient.StartOptions{})
	require.NoError(t, err)
	const n = 10
	texts := make([]string, n)
	deltas := make([]int, n)
	gaps := make([]int, n) // pieces that did not go on where the last ended
	errs := make([]error, n)
	var wg sync.WaitGroup
	before := describes.Load()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = wc.Stream(ctx, run.ID, weftclient.StreamOptions{}, func(e events.Event) {
				if e.Type == events.LLMDelta {
					if e.Offset != len(texts[i]) {
						gaps[i]++
					}
					texts[i] += e.Text
					deltas[i]++
				}
			})
		}()
	}
	wg.Wait()
	reads := describes.Load() - before
	t.Logf("%d followers: %d descriptions of the run, deltas per follower %v", n, reads, deltas)
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, answer, texts[i], "follower %d got the whole answer", i)
		require.Zero(t, gaps[i], "follower %d: each piece goes on where the last ended", i)
	}
	require.Greater(t, deltas[0], 2, "the text came in pieces while the model wrote")
	require.Less(t, reads, int64(40), "the followers share the reads of the run's text (a second of text, read every 100 ms)")
}
