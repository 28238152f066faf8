package vaipkg_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/vaipkg"
	"github.com/weftworks/weft/internal/vaipkg/vaipkgtest"
)

// storeFiles lists every file under dir (none when it does not exist).
func storeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestInstall: a package installs from a directory, a local .tgz and the npm registry (latest,
// an exact version, a scoped official one, sha1 only), and everything else is refused with
// nothing left in the store: a wrong integrity, an entry leaving the package, a link, a file over
// the limit, an invalid workflow, a missing workflow file. Scripts are never run.
func TestInstall(t *testing.T) {
	const name = "vai-workflow-greet"
	good := vaipkgtest.Tgz(t, vaipkgtest.Package(name, "1.1.0"))
	old := vaipkgtest.Tgz(t, vaipkgtest.Package(name, "1.0.0"))
	official := vaipkgtest.Tgz(t, vaipkgtest.Package("@vaicli/greet", "2.0.0"))
	marker := filepath.Join(t.TempDir(), "postinstall-ran")
	withScripts := vaipkgtest.Package(name, "1.2.0")
	withScripts["package.json"] = vaipkgtest.Manifest(name, "1.2.0", map[string]any{"scripts": map[string]any{
		"preinstall": "touch " + marker, "install": "touch " + marker, "postinstall": "touch " + marker}})
	otherMain := vaipkgtest.Files{"package.json": vaipkgtest.Manifest(name, "1.3.0", map[string]any{"main": "flows/greet.json"}),
		"flows/greet.json": vaipkgtest.Workflow}
	invalid := vaipkgtest.Package(name, "1.4.0")
	invalid["workflow.json"] = vaipkgtest.InvalidWorkflow
	noWorkflow := vaipkgtest.Files{"package.json": vaipkgtest.Manifest(name, "1.5.0", nil)}
	escape := filepath.Join(t.TempDir(), "escaped.json")

	tests := []struct {
		name    string
		arg     func(t *testing.T) string // what weft install is given
		want    string                    // the version installed
		tier    string
		wantErr string
		check   func(t *testing.T, p *vaipkg.Package)
	}{
		{name: "directory", arg: func(t *testing.T) string { return vaipkgtest.Dir(t, vaipkgtest.Package(name, "1.1.0")) }, want: "1.1.0", tier: "community"},
		{name: "local tgz", arg: func(t *testing.T) string { return vaipkgtest.WriteTgz(t, good) }, want: "1.1.0", tier: "community"},
		{name: "registry latest", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, vaipkgtest.Version{Version: "1.0.0", Tarball: old}, vaipkgtest.Version{Version: "1.1.0", Tarball: good})
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return name
		}, want: "1.1.0", tier: "community", check: func(t *testing.T, p *vaipkg.Package) {
			require.Equal(t, vaipkgtest.SRI(good), p.Integrity)
			require.Contains(t, p.Source, "/tarballs/")
		}},
		{name: "registry exact version", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, vaipkgtest.Version{Version: "1.0.0", Tarball: old}, vaipkgtest.Version{Version: "1.1.0", Tarball: good})
			t.Setenv("npm_config_registry", r.URL)
			return name + "@1.0.0"
		}, want: "1.0.0", tier: "community"},
		{name: "registry caret range: the highest in it", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, versionsOf(t, name, "1.0.0", "1.1.0", "1.2.0-beta.1", "2.0.0")...)
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return name + "@^1.0.0"
		}, want: "1.1.0", tier: "community"},
		{name: "registry range: latest when it is in it", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, versionsOf(t, name, "1.0.0", "1.3.0", "1.1.0")...) // latest: 1.1.0
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return name + "@>=1.0.0 <2"
		}, want: "1.1.0", tier: "community"},
		{name: "registry tilde range", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, versionsOf(t, name, "1.1.0", "1.1.4", "1.2.0")...)
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return name + "@~1.1"
		}, want: "1.1.4", tier: "community"},
		{name: "registry range nothing satisfies", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, versionsOf(t, name, "1.0.0", "1.10.0", "1.9.0")...)
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return name + "@^2.0.0"
		}, wantErr: `no version satisfies "^2.0.0" (versions: 1.0.0, 1.9.0, 1.10.0)`},
		{name: "registry version that is no range", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, versionsOf(t, name, "1.0.0")...)
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return name + "@newest"
		}, wantErr: `"newest" is neither a version, a dist-tag nor a version range (write one like 1.2.0, latest, ^1.2.0`},
		{name: "registry scoped official", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, "@vaicli/greet", vaipkgtest.Version{Version: "2.0.0", Tarball: official})
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return "@vaicli/greet"
		}, want: "2.0.0", tier: "official"},
		{name: "registry sha1 only", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, vaipkgtest.Version{Version: "1.1.0", Tarball: good, Integrity: "-", Shasum: vaipkgtest.SHA1(good)})
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return name
		}, want: "1.1.0", tier: "community"},
		{name: "scripts are not run", arg: func(t *testing.T) string { return vaipkgtest.WriteTgz(t, vaipkgtest.Tgz(t, withScripts)) },
			want: "1.2.0", tier: "community", check: func(t *testing.T, p *vaipkg.Package) {
				require.NoFileExists(t, marker, "a package script ran")
				require.Equal(t, []string{"install", "postinstall", "preinstall"}, p.Scripts)
				require.Contains(t, strings.Join(p.Warnings, "\n"), "weft never runs them")
			}},
		{name: "main names the workflow", arg: func(t *testing.T) string { return vaipkgtest.Dir(t, otherMain) }, want: "1.3.0", tier: "community",
			check: func(t *testing.T, p *vaipkg.Package) {
				require.FileExists(t, filepath.Join(p.Dir, "flows", "greet.json"))
			}},

		{name: "wrong integrity", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, vaipkgtest.Version{Version: "1.1.0", Tarball: good, Integrity: vaipkgtest.SRI(old)})
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return name
		}, wantErr: "integrity check failed: the tarball's sha512 is"},
		{name: "wrong shasum", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, vaipkgtest.Version{Version: "1.1.0", Tarball: good, Integrity: "-", Shasum: vaipkgtest.SHA1(old)})
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return name
		}, wantErr: "integrity check failed: the tarball's sha1 is"},
		{name: "no integrity at all", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, vaipkgtest.Version{Version: "1.1.0", Tarball: good, Integrity: "-"})
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return name
		}, wantErr: "neither dist.integrity nor dist.shasum"},
		{name: "unknown version", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, name, vaipkgtest.Version{Version: "1.1.0", Tarball: good})
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return name + "@9.9.9"
		}, wantErr: `has no version or dist-tag "9.9.9"`},
		{name: "registry holds another package", arg: func(t *testing.T) string {
			r := vaipkgtest.NewRegistry(t, "vai-workflow-other", vaipkgtest.Version{Version: "1.1.0", Tarball: good})
			t.Setenv("WEFT_NPM_REGISTRY", r.URL)
			return "vai-workflow-other"
		}, wantErr: "holds package vai-workflow-greet: refused"},
		{name: "traversal entry", arg: func(t *testing.T) string {
			rel, err := filepath.Rel(t.TempDir(), escape)
			require.NoError(t, err)
			return vaipkgtest.WriteTgz(t, vaipkgtest.Tgz(t, vaipkgtest.Package(name, "1.1.0"), vaipkgtest.Entry{Name: "package/../" + filepath.ToSlash(rel), Body: "{}"}))
		}, wantErr: "leaves the package (..): refused (nothing installed)"},
		{name: "absolute entry", arg: func(t *testing.T) string {
			return vaipkgtest.WriteTgz(t, vaipkgtest.Tgz(t, vaipkgtest.Package(name, "1.1.0"), vaipkgtest.Entry{Name: escape, Body: "{}"}))
		}, wantErr: "is not a relative path inside the package"},
		{name: "symlink entry", arg: func(t *testing.T) string {
			return vaipkgtest.WriteTgz(t, vaipkgtest.Tgz(t, vaipkgtest.Package(name, "1.1.0"), vaipkgtest.Entry{Name: "package/link", Type: tar.TypeSymlink, Linkname: "/etc/passwd"}))
		}, wantErr: "is a link (to /etc/passwd)"},
		{name: "hard link entry", arg: func(t *testing.T) string {
			return vaipkgtest.WriteTgz(t, vaipkgtest.Tgz(t, vaipkgtest.Package(name, "1.1.0"), vaipkgtest.Entry{Name: "package/hl", Type: tar.TypeLink, Linkname: "package/workflow.json"}))
		}, wantErr: "is a link"},
		{name: "file over the limit", arg: func(t *testing.T) string {
			return vaipkgtest.WriteTgz(t, vaipkgtest.Tgz(t, vaipkgtest.Package(name, "1.1.0"), vaipkgtest.Entry{Name: "package/big.txt", Body: strings.Repeat("a", vaipkg.MaxFileSize+1)}))
		}, wantErr: "over the 4 MiB a package file may have"},
		{name: "invalid workflow", arg: func(t *testing.T) string { return vaipkgtest.Dir(t, invalid) }, wantErr: "its workflow is invalid, nothing installed"},
		{name: "no workflow file", arg: func(t *testing.T) string { return vaipkgtest.WriteTgz(t, vaipkgtest.Tgz(t, noWorkflow)) }, wantErr: "has no workflow file workflow.json"},
		{name: "not a package name", arg: func(t *testing.T) string { return "Not A Name" }, wantErr: "is not an npm package name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := vaipkg.Store{Dir: filepath.Join(t.TempDir(), "packages")}
			arg := tc.arg(t)
			p, err := store.Install(context.Background(), arg, vaipkg.Registry{URL: vaipkg.RegistryFromEnv()})
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.Empty(t, storeFiles(t, store.Dir), "a refused package leaves nothing in the store")
				require.NoFileExists(t, escape)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, p.Version)
			require.Equal(t, tc.tier, p.Tier)
			require.Equal(t, "A greeting workflow", p.Description)
			require.Equal(t, "Ana <ana@example.com>", p.Author)
			require.Equal(t, "MIT", p.License)
			require.Equal(t, vaipkg.VaiMeta{WorkflowVersion: "1.0", Category: "utility", Tags: []string{"demo"}, MinVaiVersion: "1.4.0",
				Raw: map[string]any{"workflowVersion": "1.0", "category": "utility", "tags": []any{"demo"}, "minVaiVersion": "1.4.0"}}, p.Vai)
			file, data, err := store.Workflow(p.Name)
			require.NoError(t, err)
			require.Equal(t, p.WorkflowPath, file)
			require.JSONEq(t, vaipkgtest.Workflow, string(data))
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

