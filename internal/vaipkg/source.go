package vaipkg

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weftworks/weft/internal/safefile"
)

// Limits on what a package may hold. A vai package is a package.json, one workflow file and a
// README: these are far above that and far below what could fill a disk or memory.
const (
	MaxFileSize    = 4 << 20  // one file in a package
	MaxPackageSize = 32 << 20 // all files of a package, unpacked
	MaxTarballSize = 16 << 20 // a .tgz, compressed
	MaxEntries     = 2000     // entries in a tarball
)

// files are a package's files by path inside the package.
type files map[string][]byte

// readTarball reads a package tarball (gzip'd tar): npm's, whose entries sit under one top folder
// ("package/" in npm pack's), or one packed from inside the package directory (tar -C DIR .,
// entries "./package.json", ...), or git archive's (a pax global header first). A leading "./"
// is accepted anywhere, and "./" itself as a directory; a pax global header is skipped. Regular
// files only: a link, a device, an absolute path, a ".." component or anything over the limits
// refuses the whole package.
func readTarball(r io.Reader, what string) (files, error) {
	zr, err := gzip.NewReader(io.LimitReader(r, MaxTarballSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s is not a gzip'd tarball (.tgz): %w", what, err)
	}
	defer func() { _ = zr.Close() }()
	tr := tar.NewReader(zr)
	out := files{}
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", what, err)
		}
		if n >= MaxEntries {
			return nil, fmt.Errorf("%s has more than %d entries: refused", what, MaxEntries)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			if n > 0 {
				return nil, fmt.Errorf("%s: a pax global header after the first entry: refused (git archive writes one, first)", what)
			}
			continue // git archive's commit hash: no file (archive/tar applies it to no entry)
		}
		name := Line(h.Name) // for messages: the entry's name is the package author's text
		rel, err := entryPath(h.Name, h.Typeflag == tar.TypeDir)
		if err != nil {
			return nil, fmt.Errorf("%s: entry %s: %w: refused (nothing installed)", what, name, err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, fmt.Errorf("%s: entry %s is a link (to %s): packages may hold only regular files: refused (nothing installed)", what, name, Line(h.Linkname))
		default:
			return nil, fmt.Errorf("%s: entry %s is not a regular file (tar type %q): refused (nothing installed)", what, name, h.Typeflag)
		}
		if h.Size > MaxFileSize {
			return nil, fmt.Errorf("%s: entry %s has %d bytes, over the %d MiB a package file may have: refused", what, name, h.Size, MaxFileSize>>20)
		}
		total += h.Size
		if total > MaxPackageSize {
			return nil, fmt.Errorf("%s unpacks to more than %d MiB: refused", what, MaxPackageSize>>20)
		}
		data, err := io.ReadAll(io.LimitReader(tr, MaxFileSize+1))
		if err != nil {
			return nil, fmt.Errorf("reading %s from %s: %w", name, what, err)
		}
		if int64(len(data)) > MaxFileSize {
			return nil, fmt.Errorf("%s: entry %s is over %d MiB: refused", what, name, MaxFileSize>>20)
		}
		out[rel] = data
	}
	if zr.Close() != nil {
		return nil, fmt.Errorf("%s: the gzip stream is corrupt", what)
	}
	return stripTop(out, what)
}

// entryPath is a tarball entry's path without its leading "./" (one or more), checked like every
// path inside a package; "" for the archive's own root ("./" or "."), which only a directory entry
// may name.
func entryPath(name string, dir bool) (string, error) {
	rel := name
	for strings.HasPrefix(rel, "./") {
		rel = rel[2:]
	}
	if rel == "" || rel == "." {
		if dir {
			return "", nil
		}
		return "", fmt.Errorf("%q names no file", name)
	}
	return cleanPath(rel)
}

// stripTop drops the tarball's top folder ("package/" in npm's tarballs), as npm does, unless
// package.json sits at the top (a tarball packed from inside the package directory). Files beside
// the top folder are not the package's; two top folders make the tarball ambiguous: refused.
func stripTop(fs files, what string) (files, error) {
	if _, ok := fs["package.json"]; ok {
		return fs, nil
	}
	out := files{}
	var top string
	for _, p := range slices.Sorted(maps.Keys(fs)) {
		dir, rest, ok := strings.Cut(p, "/")
		if !ok {
			continue
		}
		if top != "" && dir != top {
			return nil, fmt.Errorf("%s holds two top folders, %s/ and %s/: a package tarball holds one (npm pack's package/) or has package.json at its top: refused (nothing installed)", what, Line(top), Line(dir))
		}
		top = dir
		out[rest] = fs[p]
	}
	return out, nil
}

// readTarballFile reads a local .tgz.
func readTarballFile(p string) (files, error) {
	f, err := safefile.Open(p)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file: give the path of a .tgz", p)
	} else if st.Size() > MaxTarballSize {
		f.Close()
		return nil, fmt.Errorf("%s has %d bytes, over the %d MiB a package tarball may have", p, st.Size(), MaxTarballSize>>20)
	}
	defer f.Close()
	return readTarball(f, p)
}

// readDir reads what weft needs of a package directory: package.json, its workflow file and
// README.md. Links are refused like in a tarball; other files are not read.
func readDir(dir string) (files, error) {
	out := files{}
	read := func(rel string, optional bool) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		st, err := os.Lstat(p)
		if optional && errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("package directory %s: %w", dir, err)
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("package directory %s: %s is a symbolic link: packages may hold only regular files", dir, rel)
		}
		data, err := safefile.Read(p, MaxFileSize, "package file")
		if err != nil {
			return err
		}
		out[rel] = data
		return nil
	}
	if err := read("package.json", false); err != nil {
		return nil, err
	}
	m, err := ParseManifest(out["package.json"])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := read(m.Main, false); err != nil {
		return nil, err
	}
	if err := read("README.md", true); err != nil {
		return nil, err
	}
	return out, nil
}
