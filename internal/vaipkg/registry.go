package vaipkg

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
)

// DefaultRegistry is npm's public registry.
const DefaultRegistry = "https://registry.npmjs.org"

// RegistryFromEnv is the registry URL: WEFT_NPM_REGISTRY, else npm's own setting
// (npm_config_registry, NPM_CONFIG_REGISTRY), else DefaultRegistry.
func RegistryFromEnv() string {
	for _, k := range []string{"WEFT_NPM_REGISTRY", "npm_config_registry", "NPM_CONFIG_REGISTRY"} {
		if v := strings.TrimSpace(os.Getenv(k)); v != "" {
			return strings.TrimRight(v, "/")
		}
	}
	return DefaultRegistry
}

// MaxPackumentSize bounds a registry's answer about one package (all its versions).
const MaxPackumentSize = 32 << 20

// Registry reads packages from an npm registry.
type Registry struct {
	URL    string
	Client *http.Client
}

func (r Registry) client() *http.Client {
	if r.Client != nil {
		return r.Client
	}
	return &http.Client{Timeout: 2 * time.Minute}
}

type packument struct {
	Name     string                     `json:"name"`
	DistTags map[string]string          `json:"dist-tags"`
	Versions map[string]json.RawMessage `json:"versions"`
}

type versionDoc struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Dist    struct {
		Tarball   string `json:"tarball"`
		Integrity string `json:"integrity"`
		Shasum    string `json:"shasum"`
	} `json:"dist"`
}

// ParseSpec splits NAME[@VERSION] (the scope's @ is part of the name).
func ParseSpec(spec string) (name, version string) {
	if i := strings.LastIndex(spec, "@"); i > 0 {
		return spec[:i], spec[i+1:]
	}
	return spec, ""
}

func (r Registry) get(ctx context.Context, u string, limit int64, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("User-Agent", "weft (workflow packages)")
	resp, err := r.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("GET %s: 404 not found", Line(u))
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("GET %s: %s", Line(u), Line(resp.Status)) // the server's words: never raw to a terminal
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", Line(u), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("GET %s: the answer is over %d MiB: refused", Line(u), limit>>20)
	}
	return data, nil
}

// resolve reads the packument of name and picks version: "" or a dist-tag, or an exact version.
func (r Registry) resolve(ctx context.Context, name, version string) (*versionDoc, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	base := strings.TrimRight(r.URL, "/")
	data, err := r.get(ctx, base+"/"+strings.Replace(url.PathEscape(name), "%40", "@", 1), MaxPackumentSize, "application/json")
	if err != nil {
		return nil, fmt.Errorf("looking up %s on %s (WEFT_NPM_REGISTRY or npm_config_registry set another registry): %w", name, base, err)
	}
	var p packument
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s on %s: the registry's answer is not a packument: %w", name, base, err)
	}
	want := version
	if want == "" {
		want = "latest"
	}
	if v, ok := p.DistTags[want]; ok {
		want = v
	}
	raw, ok := p.Versions[want]
	if _, exact := semver.StrictNewVersion(version); !ok && version != "" && exact != nil { // not an exact version: a range
		if want, err = pickVersion(p, version); err != nil {
			return nil, fmt.Errorf("%s on %s: %w", name, base, err)
		}
		raw, ok = p.Versions[want]
	}
	if !ok {
		return nil, fmt.Errorf("%s has no version or dist-tag %q on %s (versions: %s)", name, want, base, recentVersions(p))
	}
	var d versionDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("%s@%s on %s: %w", name, Line(want), base, err)
	}
	// the registry's text, printed in messages: never raw to a terminal (Line)
	if d.Version = Line(d.Version); d.Version == "" {
		d.Version = Line(want)
	}
	u, err := url.Parse(d.Dist.Tarball)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.IndexFunc(d.Dist.Tarball, Unsafe) >= 0 {
		return nil, fmt.Errorf("%s@%s on %s: dist.tarball %q is not an http(s) URL", name, d.Version, base, d.Dist.Tarball)
	}
	return &d, nil
}

