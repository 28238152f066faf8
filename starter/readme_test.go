package starter_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readme returns the repository's README.
func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	return string(data)
}

// readmeParagraph returns the README paragraph that starts with prefix.
func readmeParagraph(t *testing.T, prefix string) string {
	t.Helper()
	s := readme(t)
	i := strings.Index(s, "\n"+prefix)
	require.GreaterOrEqual(t, i, 0, "README has a paragraph starting %q", prefix)
	s = s[i+1:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	return strings.Join(strings.Fields(s), " ")
}

// TestReadmeListsWhatCIRunInstalls: everything .ci/run installs on a fresh machine is in the
// README's list of what `make test` needs, and the README names .ci/run as the fresh-machine
// command (issue 21: make test needed PostgreSQL, python3, curl, runuser and Node 20 unlisted).
func TestReadmeListsWhatCIRunInstalls(t *testing.T) {
	data, err := os.ReadFile("../.ci/run")
	require.NoError(t, err)
	script := string(data)
	require.Contains(t, script, "make test", ".ci/run runs the suite")
	needs := readmeParagraph(t, "What `make test` needs")
	require.Contains(t, needs, "`.ci/run`", "the README names the fresh-machine command")

	var found []string
	for _, m := range regexp.MustCompile(`(?m)^need (\S+) (\S+)`).FindAllStringSubmatch(script, -1) {
		found = append(found, m[1])
		require.True(t, strings.Contains(needs, m[1]) || strings.Contains(needs, m[2]),
			".ci/run installs %s (%s); the README's list of what make test needs does not say so:\n%s", m[1], m[2], needs)
	}
	for _, m := range regexp.MustCompile(`(?m)\|\| apt_install ([a-z0-9-]+)$`).FindAllStringSubmatch(script, -1) {
		found = append(found, m[1])
		require.Contains(t, strings.ToLower(needs), m[1], ".ci/run installs %s", m[1])
	}
	if m := regexp.MustCompile(`NODE_VERSION=(\d+)\.`).FindStringSubmatch(script); m != nil {
		found = append(found, "node")
		require.Contains(t, needs, "Node.js "+m[1]+" or later", ".ci/run installs Node.js %s", m[1])
	}
	for _, want := range []string{"make", "gcc", "curl", "python3", "runuser", "chromium", "postgresql", "node"} {
		require.Contains(t, found, want, ".ci/run checks for %s", want)
	}
}

// TestMakefileGoTestLinesSetTimeouts: every go test line that runs tests says how long its
// packages may take, instead of go test's 10-minute default (issue 21).
func TestMakefileGoTestLinesSetTimeouts(t *testing.T) {
	data, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, "$(GO) test") || strings.Contains(line, "-fuzz ") || strings.Contains(line, "-bench ") {
			continue // fuzzing and benchmarks run after the test alarm stops
		}
		n++
		require.Regexp(t, `-timeout \S+`, line, "a go test line without -timeout")
	}
	require.GreaterOrEqual(t, n, 2, "the Makefile's test lines were found")
}
