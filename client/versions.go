package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/weftworks/weft/internal/safefile"
	"github.com/weftworks/weft/workflows/dsl"
)

// Saved versions of the operator's workflow files. Saving is the one way weft writes a file of
// the workflows folder: the HTTP API (PUT /v1/workflows/{name}), the CLI (weft workflows save)
// and the console's builder all call WorkflowFiles.SaveWorkflow. The folder's own files are the
// truth, no database: each file's versions are numbered JSON records in
// <folder>/.versions/<name>/ (000001.json, ...), each written atomically and never rewritten, and
// a save holds a lock on that folder (flock) while it checks and writes, so a gateway and a CLI
// saving at once take turns.
//
//   - A save names the version it started from (base; 0 for a file with no saved version). When
//     base is not the current version the save is refused (*VersionConflictError naming the
//     current one): nobody's save is lost.
//   - A save is safe to retry: the same content with the same base as the current version's is
//     that version (Created false), not a second one; so is content equal to the current one.
//   - A file that does not validate (Validate) is refused with its problems
//     (*InvalidWorkflowError): a file of the folder is what a run by name starts, so only what
//     validates is written there. Drafts stay where they are made (the builder keeps one in the
//     browser); there is no saved draft.
//   - Restore is a new version with an old one's content: history is never rewritten.
//   - A file changed outside weft (an editor) is recorded as a version of its own (by
//     UnknownAuthor) at the next save or restore, before that one, so no content is lost from
//     the history; a save that was recorded but whose file write did not happen (a crash between
//     the two) is completed.

// UnknownAuthor is who a version has when weft found the content on disk, written outside weft.
const UnknownAuthor = "(written outside weft)"

// BaseCurrent as a save's base skips the lost-update check: the save is over whatever the
// current version is (weft workflows save without --base). The HTTP API never passes it.
const BaseCurrent = -1

// MaxVersionMessage is the longest message a version may carry, in bytes.
const MaxVersionMessage = 1000

// WorkflowFiles saves the workflow files of a folder with their versions.
type WorkflowFiles struct {
	// Dir is the operator's workflows folder (WEFT_WORKFLOWS_DIR, the gateway's --workflows-dir).
	Dir string
	// Resolve finds the workflows a saved file calls, to validate what it gives them
	// (default FileResolver(Dir)).
	Resolve Resolver
	// Now is the clock of the versions' times (default time.Now).
	Now func() time.Time
}

// NewWorkflowFiles is WorkflowFiles of dir.
func NewWorkflowFiles(dir string) *WorkflowFiles { return &WorkflowFiles{Dir: dir} }

// WorkflowVersionInfo is one saved version of a workflow file.
type WorkflowVersionInfo struct {
	ID      int       `json:"id" jsonschema:"the version's number: 1 for the first, then one more each save"`
	Who     string    `json:"who" jsonschema:"who saved it: the key's (or login's) name; the CLI's WEFT_USER or OS user"`
	When    time.Time `json:"when"`
	SHA256  string    `json:"sha256" jsonschema:"the hex SHA-256 of the content"`
	Message string    `json:"message,omitempty"`
	Size    int       `json:"size" jsonschema:"the content's length in bytes"`
	// Previous is the version it was saved over (0: the first).
	Previous int `json:"previous" jsonschema:"the version it was saved over (0: the first)"`
	// Base is the version the save said it started from, when that is not Previous (the file had
	// been changed outside weft, recorded as Previous).
	Base int `json:"base,omitempty" jsonschema:"the version the save started from, when not previous"`
	// Restored is the version whose content a restore brought back.
	Restored int `json:"restored,omitempty" jsonschema:"the version whose content this restore brought back"`
}

// versionRecord is a version as its file holds it.
type versionRecord struct {
	WorkflowVersionInfo
	Content string `json:"content"`
}