// pickVersion resolves a version range (^1.2.0, ~1.2, 1.x, >=1.0 <2, 1.0.0 - 1.4.0, a || b) as
// npm does: the version the dist-tag latest names when it is in the range, else the highest
// version in it. A pre-release is in a range only when the part of the range it satisfies (one
// side of a ||) names a pre-release of the same major.minor.patch: ^1.2.0-beta.1 takes
// 1.2.0-beta.2, never 1.3.0-alpha.1 (inRange).
func pickVersion(p packument, rng string) (string, error) {
	if _, err := semver.NewConstraint(rng); err != nil {
		return "", fmt.Errorf("%q is neither a version, a dist-tag nor a version range (write one like 1.2.0, latest, ^1.2.0, ~1.2, 1.x or \">=1.0 <2\")", rng)
	}
	if l, ok := p.DistTags["latest"]; ok {
		if v, err := semver.StrictNewVersion(l); err == nil && inRange(rng, v) {
			if _, ok := p.Versions[l]; ok {
				return l, nil
			}
		}
	}
	var best *semver.Version
	for s := range p.Versions {
		v, err := semver.StrictNewVersion(s)
		if err != nil || !inRange(rng, v) {
			continue // a key that is no version is never picked by a range
		}
		if best == nil || v.GreaterThan(best) {
			best = v
		}
	}
	if best == nil {
		return "", fmt.Errorf("no version satisfies %q (versions: %s)", rng, recentVersions(p))
	}
	return best.Original(), nil
}

// prereleaseRE finds the versions with a pre-release a range names (1.2.0-beta.1, v1.2.0-rc.1).
var prereleaseRE = regexp.MustCompile(`v?(\d+)\.(\d+)\.(\d+)-[0-9A-Za-z.-]+`)

// inRange reports whether v is in the range as npm decides: in one of the range's ||-separated
// sets, and, when v is a pre-release, only in a set that names a pre-release of v's
// major.minor.patch (semver's Check lets in any pre-release once the range names one).
func inRange(rng string, v *semver.Version) bool {
	for _, set := range strings.Split(rng, "||") {
		c, err := semver.NewConstraint(strings.TrimSpace(set))
		if err != nil || !c.Check(v) {
			continue
		}
		if v.Prerelease() == "" {
			return true
		}
		for _, m := range prereleaseRE.FindAllStringSubmatch(set, -1) {
			if m[1] == strconv.FormatUint(v.Major(), 10) && m[2] == strconv.FormatUint(v.Minor(), 10) && m[3] == strconv.FormatUint(v.Patch(), 10) {
				return true
			}
		}
	}
	return false
}

// recentVersions lists the packument's ten highest versions, lowest first, for messages.
func recentVersions(p packument) string {
	var vs []*semver.Version
	var other []string
	for s := range p.Versions {
		if v, err := semver.StrictNewVersion(s); err == nil {
			vs = append(vs, v)
		} else {
			other = append(other, strconv.Quote(Line(s))) // the registry's text: never raw to a terminal
		}
	}
	sort.Sort(semver.Collection(vs))
	sort.Strings(other)
	have := other
	for _, v := range vs {
		have = append(have, v.Original())
	}
	if len(have) > 10 {
		have = have[len(have)-10:]
	}
	if len(have) == 0 {
		return "none"
	}
	return strings.Join(have, ", ")
}

// fetch downloads the version's tarball and checks it against dist.integrity (the strongest
// sha512/sha384/sha256 it lists) or, failing that, dist.shasum (sha1).
func (r Registry) fetch(ctx context.Context, name string, d *versionDoc) ([]byte, string, error) {
	data, err := r.get(ctx, d.Dist.Tarball, MaxTarballSize, "")
	if err != nil {
		return nil, "", fmt.Errorf("downloading %s@%s: %w", name, d.Version, err)
	}
	sri, err := verify(data, d.Dist.Integrity, d.Dist.Shasum)
	if err != nil {
		return nil, "", fmt.Errorf("%s@%s from %s: %w: refused (nothing installed)", name, d.Version, d.Dist.Tarball, err)
	}
	return data, sri, nil
}

