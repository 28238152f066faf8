package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/weftworks/weft/codec"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/starter"
	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestEncryptedPayloads: with WEFT_CODEC_KEYS set, every process encrypts what it puts into
// history; a run started before encryption was turned on still completes and reads; the codec
// server decodes for the Temporal UI, from its origin only.
func TestEncryptedPayloads(t *testing.T) {
	k := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	t.Setenv("WEFT_CODEC_KEYS", "k1="+k)
	o, err := codec.FromEnv(os.Getenv)
	require.NoError(t, err)
	dc, err := codec.DataConverter(o)
	require.NoError(t, err)
	ec, err := client.Dial(client.Options{HostPort: server.Address, Namespace: server.Namespace, Logger: quiet(), DataConverter: dc})
	require.NoError(t, err)
	defer ec.Close()
	queue := "codec"
	startWorker(t, ec, queue, nil)

	// A run started by a process without the codec, before encryption "was turned on".
	plain := dial(t)
	req, err := runwire.NewRequest(mustTemplate(t, "cost-analysis"), "cost-analysis", map[string]any{"docs": 1000.0}, nil)
	require.NoError(t, err)
	old, err := plain.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "codec-old", TaskQueue: queue}, runwire.WorkflowType, req)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, ec.GetWorkflow(ctx, old.GetID(), "").Get(ctx, nil), "the worker reads the plain input")

	code, _, errOut := weft(t, queue, "run", "approval-demo", "--id", "codec-1", "--detach", "--input", "version=7.7")
	require.Equal(t, 0, code, errOut)
	waitForReview(t, ec, "codec-1")
	code, out, errOut := weft(t, queue, "review", "codec-1", "approve", "--reviewer", "ana")
	require.Equal(t, 0, code, out+errOut)
	require.NoError(t, ec.GetWorkflow(ctx, "codec-1", "").Get(ctx, nil))
	code, out, errOut = weft(t, queue, "status", "codec-1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Release 7.7", "the CLI decodes")

	// History holds ciphertext only.
	var started *commonpb.Payload
	var raw strings.Builder
	it := plain.GetWorkflowHistory(ctx, "codec-1", "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
			started = a.GetInput().GetPayloads()[0]
		}
		b, _ := protojson.Marshal(ev)
		raw.Write(b)
	}
	require.True(t, codec.IsEncrypted(started))
	require.NotContains(t, raw.String(), base64.StdEncoding.EncodeToString([]byte("Release 7.7")))
	require.NotContains(t, raw.String(), "Release 7.7")

	// The codec server decodes for the UI's origin and refuses others.
	codecs, err := codec.Codecs(o)
	require.NoError(t, err)
	srv := httptest.NewServer(starter.CodecHandler(codecs, "http://127.0.0.1:8233", nil))
	defer srv.Close()
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{started}})
	require.NoError(t, err)
	post := func(origin string) (int, string) {
		r, _ := http.NewRequest(http.MethodPost, srv.URL+"/decode", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	status, decoded := post("http://127.0.0.1:8233")
	require.Equal(t, http.StatusOK, status, decoded)
	var ps commonpb.Payloads
	require.NoError(t, protojson.Unmarshal([]byte(decoded), &ps))
	require.False(t, codec.IsEncrypted(ps.Payloads[0]))
	require.Contains(t, string(ps.Payloads[0].Data), "Release", "the decoded payload is the run request, readable")
	status, _ = post("http://evil.example")
	require.Equal(t, http.StatusForbidden, status)
}

func mustTemplate(t *testing.T, name string) *dsl.Workflow {
	t.Helper()
	tm, err := templates.Get(name)
	require.NoError(t, err)
	w, err := dsl.Load(tm.Name, tm.Data)
	require.NoError(t, err)
	return w
}
