package vaipkg_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/vaipkg"
	"github.com/weftworks/weft/internal/vaipkg/vaipkgtest"
)

// TestCleanText: Line and Paragraphs drop terminal escape sequences, C0/C1 controls and bidi
// controls and keep ordinary text (Paragraphs its line breaks too).
func TestCleanText(t *testing.T) {
	tests := []struct {
		name, in, line, paragraphs string
	}{
		{"plain", "A greeting workflow", "A greeting workflow", "A greeting workflow"},
		{"unicode kept", "Grüße, 你好 — ok ✓", "Grüße, 你好 — ok ✓", "Grüße, 你好 — ok ✓"},
		{"ends trimmed", "  padded \t", "padded", "padded"},
		{"colour CSI", "\x1b[31mred\x1b[0m text", "red text", "red text"},
		{"clear screen and home", "\x1b[2J\x1b[Hfake prompt $", "fake prompt $", "fake prompt $"},
		{"OSC title BEL", "a\x1b]0;owned\x07b", "ab", "ab"},
		{"OSC 52 clipboard ST", "a\x1b]52;c;ZWNobyBwd25lZA==\x1b\\b", "ab", "ab"},
		{"OSC 8 hyperlink", "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", "click", "click"},
		{"unterminated OSC", "ok\x1b]0;rest", "ok", "ok"},
		{"ESC c reset", "a\x1bcb", "ab", "ab"},
		{"lone ESC at end", "a\x1b", "a", "a"},
		{"C1 CSI", "a\u009b31mb", "ab", "ab"},
		{"C1 OSC", "a\u009d0;t\u009cb", "ab", "ab"},
		{"carriage return overwrite", "safe\rEVIL", "safe EVIL", "safe\nEVIL"},
		{"bell backspace DEL NUL", "a\x07\x08\x7f\x00b", "ab", "ab"},
		{"lone ST", "a\u009cb c", "ab c", "ab c"},
		{"C1 APC", "a\u009fhidden\u009cb", "ab", "ab"},
		{"other C1", "a\u0085b\u0090x\u009cc", "a bc", "a\nbc"},
		{"bidi overrides", "abc\u202edcb\u202c \u2066x\u2069 \u200fy\u061c", "abcdcb x y", "abcdcb x y"},
		{"all bidi embeddings", "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069z", "z", "z"},
		{"newlines", "First line.\r\nSecond line.\n\n\n\nThird  \nlast", "First line. Second line.    Third   last", "First line.\nSecond line.\n\nThird\nlast"},
		{"line separators", "a\u2028b\u2029c", "a b c", "a\nb\nc"},
		{"tab", "a\tb", "a b", "a b"},
		{"only controls", "\x1b[0m\x07", "", ""},
		{"empty", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.line, vaipkg.Line(tc.in))
			require.Equal(t, tc.paragraphs, vaipkg.Paragraphs(tc.in))
			for _, out := range []string{vaipkg.Line(tc.in), vaipkg.Paragraphs(tc.in)} {
				requireSafe(t, out)
			}
		})
	}
}

// requireSafe fails when s holds a control character other than \n, or a bidi control.
func requireSafe(t *testing.T, s string) {
	t.Helper()
	for _, r := range s {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) {
			require.Failf(t, "unsafe text", "%q holds %U", s, r)
		}
	}
}

// requireSafeJSON fails when a string of v, as JSON, is not safe (see requireSafe): JSON escapes
// C0 controls but not C1 or bidi ones, and weft prints these strings as text.
func requireSafeJSON(t *testing.T, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			requireSafe(t, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				requireSafe(t, k)
				walk(e)
			}
		}
	}
	var decoded any
	require.NoError(t, json.Unmarshal(data, &decoded))
	walk(decoded)
}

