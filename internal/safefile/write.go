package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrBadName is wrapped by the error for a file name that is not a plain name inside its folder.
var ErrBadName = errors.New("not a plain file name")

// CheckName refuses name unless it is a plain file name ending ext (".json") that stays inside
// the folder it is joined to: not empty, no path separator (/ or \), no "..", no NUL or other
// control character, not hidden (a leading "."), at most 128 bytes.
func CheckName(name, ext string) error {
	bad := func(why string) error {
		return fmt.Errorf("file name %q %s: give a plain file name such as report%s: %w", name, why, ext, ErrBadName)
	}
	switch {
	case name == "":
		return bad("is empty")
	case strings.ContainsAny(name, `/\`):
		return bad("holds a path separator")
	case strings.Contains(name, ".."):
		return bad(`holds ".."`)
	case strings.HasPrefix(name, "."):
		return bad("is hidden (starts with a dot)")
	case len(name) > 128:
		return bad("is longer than 128 bytes")
	case !strings.HasSuffix(name, ext) || len(name) == len(ext):
		return bad("does not end " + ext)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return bad("holds a control character")
		}
	}
	return nil
}

// WriteAtomic writes data as the file name in dir, so that a reader sees the old file or the new
// one, never a part: the data goes to a temporary file in dir, synced, then renamed over name, and
// dir is synced. name is checked with CheckName (ext is the ending it must have), so the file
// cannot be outside dir; an existing name that is not a regular file (a directory, a symbolic link,
// a named pipe) is refused, not replaced. what names the file's role in messages.
func WriteAtomic(dir, name, ext string, data []byte, perm fs.FileMode, what string) error {
	if err := CheckName(name, ext); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	path := filepath.Join(dir, name)
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s %s is a %s, not a regular file: weft replaces only regular files; remove it or choose another name: %w", what, path, Kind(st.Mode()), ErrNotRegular)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", what, err)
	}
	tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return fmt.Errorf("%s: writing %s: %w", what, path, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("%s: writing %s: %w", what, path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("%s: writing %s: %w", what, path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("%s: writing %s: %w", what, path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: writing %s: %w", what, path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: writing %s: %w", what, path, err)
	}
	done = true
	if d, err := os.Open(dir); err == nil { // the rename lasts a crash
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