// TestStoreListUninstall: installed packages are listed by name with their tier, a new version
// replaces the old one, and uninstall removes a package (scoped ones too).
// versionsOf are registry versions of name, each a valid package of that version.
func versionsOf(t *testing.T, name string, versions ...string) []vaipkgtest.Version {
	var out []vaipkgtest.Version
	for _, v := range versions {
		out = append(out, vaipkgtest.Version{Version: v, Tarball: vaipkgtest.Tgz(t, vaipkgtest.Package(name, v))})
	}
	return out
}

func TestStoreListUninstall(t *testing.T) {
	store := vaipkg.Store{Dir: filepath.Join(t.TempDir(), "packages")}
	ctx := context.Background()
	install := func(name, version string) {
		_, err := store.Install(ctx, vaipkgtest.Dir(t, vaipkgtest.Package(name, version)), vaipkg.Registry{})
		require.NoError(t, err)
	}
	list := func() []string {
		ps, err := store.List()
		require.NoError(t, err)
		var out []string
		for _, p := range ps {
			out = append(out, p.Name+"@"+p.Version+" "+p.Tier)
		}
		return out
	}
	require.Empty(t, list())
	install("vai-workflow-greet", "1.0.0")
	install("@vaicli/digest", "0.3.0")
	install("vai-workflow-greet", "1.1.0")
	require.Equal(t, []string{"@vaicli/digest@0.3.0 official", "vai-workflow-greet@1.1.0 community"}, list())
	require.NoDirExists(t, filepath.Join(store.Dir, "vai-workflow-greet", "1.0.0"), "the old version is replaced")

	p, err := store.Uninstall("@vaicli/digest")
	require.NoError(t, err)
	require.Equal(t, "0.3.0", p.Version)
	require.Equal(t, []string{"vai-workflow-greet@1.1.0 community"}, list())
	require.NoDirExists(t, filepath.Join(store.Dir, "@vaicli"))

	_, err = store.Uninstall("@vaicli/digest")
	require.ErrorIs(t, err, vaipkg.ErrNotInstalled)
	_, _, err = store.Workflow("vai-workflow-nothing")
	require.ErrorIs(t, err, vaipkg.ErrNotInstalled)
	_, err = store.Get("../escape")
	require.ErrorContains(t, err, "is not an npm package name")
}

