package client_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestClientDefinitionNotifiesOnlyDeclaredWebhooks: a client-origin run request whose file sends
// its events to a URL is refused before anything starts; the operator's own file may.
func TestClientDefinitionNotifiesOnlyDeclaredWebhooks(t *testing.T) {
	w, err := dsl.Load("n.json", []byte(`{"name": "n", "notify": ["ops", "https://collector.example/x"],
		"steps": [{"id": "a", "tool": "template", "inputs": {"text": "x"}}]}`))
	require.NoError(t, err)

	_, err = client.Request(w, client.StartOptions{Origin: client.OriginClient, StartedBy: "ana"})
	var inv *client.InvalidError
	require.True(t, errors.As(err, &inv), "%v", err)
	require.ErrorContains(t, err, `notify[1] (https://collector.example/…) gives a URL: a definition sent by a client may only name the webhooks the operator declared`)

	req, err := client.Request(w, client.StartOptions{Origin: client.OriginOperator})
	require.NoError(t, err)
	require.Empty(t, req.GetOrigin())
}
