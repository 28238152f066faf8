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
	env := map[string]string{"WEFT_CODE_GIT_HOSTS": " github.com, http://git.internal:3000 ,", "WEFT_CODE_GIT_ALLOW": "10.0.0.0/8, 127.0.0.1",
		"WEFT_CODE_GIT_MAX_BYTES": "1048576", "WEFT_CODE_GIT_MAX_FILES": "2000", "WEFT_CODE_GIT_TIMEOUT": "90s"}
	c := ConfigFromEnv(func(k string) string { return env[k] })
	require.Equal(t, []string{"github.com", "http://git.internal:3000"}, c.CodeGitHosts)
	require.Equal(t, []string{"10.0.0.0/8", "127.0.0.1"}, c.CodeGitAllow)
	require.Empty(t, c.HTTPAllow, "the http tool's allowance is its own")
	require.Equal(t, 2000, c.CodeGitMaxFiles)
	require.Equal(t, int64(1<<20), c.CodeGitMaxBytes)
	require.Equal(t, 90*time.Second, c.CodeGitTimeout)

	env = map[string]string{"WEFT_CODE_GIT_MAX_BYTES": "-5", "WEFT_CODE_GIT_MAX_FILES": "many", "WEFT_CODE_GIT_TIMEOUT": "soon"}
	c = ConfigFromEnv(func(k string) string { return env[k] })
	require.Empty(t, c.CodeGitHosts)
	require.Zero(t, c.CodeGitMaxBytes)
	require.Zero(t, c.CodeGitMaxFiles)
	require.Zero(t, c.CodeGitTimeout)
}

// TestCodeGitRedactsWhatItCannotParse: a repo URL that does not parse is refused as not a valid
// URL, with the parse error's reason, and its user info, query and fragment are never repeated.
func TestCodeGitRedactsWhatItCannotParse(t *testing.T) {
	tools := NewTools(Config{CodeGitHosts: []string{"github.com"}})
	for _, c := range []struct{ raw, err string }{
		{"https://me:s3cret@github.com/o/r%zz", `repo "https://github.com/o/r%zz" is not a valid URL (invalid URL escape "%zz")`},
		{"https://me:s3cret@github.com/o/r\x7f", `repo "https://github.com/o/r\x7f" is not a valid URL (net/url: invalid control character in URL)`},
		{"https://github.com/o/r%zz?token=s3cret#s3cret", `repo "https://github.com/o/r%zz" is not a valid URL`},
		{"git@github.com:o/r.git?token=s3cret", `repo "github.com:o/r.git" is not an https URL (local paths and scp-style addresses`},
		{"https://me:s3cret@github.com/o/r", `repo "https://github.com/o/r" holds credentials`},
	} {
		t.Run(c.raw, func(t *testing.T) {
			_, err := tools.codeGitRepo(c.raw, "")
			require.ErrorContains(t, err, c.err)
			require.NotContains(t, err.Error(), "s3cret")
			var ie *InputError
			require.True(t, asInput(err, &ie))
		})
	}
}

// TestCodeGitRoot: one repository has one root whatever way its URL is written (host case,
// default port, trailing / or .git, . segments), and a ref follows a # (a repo URL holds no
// fragment), so a URL whose path ends in @v1 is not the repository at v1.
func TestCodeGitRoot(t *testing.T) {
	tools := NewTools(Config{CodeGitHosts: []string{"github.com", "http://git.internal:3000"}})
	for _, c := range []struct{ raw, ref, root string }{
		{"https://github.com/o/r", "", "https://github.com/o/r"},
		{"https://GitHub.com:443/o/r.git/", "", "https://github.com/o/r"},
		{"https://github.com/o/./r.git", "", "https://github.com/o/r"},
		{"https://github.com/o/r/", "v1", "https://github.com/o/r#v1"},
		{"https://github.com/o/r@v1", "", "https://github.com/o/r@v1"},
		{"http://git.internal:3000/team/x.git", "main", "http://git.internal:3000/team/x#main"},
	} {
		t.Run(c.raw+" "+c.ref, func(t *testing.T) {
			r, err := tools.codeGitRepo(c.raw, c.ref)
			require.NoError(t, err)
			require.Equal(t, c.root, r.root())
		})
	}
}

// TestCodeGitHostEntries: a WEFT_CODE_GIT_HOSTS entry that is not a host is reported when the
// worker starts and refuses every clone, saying what to write instead.
func TestCodeGitHostEntries(t *testing.T) {
	for _, c := range []struct{ entry, err string }{
		{"github.com", ""},
		{"https://github.com/", ""},
		{"http://git.internal:3000", ""},
		{"[::1]:3000", ""},
		{"github.com/weftworks", "holds a path: the list allows hosts, and every repository on them; write the host alone (https://github.com)"},
		{"https://me:s3cret@github.com", "holds user info"},
		{"*.github.com", "wildcards are not supported"},
		{"ssh://github.com", "has scheme ssh"},
		{"github.com:http", "has no valid port"},
	} {
		t.Run(c.entry, func(t *testing.T) {
			err := checkCodeGitHosts([]string{"gitlab.com", c.entry})
			if c.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.err)
			require.ErrorContains(t, err, "write host, host:port, or http://host:port")
			require.NotContains(t, err.Error(), "s3cret")
			_, err = NewTools(Config{CodeGitHosts: []string{"gitlab.com", c.entry}}).codeGitRepo("https://gitlab.com/o/r", "")
			var ce *ConfigError
			require.ErrorAs(t, err, &ce, "no clone while an entry is bad")
		})
	}
}