// TestTarballLayouts: a tarball packed by npm (package/...), by tar from inside the package
// directory (./package.json, with a bare ./ entry) or by git archive (a pax global header first)
// installs, "./" before npm's top folder too; absolute paths, ".." components, links and an
// ambiguous layout are still refused, and a global header alone is no package.
func TestTarballLayouts(t *testing.T) {
	const name = "vai-workflow-greet"
	manifest := vaipkgtest.Manifest(name, "1.1.0", nil)
	subMain := vaipkgtest.Manifest(name, "1.1.0", map[string]any{"main": "flows/greet.json"})
	dir := func(n string) vaipkgtest.Entry { return vaipkgtest.Entry{Name: n, Type: tar.TypeDir} }
	file := func(n, body string) vaipkgtest.Entry { return vaipkgtest.Entry{Name: n, Body: body} }
	escape := filepath.Join(t.TempDir(), "escaped.json")
	// git archive --format=tar.gz writes a pax global header first: the commit's hash, no file
	global := vaipkgtest.Entry{Name: "pax_global_header", Type: tar.TypeXGlobalHeader,
		PAXRecords: map[string]string{"comment": "3f9c3ca0c1d2e3f4a5b6c7d8e9f00112233445566"}}
	tests := []struct {
		name    string
		entries []vaipkgtest.Entry
		main    string // the workflow file installed
		wantErr string
	}{
		{name: "npm pack", entries: []vaipkgtest.Entry{dir("package/"), file("package/package.json", manifest), file("package/workflow.json", vaipkgtest.Workflow)}},
		{name: "dot slash before package", entries: []vaipkgtest.Entry{dir("./"), dir("./package/"), file("./package/package.json", manifest),
			file("./package/workflow.json", vaipkgtest.Workflow), file("./package/README.md", "# greet\n")}},
		{name: "tar -C dir .", entries: []vaipkgtest.Entry{dir("./"), file("./package.json", manifest), file("./workflow.json", vaipkgtest.Workflow)}},
		{name: "bare dot directory", entries: []vaipkgtest.Entry{dir("."), file("./package.json", manifest), file("./workflow.json", vaipkgtest.Workflow)}},
		{name: "tar -C dir . with main in a folder", entries: []vaipkgtest.Entry{dir("./"), file("./package.json", subMain), dir("./flows/"),
			file("./flows/greet.json", vaipkgtest.Workflow)}, main: "flows/greet.json"},
		{name: "npm pack with main in a folder", entries: []vaipkgtest.Entry{file("./package/package.json", subMain),
			file("./package/flows/greet.json", vaipkgtest.Workflow)}, main: "flows/greet.json"},
		{name: "flat without dot slash", entries: []vaipkgtest.Entry{file("package.json", manifest), file("workflow.json", vaipkgtest.Workflow)}},
		{name: "repeated dot slash", entries: []vaipkgtest.Entry{file("././package.json", manifest), file("./././workflow.json", vaipkgtest.Workflow)}},
		{name: "another top folder name", entries: []vaipkgtest.Entry{file("./greet-1.1.0/package.json", manifest), file("./greet-1.1.0/workflow.json", vaipkgtest.Workflow)}},
		{name: "git archive --prefix=pkg/", entries: []vaipkgtest.Entry{global, dir("pkg/"), file("pkg/package.json", manifest),
			file("pkg/workflow.json", vaipkgtest.Workflow), file("pkg/README.md", "# greet\n")}},
		{name: "git archive without prefix", entries: []vaipkgtest.Entry{global, file("package.json", manifest), file("workflow.json", vaipkgtest.Workflow)}},

		{name: "dot slash then dot dot", entries: []vaipkgtest.Entry{file("./package.json", manifest), file("./workflow.json", vaipkgtest.Workflow),
			file("./../escaped.json", "{}")}, wantErr: "leaves the package (..): refused (nothing installed)"},
		{name: "dot dot inside", entries: []vaipkgtest.Entry{file("./package/package.json", manifest), file("./package/workflow.json", vaipkgtest.Workflow),
			file("./package/../../escaped.json", "{}")}, wantErr: "leaves the package (..)"},
		{name: "dot slash then absolute", entries: []vaipkgtest.Entry{file("./package.json", manifest), file("./workflow.json", vaipkgtest.Workflow),
			file("./"+escape, "{}")}, wantErr: "is not a relative path inside the package"},
		{name: "absolute", entries: []vaipkgtest.Entry{file("./package.json", manifest), file(escape, "{}")}, wantErr: "is not a relative path inside the package"},
		{name: "dot as a file", entries: []vaipkgtest.Entry{file(".", "{}"), file("./package.json", manifest)}, wantErr: `"." names no file`},
		{name: "dot slash as a link", entries: []vaipkgtest.Entry{{Name: "./", Type: tar.TypeSymlink, Linkname: "/"}, file("./package.json", manifest)},
			wantErr: `"./" names no file`},
		{name: "symlink under dot slash", entries: []vaipkgtest.Entry{file("./package.json", manifest), file("./workflow.json", vaipkgtest.Workflow),
			{Name: "./link", Type: tar.TypeSymlink, Linkname: "../../etc/passwd"}}, wantErr: "is a link (to ../../etc/passwd)"},
		{name: "hard link under dot slash", entries: []vaipkgtest.Entry{file("./package/package.json", manifest), file("./package/workflow.json", vaipkgtest.Workflow),
			{Name: "./package/hl", Type: tar.TypeLink, Linkname: "./package/workflow.json"}}, wantErr: "is a link"},
		{name: "two top folders", entries: []vaipkgtest.Entry{file("./a/package.json", manifest), file("./b/workflow.json", vaipkgtest.Workflow)},
			wantErr: "holds two top folders, a/ and b/"},
		{name: "git archive global header only", entries: []vaipkgtest.Entry{global}, wantErr: "has no package.json"},
		{name: "git archive with a link", entries: []vaipkgtest.Entry{global, dir("pkg/"), file("pkg/package.json", manifest),
			file("pkg/workflow.json", vaipkgtest.Workflow), {Name: "pkg/link", Type: tar.TypeSymlink, Linkname: "/etc/passwd"}}, wantErr: "is a link (to /etc/passwd)"},
		{name: "git archive with dot dot", entries: []vaipkgtest.Entry{global, file("pkg/package.json", manifest),
			file("pkg/workflow.json", vaipkgtest.Workflow), file("pkg/../../escaped.json", "{}")}, wantErr: "leaves the package (..)"},
		{name: "a global header later on", entries: []vaipkgtest.Entry{file("pkg/package.json", manifest), global, file("pkg/workflow.json", vaipkgtest.Workflow)},
			wantErr: "a pax global header after the first entry: refused"},
		{name: "global header beside two top folders", entries: []vaipkgtest.Entry{global, file("a/package.json", manifest), file("b/workflow.json", vaipkgtest.Workflow)},
			wantErr: "holds two top folders, a/ and b/"},
		{name: "escape sequence in a refused entry's name", entries: []vaipkgtest.Entry{file("./package.json", manifest),
			file("./\x1b]0;pwned\x07/../x", "{}")}, wantErr: "entry .//../x: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := vaipkg.Store{Dir: filepath.Join(t.TempDir(), "packages")}
			p, err := store.Install(context.Background(), vaipkgtest.WriteTgz(t, vaipkgtest.Tgz(t, nil, tc.entries...)), vaipkg.Registry{})
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.NotContains(t, err.Error(), "\x1b")
				require.Empty(t, storeFiles(t, store.Dir), "a refused package leaves nothing in the store")
				require.NoFileExists(t, escape)
				return
			}
			require.NoError(t, err)
			require.Equal(t, name, p.Name)
			require.Equal(t, "1.1.0", p.Version)
			main := tc.main
			if main == "" {
				main = "workflow.json"
			}
			require.Equal(t, filepath.Join(p.Dir, filepath.FromSlash(main)), p.WorkflowPath)
			_, data, err := store.Workflow(p.Name)
			require.NoError(t, err)
			require.JSONEq(t, vaipkgtest.Workflow, string(data))
		})
	}
}

