package integration

import (
	"bytes"
	"context"
	"github.com/google/shlex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/starter"
	"github.com/weftworks/weft/templates"
)

// readmeCommands returns the `bin/weft` lines of the first sh block under heading in the page
// at path (from the repository's root), split into arguments.
func readmeCommands(t *testing.T, path, heading string) [][]string {
	data, err := os.ReadFile(filepath.Join("..", path))
	require.NoError(t, err)
	s := string(data)
	i := strings.Index(s, heading+"\n")
	require.GreaterOrEqual(t, i, 0, "%s has a section %q", path, heading)
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	require.GreaterOrEqual(t, start, 0, "%s: %q has a sh block", path, heading)
	s = s[start+6:]
	s = s[:strings.Index(s, "```")]
	comment := regexp.MustCompile(`\s{2,}#.*$`)
	var out [][]string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(comment.ReplaceAllString(line, ""))
		if !strings.HasPrefix(line, "bin/weft ") {
			continue
		}
		out = append(out, shellWords(t, strings.TrimPrefix(line, "bin/weft ")))
	}
	return out
}

// shellWords splits one of the documentation's command lines as a POSIX shell does (google/shlex).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	words, err := shlex.Split(line)
	require.NoError(t, err, "splitting %q", line)
	return words
}

// TestReadmeCLIExamples runs the README's own-documents lines (weft ingest of docs/ and the
// README, then a question about them), its first workflow and then docs/cli.md's tour in order,
// as a person would with `make run` going in another terminal: an example that stops working
// fails the build.
func TestReadmeCLIExamples(t *testing.T) {
	own := readmeCommands(t, "README.md", "## Your own documents: `weft ingest`")
	require.GreaterOrEqual(t, len(own), 4, "the README's own-documents lines were found")
	first := readmeCommands(t, "README.md", "## A first workflow")
	require.GreaterOrEqual(t, len(first), 8, "the README's first workflow was found")
	tour := readmeCommands(t, "docs/cli.md", "# The CLI")
	require.GreaterOrEqual(t, len(tour), 15, "docs/cli.md's examples were found")
	cmds := append(append(own, first...), tour...)
	c := dial(t)
	startWorkerWithConfig(t, "weft", activities.Config{MongoDBURI: store.URI}, nil)
	wc := weftclient.New(c, "weft")
	// The commands find the stack the way they find `weft dev`.
	t.Setenv("TEMPORAL_ADDRESS", server.Address)
	t.Setenv("TEMPORAL_NAMESPACE", server.Namespace)
	t.Setenv("WEFT_DEV_STATE", filepath.Join(t.TempDir(), "dev.json"))
	state := []byte(`{"pid": ` + strconv.Itoa(os.Getpid()) + `, "temporal": "` + server.Address + `", "namespace": "` + server.Namespace + `", "mongodb": "` + store.URI + `"}`)
	require.NoError(t, os.WriteFile(os.Getenv("WEFT_DEV_STATE"), state, 0o644))
	// What `make run` ingests before the lines run: the sample corpus in weft_demo.
	for _, coll := range []string{"api_docs", "architecture"} {
		w, err := weftclient.Template("batch-ingest")
		require.NoError(t, err)
		_, err = wc.Run(context.Background(), w, weftclient.StartOptions{Source: "batch-ingest",
			Inputs: map[string]any{"docs": templates.CorpusInputs(coll), "collection": coll}})
		require.NoError(t, err, "ingesting the demo's %s", coll)
	}
	// A working directory like a project's: the repository's templates and examples at hand.
	dir := t.TempDir()
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	for _, d := range []string{"templates", "testdata"} {
		require.NoError(t, os.Symlink(filepath.Join(repo, d), filepath.Join(dir, d)))
	}
	// The user's own documents: the README ingests docs/ and README.md.
	require.NoError(t, os.CopyFS(filepath.Join(dir, "docs"), os.DirFS(filepath.Join(repo, "docs"))))
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), readme, 0o644))
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	defer func() { _ = os.Chdir(wd) }()

	initialised := map[string]bool{} // files `weft init` wrote
	for _, args := range cmds {
		line := "weft " + strings.Join(args, " ")
		if args[0] == "review" {
			// A person reviews once the run shows the review; so does the test.
			require.Eventually(t, func() bool {
				st, err := wc.State(context.Background(), args[1])
				return err == nil && len(st.PendingReviews) > 0
			}, 30*time.Second, 50*time.Millisecond, "%s: the run never waited for review", line)
		}
		var out, errOut bytes.Buffer
		code := starter.Execute(args, strings.NewReader(""), &out, &errOut)
		require.Equal(t, 0, code, "%s\nstdout:\n%s\nstderr:\n%s", line, out.String(), errOut.String())
		require.NotEmpty(t, out.String()+errOut.String(), "%s printed nothing", line)
		if args[0] == "init" {
			if i := indexOf(args, "--name"); i >= 0 && i+1 < len(args) {
				initialised[args[i+1]+".weft.json"] = true
			}
		}
		if args[0] == "run" && contains(args, "mydocs") {
			// The own-documents question is answered from the documents just ingested.
			require.Contains(t, out.String(), "docs/", "%s found none of the ingested documents:\n%s", line, out.String())
		}
		if args[0] == "run" && initialised[args[1]] && !contains(args, "--dry-run") {
			// The file init wrote searches what the demo ingested (issue 21: it searched an
			// empty database and found nothing).
			require.Contains(t, out.String(), "api/rate-limits.md", "%s found nothing the demo ingested:\n%s", line, out.String())
		}
	}
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
