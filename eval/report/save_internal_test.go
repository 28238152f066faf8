package report

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSaveWithoutHardLinks: on a filesystem without hard links (os.Link fails with EPERM, as on
// FAT, or ENOTSUP) a report is still kept, created under its own name with O_EXCL: a second
// report of the same second and workflow takes the next name and the first stays as it was.
func TestSaveWithoutHardLinks(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.ENOTSUP, syscall.ENOSYS} {
		t.Run(errno.Error(), func(t *testing.T) {
			links := 0
			link = func(oldname, newname string) error {
				links++
				return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: errno}
			}
			t.Cleanup(func() { link = os.Link })
			dir := filepath.Join(t.TempDir(), "evals")
			at := time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)
			r := &Report{Workflow: "qa", StartedAt: at, Summary: Summary{Cases: 1, Passed: 1}, Cases: []Case{{Name: "a", Grades: []Grade{}}}}
			first, err := Save(dir, r)
			require.NoError(t, err)
			require.Equal(t, "20261125T040000.000Z-qa", first)
			r.Summary.Passed = 0
			again, err := Save(dir, r)
			require.NoError(t, err)
			require.Equal(t, first+"-2", again)
			require.Positive(t, links, "Save tries a hard link first")

			got, err := Read(dir, first)
			require.NoError(t, err)
			require.Equal(t, 1, got.Summary.Passed, "the first report is not overwritten")
			got, err = Read(dir, again)
			require.NoError(t, err)
			require.Equal(t, 0, got.Summary.Passed)
			leftovers, err := filepath.Glob(filepath.Join(dir, ".saving-*"))
			require.NoError(t, err)
			require.Empty(t, leftovers)
		})
	}
}