// TestGitArchiveTarball: a tarball made by git archive --format=tar.gz, as a package author
// publishing from a git repository makes it (a pax global header, then the files, here under a
// --prefix), installs. Skipped without git.
func TestGitArchiveTarball(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	const name = "vai-workflow-greet"
	repo := vaipkgtest.Dir(t, vaipkgtest.Package(name, "1.1.0"))
	tgz := filepath.Join(t.TempDir(), "greet.tgz")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "greet")
	git("archive", "--format=tar.gz", "--prefix=pkg/", "-o", tgz, "HEAD")

	f, err := os.Open(tgz)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	h, err := tar.NewReader(zr).Next()
	require.NoError(t, err)
	require.Equal(t, byte(tar.TypeXGlobalHeader), h.Typeflag, "git archive's first entry: what this test is about")

	store := vaipkg.Store{Dir: filepath.Join(t.TempDir(), "packages")}
	p, err := store.Install(context.Background(), tgz, vaipkg.Registry{})
	require.NoError(t, err)
	require.Equal(t, name, p.Name)
	require.Equal(t, []string{name + "/1.1.0/.weft-install.json", name + "/1.1.0/README.md", name + "/1.1.0/package.json", name + "/1.1.0/workflow.json"},
		storeFiles(t, store.Dir))
}

