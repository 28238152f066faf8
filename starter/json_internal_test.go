package starter

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEscapeControls: weft's JSON output writes C1 and bidi controls as \u escapes (the encoder
// escapes C0 itself) and leaves other text alone; what it prints decodes to the values given.
func TestEscapeControls(t *testing.T) {
	for _, text := range []string{
		"plain", "é 中文 emoji 🎉", "\x1b[2J\a\x7f", "\u009b2J", "abc\u202edcb\u202c", "\u2066x\u2069 \u200fy\u061c\u200e",
		"\u2028 line separator", string([]byte{0xff, 'x'}),
	} {
		v := map[string]any{"text": text, "list": []any{text}}
		for name, write := range map[string]func(*bytes.Buffer) error{
			"writeJSON":     func(b *bytes.Buffer) error { return writeJSON(b, v) },
			"writeJSONLine": func(b *bytes.Buffer) error { return writeJSONLine(b, v) },
		} {
			var buf bytes.Buffer
			require.NoError(t, write(&buf), name)
			out := buf.String()
			for _, r := range out {
				bad := r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f || strings.ContainsRune("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", r)
				require.False(t, bad, "%s(%q) wrote %U raw: %s", name, text, r, out)
			}
			var back map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &back), "%s(%q) is JSON: %s", name, text, out)
			want := strings.ToValidUTF8(text, "\ufffd")
			require.Equal(t, want, back["text"], name)
			require.Equal(t, []any{want}, back["list"], name)
		}
	}
}