// SaveResult is what a save or a restore answers.
type SaveResult struct {
	Name    string              `json:"name" jsonschema:"the workflow's name in the catalog"`
	File    string              `json:"file" jsonschema:"the file written, in the workflows folder"`
	Version WorkflowVersionInfo `json:"version" jsonschema:"the version the file now holds"`
	// Created is false when nothing was written: the same save again (a retry), or content equal
	// to the current version's.
	Created bool `json:"created" jsonschema:"false when this is the version an earlier, identical save made (a retry) or the content was the current version's already"`
}

// BadWorkflowNameError: the name cannot be a file of the workflows folder.
type BadWorkflowNameError struct {
	Name string
	Err  error
}

func (e *BadWorkflowNameError) Error() string {
	return fmt.Sprintf("workflow name %q: %v", e.Name, e.Err)
}
func (e *BadWorkflowNameError) Unwrap() error { return e.Err }

// VersionConflictError: the save started from a version that is not the current one.
type VersionConflictError struct {
	Name    string
	Base    int
	Current WorkflowVersionInfo
}

func (e *VersionConflictError) Error() string {
	if e.Current.ID == 0 {
		return fmt.Sprintf("workflow %q has no saved version, not version %d: its current version is 0; save with base 0", e.Name, e.Base)
	}
	return fmt.Sprintf("workflow %q changed since version %d: its current version is %d (saved by %s at %s); read it, merge your change into it and save again with base %d",
		e.Name, e.Base, e.Current.ID, e.Current.Who, e.Current.When.Format(time.RFC3339), e.Current.ID)
}

// InvalidWorkflowError: the content does not validate; nothing was written.
type InvalidWorkflowError struct {
	Name  string
	Check Validation
}

func (e *InvalidWorkflowError) Error() string {
	var lines []string
	for _, d := range e.Check.Diagnostics.Errors() {
		lines = append(lines, d.String())
	}
	return fmt.Sprintf("workflow %q not saved: it does not validate (%d errors); fix them and save again: %s", e.Name, e.Check.Errors, strings.Join(lines, "; "))
}

// VersionNotFoundError: the workflow has no version of that number.
type VersionNotFoundError struct {
	Name   string
	ID     int
	Latest int
}

func (e *VersionNotFoundError) Error() string {
	if e.Latest == 0 {
		return fmt.Sprintf("workflow %q has no saved version: it has none yet (a save makes version 1)", e.Name)
	}
	return fmt.Sprintf("workflow %q has no version %d: its versions are 1 to %d (weft workflows versions %s)", e.Name, e.ID, e.Latest, e.Name)
}

// ContentTooLargeError: the content is over dsl.MaxFileSize.
type ContentTooLargeError struct {
	Name string
	Size int
}

func (e *ContentTooLargeError) Error() string {
	return fmt.Sprintf("workflow %q not saved: its content is %d bytes, over the %d byte limit of a workflow file; split it into workflows that call each other", e.Name, e.Size, dsl.MaxFileSize)
}

// ErrNoWorkflowsDir: there is no workflows folder to save into.
var ErrNoWorkflowsDir = errors.New("no workflows folder to save into: give the gateway --workflows-dir (the CLI: --workflows-dir or WEFT_WORKFLOWS_DIR)")

// FileName is the file of workflow name in the folder: name (a catalog name, or a file name
// ending .json) checked to be a plain name; an existing NAME.weft.json is that file.
func (s *WorkflowFiles) FileName(name string) (stem, file string, err error) {
	if s.Dir == "" {
		return "", "", ErrNoWorkflowsDir
	}
	stem = strings.TrimSuffix(strings.TrimSuffix(name, ".json"), ".weft")
	if err := safefile.CheckName(stem+".json", ".json"); err != nil {
		return "", "", &BadWorkflowNameError{Name: name, Err: err}
	}
	if err := dsl.CheckWorkflowName(stem); err != nil {
		return "", "", &BadWorkflowNameError{Name: name, Err: err}
	}
	if strings.HasSuffix(stem, ".test") {
		return "", "", &BadWorkflowNameError{Name: name, Err: errors.New("a .test.json file is a fixture, not a workflow: give the workflow's own name")}
	}
	file = stem + ".json"
	if !strings.HasSuffix(name, ".json") {
		if _, err := os.Lstat(filepath.Join(s.Dir, file)); errors.Is(err, fs.ErrNotExist) {
			if _, err := os.Lstat(filepath.Join(s.Dir, stem+".weft.json")); err == nil {
				file = stem + ".weft.json"
			}
		}
	}
	return stem, file, nil
}

