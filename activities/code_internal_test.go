package activities

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/toolspec"
)

// TestDefaultCodeModel: code without a model (and a collection without one) is embedded with
// voyage-code-3 when the embedding provider in use is Voyage, whichever Voyage model is the
// default; with another provider, or offline, the default stays.
func TestDefaultCodeModel(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"offline", Config{}, embedder.Model},
		{"a Voyage key", Config{VoyageAPIKey: "k"}, "voyage-code-3"},
		{"another Voyage model configured", Config{VoyageAPIKey: "k", EmbeddingModel: "voyage-4-lite"}, "voyage-code-3"},
		{"an OpenAI-compatible model configured", Config{OpenAIBaseURL: "http://127.0.0.1:1/v1", EmbeddingModel: "text-embedding-3-small"}, "text-embedding-3-small"},
		{"a Voyage key, but OpenAI's model configured", Config{VoyageAPIKey: "k", OpenAIBaseURL: "http://127.0.0.1:1/v1", EmbeddingModel: "text-embedding-3-small"}, "text-embedding-3-small"},
		{"the local model configured despite a key", Config{VoyageAPIKey: "k", EmbeddingModel: embedder.Model}, embedder.Model},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, NewTools(c.cfg).defaultCodeModel())
		})
	}
}

// TestCodeHitsAsContext: a code tool's results given to generate or llm as context are cited as
// file:lines (symbol), so a review can point at them; documents keep their source.
func TestCodeHitsAsContext(t *testing.T) {
	got := renderContext(map[string]any{"results": []any{
		map[string]any{"path": "auth/token.go", "startLine": float64(3), "endLine": float64(6), "symbol": "IssueToken", "content": "func IssueToken() {}"},
		map[string]any{"path": "main.c", "startLine": 7, "endLine": 7, "symbol": "", "content": "int x;"},
		map[string]any{"path": "notes.txt", "content": "todo"},
		map[string]any{"source": "auth.md", "path": "ignored", "content": "Tokens expire."},
	}})
	require.Equal(t, "[1] auth/token.go:3-6 (IssueToken): func IssueToken() {}\n[2] main.c:7: int x;\n[3] notes.txt: todo\n[4] auth.md: Tokens expire.\n", got)
}

// TestCodeIndexDoesNotFollowALinkSwappedIn: while code_index runs, something flips a file under
// the allowed root between a regular file and a link to a secret outside it, and a directory
// between a directory and a link to the secret's; the walk lists the file or directory, then
// finds a link. Files are opened relative to the root and judged as opened, so the secret is
// never read, however the flips fall.
func TestCodeIndexDoesNotFollowALinkSwappedIn(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	const secret = "hunter2-outside-the-root"
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.go"), []byte("package s\n\nconst Key = \""+secret+"\"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	regular := filepath.Join(t.TempDir(), "regular.go")
	require.NoError(t, os.WriteFile(regular, []byte("package main\n\nconst Key = \"public\"\n"), 0o644))

	done := make(chan struct{})
	flipped := make(chan struct{})
	go func() {
		defer close(flipped)
		swap, sub := filepath.Join(root, "swap.go"), filepath.Join(root, "sub")
		tmp, tmpDir := filepath.Join(root, ".swap.tmp"), filepath.Join(root, ".sub.tmp")
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			// each flip replaces the name in one rename, so the walk always finds something there
			_ = os.Remove(tmp)
			if i%2 == 0 {
				_ = os.Symlink(filepath.Join(outside, "secret.go"), tmp)
			} else if data, err := os.ReadFile(regular); err == nil {
				_ = os.WriteFile(tmp, data, 0o644)
			}
			_ = os.Rename(tmp, swap)
			_ = os.RemoveAll(tmpDir)
			if i%2 == 0 {
				_ = os.Symlink(outside, tmpDir)
			} else if os.Mkdir(tmpDir, 0o755) == nil {
				_ = os.WriteFile(filepath.Join(tmpDir, "secret.go"), []byte("package s\n"), 0o644)
			}
			_ = os.RemoveAll(sub) // a rename does not replace a non-empty directory
			_ = os.Rename(tmpDir, sub)
		}
	}()
	defer func() { close(done); <-flipped }()

	indexed := 0
	for range 300 {
		chunks, _, err := codeChunks(root, toolspec.CodeIndexIn{})
		require.NoError(t, err)
		for _, c := range chunks {
			require.NotContains(t, c.chunk.Text, secret, "indexed %s from outside the root", c.file.Path)
			if c.file.Path == "swap.go" || c.file.Path == "sub/secret.go" {
				indexed++
			}
		}
	}
	require.Positive(t, indexed, "the flipped names were indexed as regular files at least once")
}