// verify checks data against an SRI string (space-separated algo-base64 hashes) or a hex sha1.
func verify(data []byte, integrity, shasum string) (string, error) {
	algos := []struct {
		name string
		h    func() hash.Hash
	}{{"sha512", sha512.New}, {"sha384", sha512.New384}, {"sha256", sha256.New}}
	for _, a := range algos {
		var wants []string
		for _, f := range strings.Fields(integrity) {
			if v, ok := strings.CutPrefix(f, a.name+"-"); ok {
				v, _, _ = strings.Cut(v, "?") // SRI options
				wants = append(wants, v)
			}
		}
		if len(wants) == 0 {
			continue
		}
		h := a.h()
		h.Write(data)
		got := base64.StdEncoding.EncodeToString(h.Sum(nil))
		for _, w := range wants {
			if w == got {
				return a.name + "-" + got, nil
			}
		}
		return "", fmt.Errorf("integrity check failed: the tarball's %s is %s, the registry says %s", a.name, got, wants[0])
	}
	if shasum != "" {
		sum := sha1.Sum(data)
		got := hex.EncodeToString(sum[:])
		if !strings.EqualFold(got, shasum) {
			return "", fmt.Errorf("integrity check failed: the tarball's sha1 is %s, the registry's dist.shasum says %s", got, shasum)
		}
		return "sha1-" + base64.StdEncoding.EncodeToString(sum[:]), nil
	}
	if integrity != "" {
		return "", fmt.Errorf("dist.integrity %q names no hash weft checks (sha512, sha384, sha256) and there is no dist.shasum", integrity)
	}
	return "", fmt.Errorf("the registry gives neither dist.integrity nor dist.shasum, so the tarball cannot be checked")
}

// Install installs arg: a directory, a local .tgz/.tar.gz, or NAME[@VERSION] from reg. A path
// that exists wins over a registry name. The package returned carries Check's findings on its
// workflow (warnings and notes: they do not refuse it).
func (s Store) Install(ctx context.Context, arg string, reg Registry) (*Package, error) {
	var (
		fs        files
		source    string
		integrity string
		wantName  string
		err       error
	)
	st, statErr := os.Stat(arg)
	lower := strings.ToLower(arg)
	switch {
	case statErr == nil && st.IsDir():
		source = arg
		fs, err = readDir(arg)
	case statErr == nil:
		if !strings.HasSuffix(lower, ".tgz") && !strings.HasSuffix(lower, ".tar.gz") {
			return nil, fmt.Errorf("%s is a file but not a package tarball (.tgz): give a package directory, a .tgz or a package name", arg)
		}
		source = arg
		fs, err = readTarballFile(arg)
	case strings.HasSuffix(lower, ".tgz") || strings.HasSuffix(lower, ".tar.gz") || strings.ContainsAny(arg, `/\`) && !strings.HasPrefix(arg, "@"):
		return nil, fmt.Errorf("%s: %w", arg, statErr)
	default:
		name, version := ParseSpec(arg)
		if err := CheckName(name); err != nil {
			return nil, fmt.Errorf("%s is not a directory, a .tgz or a package name: %w", arg, err)
		}
		var d *versionDoc
		if d, err = reg.resolve(ctx, name, version); err != nil {
			return nil, err
		}
		var data []byte
		if data, integrity, err = reg.fetch(ctx, name, d); err != nil {
			return nil, err
		}
		source, wantName = d.Dist.Tarball, name
		fs, err = readTarball(bytes.NewReader(data), d.Dist.Tarball)
	}
	if err != nil {
		return nil, err
	}
	p, wf, err := prepare(fs, source)
	if err != nil {
		return nil, err
	}
	if wantName != "" && p.Name != wantName {
		return nil, fmt.Errorf("the registry's tarball for %s holds package %s: refused", wantName, p.Name)
	}
	p.Integrity = integrity
	warnings := p.Warnings
	out, err := s.install(p, fs)
	if err != nil {
		return nil, err
	}
	out.Warnings = warnings
	out.Findings = check(p.Name+"/"+p.Main, nil, wf, nil) // what vai prints on install; an invalid workflow was refused by prepare
	return out, nil
}