func (s *WorkflowFiles) versionsDir(stem string) string {
	return filepath.Join(s.Dir, ".versions", stem)
}

func (s *WorkflowFiles) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ids are the numbers of a workflow's recorded versions, ascending.
func (s *WorkflowFiles) ids(stem string) ([]int, error) {
	entries, err := os.ReadDir(s.versionsDir(stem))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the versions of workflow %q: %w", stem, err)
	}
	var out []int
	for _, e := range entries {
		id, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".json"))
		if err != nil || !strings.HasSuffix(e.Name(), ".json") || id <= 0 {
			continue // the lock, a temporary file
		}
		out = append(out, id)
	}
	sort.Ints(out)
	return out, nil
}

// read reads version id's record.
func (s *WorkflowFiles) read(stem string, id int) (versionRecord, error) {
	data, err := safefile.Read(filepath.Join(s.versionsDir(stem), fmt.Sprintf("%06d.json", id)), 2*dsl.MaxFileSize+64<<10, "version record")
	if err != nil {
		return versionRecord{}, fmt.Errorf("reading version %d of workflow %q: %w", id, stem, err)
	}
	var r versionRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return versionRecord{}, fmt.Errorf("reading version %d of workflow %q: %w", id, stem, err)
	}
	r.ID = id
	return r, nil
}