// TestManifestText: every text weft prints of a package.json (install, list --packages, info,
// --json) comes out of ParseManifest, and of the store's record, without terminal controls;
// a "main" holding them is refused rather than changed.
func TestManifestText(t *testing.T) {
	const esc = "\x1b[2J\x1b]0;pwned\x07\u202e\u0007"
	const name = "vai-workflow-greet"
	tests := []struct {
		name    string
		extra   map[string]any
		want    func(t *testing.T, m *vaipkg.Manifest)
		wantErr string
	}{
		{name: "description keeps its lines", extra: map[string]any{"description": "Greets.\x1b[31m\r\n\r\n\r\nSecond\u202e paragraph.\x07"},
			want: func(t *testing.T, m *vaipkg.Manifest) {
				require.Equal(t, "Greets.\n\nSecond paragraph.", m.Description)
			}},
		{name: "author string", extra: map[string]any{"author": "Ana" + esc + " <ana@example.com>"},
			want: func(t *testing.T, m *vaipkg.Manifest) { require.Equal(t, "Ana <ana@example.com>", m.Author) }},
		{name: "author object", extra: map[string]any{"author": map[string]any{"name": "Ana\x1b[8m", "email": "ana@example.com\u202e"}},
			want: func(t *testing.T, m *vaipkg.Manifest) { require.Equal(t, "Ana <ana@example.com>", m.Author) }},
		{name: "license", extra: map[string]any{"license": map[string]any{"type": "MIT" + esc}},
			want: func(t *testing.T, m *vaipkg.Manifest) { require.Equal(t, "MIT", m.License) }},
		{name: "keywords", extra: map[string]any{"keywords": []any{"demo\x1b[5m", esc, "two\nwords"}},
			want: func(t *testing.T, m *vaipkg.Manifest) { require.Equal(t, []string{"demo", "two words"}, m.Keywords) }},
		{name: "script names", extra: map[string]any{"scripts": map[string]any{"post\x1b[2Jinstall": "x"}},
			want: func(t *testing.T, m *vaipkg.Manifest) { require.Equal(t, []string{"postinstall"}, m.Scripts) }},
		{name: "vai field", extra: map[string]any{"vai": map[string]any{"workflowVersion": "1.0" + esc, "category": "util\u202eity",
			"tags": []any{"de\u009b1mmo"}, "minVaiVersion": "1.4\x1b[0m.0", "extra\x1b[1m": map[string]any{"deep": []any{"x\x1b]0;t\x07y", 2.0}}}},
			want: func(t *testing.T, m *vaipkg.Manifest) {
				require.Equal(t, vaipkg.VaiMeta{WorkflowVersion: "1.0", Category: "utility", Tags: []string{"demo"}, MinVaiVersion: "1.4.0",
					Raw: map[string]any{"workflowVersion": "1.0", "category": "utility", "tags": []any{"demo"}, "minVaiVersion": "1.4.0",
						"extra": map[string]any{"deep": []any{"xy", 2.0}}}}, m.Vai)
			}},
		{name: "plain text unchanged", extra: nil, want: func(t *testing.T, m *vaipkg.Manifest) {
			require.Equal(t, "A greeting workflow", m.Description)
			require.Equal(t, "Ana <ana@example.com>", m.Author)
			require.Equal(t, []string{"vai-workflow", "greeting"}, m.Keywords)
		}},
		{name: "main with controls refused", extra: map[string]any{"main": "flows/\x1b[2Jgreet.json"}, wantErr: `holds control or bidi characters`},
		{name: "main with bidi refused", extra: map[string]any{"main": "greet\u202enosj.json"}, wantErr: `holds control or bidi characters`},
		{name: "name with controls refused", extra: map[string]any{"name": "vai-workflow-\x1b[2J"}, wantErr: "is not an npm package name"},
		{name: "version with controls refused", extra: map[string]any{"version": "1.0.0\x1b[2J"}, wantErr: "is not a version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			manifest := vaipkgtest.Manifest(name, "1.0.0", tc.extra)
			m, err := vaipkg.ParseManifest([]byte(manifest))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				requireSafe(t, strings.ReplaceAll(err.Error(), "\n", " "))
				return
			}
			require.NoError(t, err)
			tc.want(t, m)
			requireSafeJSON(t, m)

			// what weft install, list and info show: the installed package, and a record written
			// before the text was cleaned
			store := vaipkg.Store{Dir: filepath.Join(t.TempDir(), "packages")}
			files := vaipkgtest.Package(name, "1.0.0")
			files["package.json"] = manifest
			p, err := store.Install(context.Background(), vaipkgtest.Dir(t, files), vaipkg.Registry{})
			require.NoError(t, err)
			tc.want(t, &p.Manifest)
			requireSafeJSON(t, p)
			rec := filepath.Join(p.Dir, ".weft-install.json")
			var raw map[string]any
			data, err := os.ReadFile(rec)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &raw))
			var old map[string]any
			require.NoError(t, json.Unmarshal([]byte(manifest), &old))
			for k, v := range old { // the record as an older weft wrote it: package.json's text as written
				if _, isMap := v.(map[string]any); !isMap || k == "vai" { // author, license and scripts objects were recorded cleaned
					raw[k] = v
				}
			}
			data, err = json.Marshal(raw)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(rec, data, 0o644))
			listed, err := store.List()
			require.NoError(t, err)
			require.Len(t, listed, 1)
			requireSafeJSON(t, listed[0])
		})
	}
}
