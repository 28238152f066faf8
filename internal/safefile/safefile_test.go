package safefile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/safefile"
)

// TestReadRefusesBeforeReading: every path that is not a small regular file is refused at once,
// with a message naming the file, what it is, the limit and what to do. Each case would hang or
// run out of memory if the file were read first (/dev/zero, a FIFO without a writer).
func TestReadRefusesBeforeReading(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sparse := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(sparse, nil, 0o600))
	require.NoError(t, os.Truncate(sparse, 1<<20+1)) // sparse: nothing is written
	huge := filepath.Join(dir, "huge.json")
	require.NoError(t, os.WriteFile(huge, nil, 0o600))
	require.NoError(t, os.Truncate(huge, 2<<30))
	cases := []struct {
		name, path string
		is         error
		want       []string
	}{
		{"/dev/zero", "/dev/zero", safefile.ErrNotRegular,
			[]string{"workflow file /dev/zero is a character device, not a regular file", "save the content to a file"}},
		{"a FIFO", fifo, safefile.ErrNotRegular,
			[]string{"workflow file " + fifo + " is a named pipe (FIFO), not a regular file"}},
		{"a directory", dir, safefile.ErrNotRegular,
			[]string{"workflow file " + dir + " is a directory", "give the path of a file"}},
		{"a sparse file just over the limit", sparse, safefile.ErrTooLarge,
			[]string{"workflow file " + sparse + " is 1048577 bytes, over the 1 MB limit", "split it"}},
		{"a 2 GB file", huge, safefile.ErrTooLarge,
			[]string{"is 2.0 GB, over the 1 MB limit"}},
		{"a missing file", filepath.Join(dir, "nope.json"), fs.ErrNotExist,
			[]string{"workflow file: stat " + filepath.Join(dir, "nope.json")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := safefile.ReadHint(c.path, 1<<20, "workflow file", "split it")
			require.Error(t, err)
			require.ErrorIs(t, err, c.is)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
			require.Less(t, time.Since(start), time.Second, "refused at once, without reading")
		})
	}
}

func TestReadAllowsASmallFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ok.json")
	require.NoError(t, os.WriteFile(p, []byte("12345"), 0o600))
	data, err := safefile.Read(p, 5, "fixture")
	require.NoError(t, err)
	require.Equal(t, "12345", string(data))
	_, err = safefile.Read(p, 4, "fixture")
	require.ErrorIs(t, err, safefile.ErrTooLarge)
	require.ErrorContains(t, err, "fixture "+p+" is 5 bytes, over the 4 bytes limit (refused before reading it): give a smaller file")
	var fe *safefile.Error
	require.True(t, errors.As(err, &fe))
	require.Equal(t, int64(5), fe.Size)
}

// TestLabels: a flag or an environment variable is followed by a colon.
func TestLabels(t *testing.T) {
	for what, want := range map[string]string{
		"--input doc":      "--input doc: /dev/zero is a character device",
		"WEFT_PRICES_FILE": "WEFT_PRICES_FILE: /dev/zero is a character device",
		"key file":         "key file /dev/zero is a character device",
	} {
		_, err := safefile.Read("/dev/zero", 10, what)
		require.ErrorContains(t, err, want)
	}
}

func TestSizes(t *testing.T) {
	require.Equal(t, "512 bytes", safefile.Size(512))
	require.Equal(t, "50.0 MB", safefile.Size(50<<20))
	require.Equal(t, "2.0 GB", safefile.Size(2<<30))
	require.Equal(t, "4 MB", safefile.Limit(4<<20))
	require.Equal(t, "64 KB", safefile.Limit(64<<10))
	require.Equal(t, "1000 bytes", safefile.Limit(1000))
}

// TestOpenDoesNotBlockOnAFIFO: os.Open of a named pipe waits for a writer; Open returns at once
// and the handle says what it is.
func TestOpenDoesNotBlockOnAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "keys.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	done := make(chan error, 1)
	go func() {
		f, err := safefile.Open(fifo)
		if err == nil {
			var st os.FileInfo
			if st, err = f.Stat(); err == nil && st.Mode().IsRegular() {
				err = errors.New("a FIFO reported as a regular file")
			}
			_ = f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Open blocked on a named pipe")
	}
}