// records reads a workflow's version records, oldest first: the last n of them (all when n is 0),
// so a save reads what it compares with, not the whole history.
func (s *WorkflowFiles) records(stem string, n int) ([]versionRecord, error) {
	ids, err := s.ids(stem)
	if err != nil {
		return nil, err
	}
	if n > 0 && len(ids) > n {
		ids = ids[len(ids)-n:]
	}
	out := make([]versionRecord, 0, len(ids))
	for _, id := range ids {
		r, err := s.read(stem, id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// lock holds the lock of a workflow's versions until unlock is called.
func (s *WorkflowFiles) lock(stem string) (unlock func(), err error) {
	dir := s.versionsDir(stem)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("keeping the versions of workflow %q in %s: %w", stem, dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking the versions of workflow %q: %w", stem, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("locking the versions of workflow %q: %w", stem, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// record writes version r (its id the next one) and returns it.
func (s *WorkflowFiles) record(stem string, r versionRecord) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("recording version %d of workflow %q: %w", r.ID, stem, err)
	}
	name := fmt.Sprintf("%06d.json", r.ID)
	if _, err := os.Lstat(filepath.Join(s.versionsDir(stem), name)); err == nil {
		return fmt.Errorf("recording version %d of workflow %q: %s exists already (versions are never rewritten)", r.ID, stem, name)
	}
	return safefile.WriteAtomic(s.versionsDir(stem), name, ".json", data, 0o644, "version record")
}

// current is the workflow's state under the lock: its records, oldest first, and found, the
// file's content when it was changed outside weft (a version to record before the next one; nil
// when the file holds the latest version or is absent). A save that was recorded but whose file
// was not written (a crash between the two) is completed here.
func (s *WorkflowFiles) current(stem, file string) (recs []versionRecord, found *versionRecord, err error) {
	if recs, err = s.records(stem, 2); err != nil { // the latest, and the one before it
		return nil, nil, err
	}
	latest := 0
	if len(recs) > 0 {
		latest = recs[len(recs)-1].ID
	}
	disk, err := dsl.ReadFile(filepath.Join(s.Dir, file))
	if errors.Is(err, fs.ErrNotExist) {
		return recs, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading workflow file %s: %w", file, err)
	}
	if len(recs) > 0 {
		head := recs[len(recs)-1]
		if sha(disk) == head.SHA256 {
			return recs, nil, nil
		}
		if len(recs) > 1 && head.Who != UnknownAuthor && sha(disk) == recs[len(recs)-2].SHA256 && head.Previous == recs[len(recs)-2].ID {
			// the last save was recorded and its file not written (a crash between): write it
			if err := safefile.WriteAtomic(s.Dir, file, ".json", []byte(head.Content), 0o644, "workflow file"); err != nil {
				return nil, nil, err
			}
			return recs, nil, nil
		}
	}
	return recs, &versionRecord{WorkflowVersionInfo: WorkflowVersionInfo{ID: latest + 1, Who: UnknownAuthor, When: s.now(), SHA256: sha(disk),
		Message: "the file as weft found it, changed outside weft", Size: len(disk), Previous: latest}, Content: string(disk)}, nil
}

// SaveWorkflow writes content as workflow name's file in the folder and records it as a new
// version by who (an auth.Identity's name; "" is recorded as "operator") with message. base is
// the version the content was made from (0: the file had no saved version; BaseCurrent: no
// check). It is refused when base is not the current version (*VersionConflictError), when
// content does not validate (*InvalidWorkflowError), when name is not a plain name
// (*BadWorkflowNameError) and when content is over dsl.MaxFileSize (*ContentTooLargeError). The
// same save again answers the version the first made, Created false.
func (s *WorkflowFiles) SaveWorkflow(ctx context.Context, name string, content []byte, base int, who, message string) (SaveResult, error) {
	return s.save(ctx, name, content, base, who, message, 0)
}

func (s *WorkflowFiles) save(ctx context.Context, name string, content []byte, base int, who, message string, restored int) (SaveResult, error) {
	stem, file, err := s.FileName(name)
	if err != nil {
		return SaveResult{}, err
	}
	if len(content) > dsl.MaxFileSize {
		return SaveResult{}, &ContentTooLargeError{Name: stem, Size: len(content)}
	}
	if len(message) > MaxVersionMessage {
		return SaveResult{}, &InvalidError{Err: fmt.Errorf("workflow %q: the message is %d bytes, over %d: say it shorter", stem, len(message), MaxVersionMessage)}
	}
	if base < BaseCurrent {
		return SaveResult{}, &InvalidError{Err: fmt.Errorf("workflow %q: base %d is no version: send the version the content was made from (0 for a file with no saved version)", stem, base)}
	}
	if who == "" {
		who = "operator"
	}
	if err := ctx.Err(); err != nil {
		return SaveResult{}, err
	}
	// validated before the lock: it reads the workflows the file calls
	resolve := s.Resolve
	if resolve == nil {
		resolve = FileResolver(s.Dir)
	}
	if check := Validate(file, content, resolve); !check.Valid {
		return SaveResult{}, &InvalidWorkflowError{Name: stem, Check: check}
	}
	unlock, err := s.lock(stem)
	if err != nil {
		return SaveResult{}, err
	}
	defer unlock()
	out := SaveResult{Name: stem, File: file}
	recs, found, err := s.current(stem, file)
	if err != nil {
		return SaveResult{}, err
	}
	digest := sha(content)
	var head versionRecord // the latest recorded version
	if len(recs) > 0 {
		head = recs[len(recs)-1]
	}
	if found == nil && head.ID > 0 && head.SHA256 == digest && (base == BaseCurrent || base == head.ID || base == head.Base || (head.Base == 0 && base == head.Previous)) {
		out.Version = head.WorkflowVersionInfo // a retry, or nothing changed
		return out, nil
	}
	if base != BaseCurrent && base != head.ID {
		return SaveResult{}, &VersionConflictError{Name: stem, Base: base, Current: head.WorkflowVersionInfo}
	}
	if found != nil { // the file as it was changed outside weft is a version of its own
		if err := s.record(stem, *found); err != nil {
			return SaveResult{}, err
		}
		head = *found
	}
	r := versionRecord{WorkflowVersionInfo: WorkflowVersionInfo{ID: head.ID + 1, Who: who, When: s.now(), SHA256: digest,
		Message: message, Size: len(content), Previous: head.ID, Restored: restored}, Content: string(content)}
	if base != BaseCurrent && base != head.ID {
		r.Base = base
	}
	if err := s.record(stem, r); err != nil {
		return SaveResult{}, err
	}
	if err := safefile.WriteAtomic(s.Dir, file, ".json", content, 0o644, "workflow file"); err != nil {
		return SaveResult{}, err
	}
	out.Version, out.Created = r.WorkflowVersionInfo, true
	return out, nil
}

// WorkflowVersions lists workflow name's saved versions, newest first (none: an empty list).
func (s *WorkflowFiles) WorkflowVersions(name string) ([]WorkflowVersionInfo, error) {
	stem, _, err := s.FileName(name)
	if err != nil {
		return nil, err
	}
	recs, err := s.records(stem, 0)
	if err != nil {
		return nil, err
	}
	out := make([]WorkflowVersionInfo, 0, len(recs))
	for i := len(recs) - 1; i >= 0; i-- {
		out = append(out, recs[i].WorkflowVersionInfo)
	}
	return out, nil
}

// WorkflowVersion is version id of workflow name and its content.
func (s *WorkflowFiles) WorkflowVersion(name string, id int) (WorkflowVersionInfo, []byte, error) {
	stem, _, err := s.FileName(name)
	if err != nil {
		return WorkflowVersionInfo{}, nil, err
	}
	ids, err := s.ids(stem)
	if err != nil {
		return WorkflowVersionInfo{}, nil, err
	}
	latest := 0
	for _, have := range ids {
		if have == id {
			r, err := s.read(stem, id)
			if err != nil {
				return WorkflowVersionInfo{}, nil, err
			}
			return r.WorkflowVersionInfo, []byte(r.Content), nil
		}
		latest = have
	}
	return WorkflowVersionInfo{}, nil, &VersionNotFoundError{Name: stem, ID: id, Latest: latest}
}

// DiffWorkflowVersions is the unified diff (3 lines of context) from version a of workflow name
// to version b; "" when their contents are the same.
func (s *WorkflowFiles) DiffWorkflowVersions(name string, a, b int) (string, error) {
	_, from, err := s.WorkflowVersion(name, a)
	if err != nil {
		return "", err
	}
	_, to, err := s.WorkflowVersion(name, b)
	if err != nil {
		return "", err
	}
	stem, _, _ := s.FileName(name)
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: diffLines(from), B: diffLines(to),
		FromFile: fmt.Sprintf("%s.json@%d", stem, a), ToFile: fmt.Sprintf("%s.json@%d", stem, b), Context: 3,
	})
}

// diffLines splits data into lines that each end "\n" (difflib.SplitLines adds an empty last
// line to a file that ends with one).
func diffLines(data []byte) []string {
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n"
	}
	return lines
}

// RestoreWorkflow saves version id's content of workflow name as a new version by who (its
// Restored says which): history is never rewritten. It is validated as a save is; restoring the
// content the file holds already answers the current version, Created false.
func (s *WorkflowFiles) RestoreWorkflow(ctx context.Context, name string, id int, who string) (SaveResult, error) {
	_, content, err := s.WorkflowVersion(name, id)
	if err != nil {
		return SaveResult{}, err
	}
	return s.save(ctx, name, content, BaseCurrent, who, fmt.Sprintf("restored version %d", id), id)
}

// CurrentVersion is workflow name's latest saved version (ID 0 when it has none): the base a save
// from the file as it is now sends (GET /v1/workflows/{name} gives it as version). It reads that
// record only. A file changed outside weft since still names it; the save over it records the
// change first.
func (s *WorkflowFiles) CurrentVersion(name string) (WorkflowVersionInfo, error) {
	stem, _, err := s.FileName(name)
	if err != nil {
		return WorkflowVersionInfo{}, err
	}
	recs, err := s.records(stem, 1)
	if err != nil || len(recs) == 0 {
		return WorkflowVersionInfo{}, err
	}
	return recs[0].WorkflowVersionInfo, nil
}
