package client

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChatMemoryRefusedAtStart: a client starting a chat on another identity's memory is refused
// when it starts, before Temporal is asked (the client has none here), not at each recall; its
// own scopes, and the operator's any scope, pass.
func TestChatMemoryRefusedAtStart(t *testing.T) {
	for _, tc := range []struct {
		scope, by, origin string
		ok                bool
	}{
		{"bob", "carl", OriginClient, false},
		{"support:bob", "carl", OriginClient, false},
		{"carl:support", "carl", OriginClient, false},
		{"carl", "carl", OriginClient, true},
		{"support:carl", "carl", OriginClient, true},
		{"", "carl", OriginClient, true},
		{"bob", "", OriginOperator, true},
	} {
		err := checkChatMemory(ChatOptions{MemoryScope: tc.scope, StartedBy: tc.by, Origin: tc.origin})
		if tc.ok {
			require.NoError(t, err, tc)
			continue
		}
		require.ErrorContains(t, err, `memory scope "`+tc.scope+`" does not belong to carl`, tc)
		var refused *RefusedError
		require.ErrorAs(t, err, &refused)
	}
	_, _, err := New(nil, "").StartChat(context.Background(), "", ChatOptions{MemoryScope: "bob", StartedBy: "carl", Origin: OriginClient})
	require.ErrorContains(t, err, `memory scope "bob" does not belong to carl`)
}
