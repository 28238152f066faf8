package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
)

// memBlobs is a complete in-memory Blobs, at the edge where the knowledge store would be.
type memBlobs map[string][]byte

func (m memBlobs) PutBlob(_ context.Context, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	id := hex.EncodeToString(sum[:8])
	m[id] = append([]byte(nil), data...)
	return id, nil
}

func (m memBlobs) GetBlob(_ context.Context, id string) ([]byte, error) { return m[id], nil }

func TestClaimCheck(t *testing.T) {
	blobs := memBlobs{}
	ctx := context.Background()
	small := map[string]any{"status": 200.0, "text": "short"}
	out, err := claimCheck(ctx, blobs, 1024, small)
	require.NoError(t, err)
	require.Equal(t, small, out, "small outputs stay as they are")

	big := map[string]any{"status": 200.0, "text": strings.Repeat("a", 5000)}
	out, err = claimCheck(ctx, blobs, 1024, big)
	require.NoError(t, err)
	m := out.(map[string]any)
	require.Equal(t, 200.0, m["status"], "small fields stay readable")
	ref := m["text"].(map[string]any)
	require.NotEmpty(t, ref[BlobKey])
	require.Len(t, blobs, 1)

	// The next tool gets the value back whole.
	in := map[string]any{"docs": []any{map[string]any{"text": ref}}}
	require.True(t, toolspec.HoldsBlob(in))
	_, err = resolveBlobs(ctx, blobs, in)
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("a", 5000), in["docs"].([]any)[0].(map[string]any)["text"])

	// An array is stored whole.
	out, err = claimCheck(ctx, blobs, 1024, []any{strings.Repeat("b", 3000)})
	require.NoError(t, err)
	require.Contains(t, out.(map[string]any), BlobKey)
}

// TestPreview: a reference's preview is the output's first characters (not bytes: a character
// is never cut), with "…" only when there are more.
func TestPreview(t *testing.T) {
	for _, tc := range []struct {
		data string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"héllo", 2, "hé…"},
		{"日本語", 3, "日本語"},
		{"日本語です", 3, "日本語…"},
		{"a😀b", 2, "a😀…"},
		{"a\xffb", 5, "a\uFFFDb"},
	} {
		require.Equal(t, tc.want, preview([]byte(tc.data), tc.n), "%q", tc.data)
	}
	ref := shortBlobRef("id@3", []byte(strings.Repeat("é", 50)))
	require.Equal(t, strings.Repeat("é", 40)+"…", ref["preview"])
	require.Equal(t, 100, ref["size"])
}
