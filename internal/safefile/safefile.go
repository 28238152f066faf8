package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// ErrNotRegular is wrapped by the error for a path that is not a regular file (a directory, a
// device such as /dev/zero, a named pipe, a socket).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error for a file over its limit, or one that grew past it while
// being read.
var ErrTooLarge = errors.New("file too large")

// Error is a refused file. Test with errors.Is(err, ErrNotRegular) or errors.Is(err, ErrTooLarge).
type Error struct {
	What  string // the file's role, e.g. "workflow file", "--input doc"
	Path  string
	Kind  string // "regular file", "directory", "character device", "named pipe (FIFO)", ...
	Size  int64  // the size seen: from stat, or the bytes read when the file grew while read
	Grew  bool   // the file was within the limit when opened and grew past it while read
	Limit int64
	Hint  string // what to do instead (a default is used when empty)
	Err   error  // ErrNotRegular or ErrTooLarge
}

func (e *Error) Error() string {
	if errors.Is(e.Err, ErrNotRegular) {
		hint := "weft reads only regular files; save the content to a file and give its path"
		if e.Kind == "directory" {
			hint = "give the path of a file, not of a directory"
		}
		return fmt.Sprintf("%s is a %s, not a regular file (refused before reading it): %s", e.name(), e.Kind, hint)
	}
	hint := e.Hint
	if hint == "" {
		hint = "give a smaller file"
	}
	if e.Grew {
		return fmt.Sprintf("%s grew past the %s limit while being read (something writes to it): %s", e.name(), Limit(e.Limit), hint)
	}
	size := Size(e.Size)
	if size == Size(e.Limit) { // 1.0 MB over a 1 MB limit: say by how much
		size = fmt.Sprintf("%d bytes", e.Size)
	}
	return fmt.Sprintf("%s is %s, over the %s limit (refused before reading it): %s", e.name(), size, Limit(e.Limit), hint)
}

// name is "workflow file w.json", or "--input doc: big.txt" when What is a flag or an
// environment variable.
func (e *Error) name() string {
	if label(e.What) {
		return e.What + ": " + e.Path
	}
	return e.What + " " + e.Path
}

// label reports whether what is a flag (-x, --name ...) or an environment variable (WEFT_X).
func label(what string) bool {
	if strings.HasPrefix(what, "-") {
		return true
	}
	word, _, _ := strings.Cut(what, " ")
	return word != "" && strings.ToUpper(word) == word && strings.ContainsAny(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

func (e *Error) Unwrap() error { return e.Err }

// Read reads the regular file at path, at most limit bytes. what names the file's role in
// messages ("workflow file", "--input doc", "key file"). A path that is not a regular file, or a
// file over limit, is refused before anything is read; the file is opened once (without blocking,
// so a named pipe swapped in after the check does not hang), checked again on the open handle and
// read through a LimitReader of limit+1, so a file that grows while it is read is refused too.
// Errors from the file system wrap the os error (errors.Is(err, fs.ErrNotExist) holds).
func Read(path string, limit int64, what string) ([]byte, error) {
	return ReadHint(path, limit, what, "")
}

// ReadHint is Read with hint, what to do instead when the file is over the limit.
func ReadHint(path string, limit int64, what, hint string) ([]byte, error) {
	refuse := func(st fs.FileInfo) error {
		e := &Error{What: what, Path: path, Kind: Kind(st.Mode()), Size: st.Size(), Limit: limit, Hint: hint}
		switch {
		case !st.Mode().IsRegular():
			e.Err = ErrNotRegular
		case st.Size() > limit:
			e.Err = ErrTooLarge
		default:
			return nil
		}
		return e
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := refuse(st); err != nil {
		return nil, err
	}
	f, err := Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := refuse(st); err != nil {
		return nil, err // the path was replaced between the check and the open
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s: %w", what, path, err)
	}
	if int64(len(data)) > limit {
		return nil, &Error{What: what, Path: path, Kind: "regular file", Size: int64(len(data)), Grew: true, Limit: limit, Hint: hint, Err: ErrTooLarge}
	}
	return data, nil
}

// Open opens path for reading without blocking: a named pipe is opened at once (where os.Open
// would wait for a writer), so a caller that checks f.Stat() before reading never hangs.
func Open(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// Kind names a file mode for people: "regular file", "directory", "named pipe (FIFO)", ...
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeIrregular != 0:
		return "file of unknown kind"
	}
	return "special file"
}

var units = []struct {
	name  string
	bytes int64
}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}}

// Size writes a file's size for people: "512 bytes", "50.0 MB", "2.0 GB" (1 MB = 2^20 bytes).
func Size(n int64) string {
	for _, u := range units {
		if n >= u.bytes {
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u.bytes), u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Limit writes a limit for people: "4 MB", "64 KB", or bytes when it is no whole multiple.
func Limit(n int64) string {
	for _, u := range units {
		if n >= u.bytes && n%u.bytes == 0 {
			return fmt.Sprintf("%d %s", n/u.bytes, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