// TestInstallFindings: an install reports weft check's warnings and notes on the workflow (as vai
// does) and still installs it; a workflow without findings reports none.
func TestInstallFindings(t *testing.T) {
	const name = "vai-workflow-greet"
	tests := []struct {
		name     string
		workflow string
		want     []string // Finding.String() of each, in order
	}{
		{name: "clean", workflow: vaipkgtest.Workflow},
		{name: "ingest without review", workflow: `{"name": "store", "description": "Stores a text",
			"inputs": {"text": {"type": "string", "description": "what to store"}},
			"steps": [{"id": "store", "name": "Store it", "tool": "ingest", "inputs": {"text": "{{ inputs.text }}", "source": "t", "collection": "docs"}}]}`,
			want: []string{name + `/workflow.json: warning: step "store": ingest writes to the knowledge store and no review step runs before it (add a review step (tool "review") that shows what will be written, and name it in "store"'s "dependsOn" or use its output)`}},
		{name: "http to a private address", workflow: `{"name": "meta", "description": "Reads metadata",
			"steps": [{"id": "get", "name": "Read it", "tool": "http", "inputs": {"url": "http://10.0.0.5/api"}}]}`,
			want: []string{name + `/workflow.json: warning: step "get": http to 10.0.0.5, a private, loopback or link-local address (point the step at a public URL: the worker refuses this address unless its WEFT_HTTP_ALLOW names it)`}},
		{name: "missing descriptions", workflow: `{"name": "bare", "inputs": {"who": {"type": "string"}},
			"steps": [{"id": "hello", "tool": "template", "inputs": {"text": "hi {{ inputs.who }}"}}]}`,
			want: []string{
				name + `/workflow.json: note: the workflow has no "description" (add one saying what it does and what it needs: weft list, weft info and MCP clients show it)`,
				name + `/workflow.json: note: input "who" has no "description" (say what to give: weft run asks for it with this text, and MCP clients show it)`,
				name + `/workflow.json: note: step "hello": the step has no "name" (add a short one saying what it does: plans, weft status and the Temporal UI show it)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := vaipkgtest.Package(name, "1.1.0")
			files["workflow.json"] = tc.workflow
			for _, src := range []string{vaipkgtest.Dir(t, files), vaipkgtest.WriteTgz(t, vaipkgtest.Tgz(t, files))} {
				store := vaipkg.Store{Dir: filepath.Join(t.TempDir(), "packages")}
				p, err := store.Install(context.Background(), src, vaipkg.Registry{})
				require.NoError(t, err, "findings do not refuse a package")
				var got []string
				for _, f := range p.Findings {
					got = append(got, f.String())
				}
				require.Equal(t, tc.want, got)
				_, err = store.Get(name)
				require.NoError(t, err)
			}
		})
	}
}

// TestInstallCompatibility: package.json's compatibility fields (vai's workflowVersion,
// minVaiVersion and tools, and dependencies) are read, and what weft cannot honour is a warning
// naming the field and what to write; the package is installed all the same.
func TestInstallCompatibility(t *testing.T) {
	const name = "vai-workflow-greet"
	vai := func(fields map[string]any) map[string]any {
		v := map[string]any{"workflowVersion": "1.0", "category": "utility"}
		for k, x := range fields {
			v[k] = x
		}
		return map[string]any{"vai": v}
	}
	tests := []struct {
		name  string
		extra map[string]any
		want  []string // the warnings, in order
	}{
		{name: "compatible", extra: vai(map[string]any{"minVaiVersion": "1.27", "tools": []string{"template"}})},
		{name: "a newer workflow format", extra: vai(map[string]any{"workflowVersion": "2.0"}),
			want: []string{`package.json "vai.workflowVersion" is "2.0": weft reads workflow format 1.x, so the workflow may rely on what weft does not do (weft check says what it finds)`}},
		{name: "versions that are none", extra: vai(map[string]any{"workflowVersion": "one", "minVaiVersion": "soon"}),
			want: []string{`package.json "vai.workflowVersion" is "one", not a version: write the workflow format the file is in, "1.0"`,
				`package.json "vai.minVaiVersion" is "soon", not a version: write the vai release the workflow needs, like 1.27.0`}},
		{name: "tools weft does not have", extra: vai(map[string]any{"tools": []string{"template", "teleport", "summon"}}),
			want: []string{`package.json "vai.tools" names "teleport", "summon", which weft does not have: list the tools the workflow's steps use (weft tools lists weft's)`}},
		{name: "dependencies", extra: map[string]any{"dependencies": map[string]any{"left-pad": "^1.3.0"}, "peerDependencies": map[string]any{"voyageai-cli": ">=1.27.0"}},
			want: []string{"package.json lists dependencies (left-pad, voyageai-cli): weft installs none, and a workflow package needs none"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := vaipkgtest.Package(name, "1.0.0")
			files["package.json"] = vaipkgtest.Manifest(name, "1.0.0", tc.extra)
			store := vaipkg.Store{Dir: filepath.Join(t.TempDir(), "packages")}
			p, err := store.Install(context.Background(), vaipkgtest.Dir(t, files), vaipkg.Registry{})
			require.NoError(t, err)
			require.Equal(t, tc.want, p.Warnings)
			_, _, err = store.Workflow(name)
			require.NoError(t, err, "installed")
		})
	}
}

// TestInstallSweepsStaging: an install removes the staging folders an interrupted install left
// (older than StagingTTL) and leaves a younger one, which may be another install's.
func TestInstallSweepsStaging(t *testing.T) {
	store := vaipkg.Store{Dir: filepath.Join(t.TempDir(), "packages")}
	old, young := filepath.Join(store.Dir, ".staging-1"), filepath.Join(store.Dir, ".staging-2")
	for _, d := range []string{old, young} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "sub"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "sub", "workflow.json"), []byte("{}"), 0o644))
	}
	stale := time.Now().Add(-vaipkg.StagingTTL - time.Minute)
	require.NoError(t, os.Chtimes(old, stale, stale))
	_, err := store.Install(context.Background(), vaipkgtest.Dir(t, vaipkgtest.Package("vai-workflow-greet", "1.0.0")), vaipkg.Registry{})
	require.NoError(t, err)
	require.NoDirExists(t, old)
	require.DirExists(t, young)
}
