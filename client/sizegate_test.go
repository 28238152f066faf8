package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"

	"github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

// startsCounted is a Temporal client that counts the runs it is asked to start.
type startsCounted struct {
	tclient.Client
	started int
}

func (s *startsCounted) ExecuteWorkflow(context.Context, tclient.StartWorkflowOptions, any, ...any) (tclient.WorkflowRun, error) {
	s.started++
	return nil, errors.New("fake: not started")
}

// TestStartRefusesOversizedRequest: a start whose inline input is 3 MB (the console's POST
// /api/runs, an MCP weft_run) is refused by the client with the limit named, before anything is
// sent; a prepared request over the limit (a retry's reused outputs) likewise.
func TestStartRefusesOversizedRequest(t *testing.T) {
	w, err := dsl.Load("big.json", []byte(`{"name":"big","inputs":{"doc":{"type":"string"}},
		"steps":[{"id":"t","tool":"template","inputs":{"text":"{{ inputs.doc }}"}}]}`))
	require.NoError(t, err)
	fake := &startsCounted{}
	c := client.New(fake, "q")
	_, err = c.Start(context.Background(), w, client.StartOptions{Origin: client.OriginClient,
		Inputs: map[string]any{"doc": strings.Repeat("x", 3<<20)}})
	var inv *client.InvalidError
	require.True(t, errors.As(err, &inv), "%v", err)
	require.ErrorContains(t, err, "the run's definition and inputs are 3.0 MB; Temporal accepts at most 2 MB per payload, so weft starts runs up to 1.5 MB")
	require.Zero(t, fake.started)

	_, err = c.StartRequest(context.Background(), "big", "", &weftv1.RunRequest{DefinitionJson: strings.Repeat(" ", 2<<20)})
	require.True(t, errors.As(err, &inv), "%v", err)
	require.ErrorContains(t, err, "weft starts runs up to 1.5 MB")
	require.Zero(t, fake.started)
}
