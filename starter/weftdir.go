package starter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// weftDir is the folder of a project where weft dev (and make cluster, make scaleout) keep their
// data: never something to commit.
const weftDir = ".weft"

// ignoreWeftDir makes sure git ignores the .weft folder that holds dataDir: when dataDir lies in
// a relative .weft folder (the default .weft/dev does), it creates that folder with a .gitignore
// that ignores everything in it, so a project never commits a database by accident. A .gitignore
// already there is left as it is; other data directories are the user's to manage.
func ignoreWeftDir(dataDir string) error {
	clean := filepath.Clean(dataDir)
	if filepath.IsAbs(clean) {
		return nil
	}
	first, _, _ := strings.Cut(filepath.ToSlash(clean), "/")
	if first != weftDir {
		return nil
	}
	if err := os.MkdirAll(weftDir, 0o755); err != nil {
		return fmt.Errorf("--data-dir %s: %w", dataDir, err)
	}
	f, err := os.OpenFile(filepath.Join(weftDir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--data-dir %s: %w", dataDir, err)
	}
	_, err = f.WriteString("# weft's local data (weft dev): not for version control\n*\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
