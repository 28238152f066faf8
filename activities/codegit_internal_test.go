package activities

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCodeGitHostList: how a WEFT_CODE_GIT_HOSTS entry is matched: host[:port] allows https to
// it (port 443 when it names none), http://host[:port] plain http too (port 80 when it names
// none); names match without regard to case, and nothing else matches.
func TestCodeGitHostList(t *testing.T) {
	cases := []struct {
		entries []string
		url     string
		err     string
	}{
		{[]string{"github.com"}, "https://github.com/o/r", ""},
		{[]string{"GitHub.com"}, "https://github.COM:443/o/r", ""},
		{[]string{"github.com"}, "https://github.com:8443/o/r", "is not one code_index may clone from"},
		{[]string{"github.com"}, "https://api.github.com/o/r", "is not one code_index may clone from"},
		{[]string{"github.com"}, "https://github.com.evil.example/o/r", "is not one code_index may clone from"},
		{[]string{"github.com"}, "http://github.com/o/r", "plain http is refused"},
		{[]string{"gitlab.example.com:8443"}, "https://gitlab.example.com:8443/o/r", ""},
		{[]string{"gitlab.example.com:8443"}, "https://gitlab.example.com/o/r", "is not one code_index may clone from"},
		{[]string{"http://git.internal:3000"}, "http://git.internal:3000/o/r", ""},
		{[]string{"http://git.internal:3000"}, "https://git.internal:3000/o/r", ""},
		{[]string{"http://git.internal"}, "http://git.internal/o/r", ""},
		{[]string{"http://git.internal"}, "http://git.internal:3000/o/r", "is not one code_index may clone from"},
		{[]string{"[::1]:3000", "https://example.org/"}, "https://[::1]:3000/o/r", ""},
		{[]string{"https://example.org/"}, "https://example.org/o/r", ""},
	}
	for _, c := range cases {
		t.Run(c.url+" with "+c.entries[0], func(t *testing.T) {
			u, err := url.Parse(c.url)
			require.NoError(t, err)
			err = NewTools(Config{CodeGitHosts: c.entries}).codeGitHostAllowed(u)
			if c.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.err)
		})
	}
}

// TestCodeGitSettings: the Git source settings are read from the environment; bad bounds are
// ignored (the defaults hold).
func TestCodeGitSettings(t *testing.T) {
	env := map[string]string{"WEFT_CODE_GIT_HOSTS": " github.com, http://git.internal:3000 ,", "WEFT_CODE_GIT_MAX_BYTES": "1048576", "WEFT_CODE_GIT_TIMEOUT": "90s"}
	c := ConfigFromEnv(func(k string) string { return env[k] })
	require.Equal(t, []string{"github.com", "http://git.internal:3000"}, c.CodeGitHosts)
	require.Equal(t, int64(1<<20), c.CodeGitMaxBytes)
	require.Equal(t, 90*time.Second, c.CodeGitTimeout)

	env = map[string]string{"WEFT_CODE_GIT_MAX_BYTES": "-5", "WEFT_CODE_GIT_TIMEOUT": "soon"}
	c = ConfigFromEnv(func(k string) string { return env[k] })
	require.Empty(t, c.CodeGitHosts)
	require.Zero(t, c.CodeGitMaxBytes)
	require.Zero(t, c.CodeGitTimeout)
}
