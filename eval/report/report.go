package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/weftworks/weft/internal/safefile"
	"github.com/weftworks/weft/workflows/dsl"
)

// DefaultDir is where weft eval keeps its reports and the console reads them, relative to the
// project (beside weft dev's .weft/dev).
const DefaultDir = ".weft/evals"

// MaxSize is the largest report Read and List accept (the outputs of every case are in it).
const MaxSize = 64 << 20

// Grade is one grader's verdict.
type Grade struct {
	Grader string  `json:"grader"`
	Pass   bool    `json:"pass"`
	Score  float64 `json:"score"`
	Detail string  `json:"detail,omitempty"`
}

// Review is a review decision weft eval took for a case, as the case asked.
type Review struct {
	// ID is the review gate ("approval", "each[1]", "agent/call_1"); Step its step; Key the key
	// of the case's reviews that chose the decision (the id, the step, or "*").
	ID       string `json:"id"`
	Step     string `json:"step,omitempty"`
	Key      string `json:"key,omitempty"`
	Decision string `json:"decision"`
	Data     any    `json:"data,omitempty"`
	Comment  string `json:"comment,omitempty"`
	Reviewer string `json:"reviewer,omitempty"`
}

// Case is one case's outcome.
type Case struct {
	Name string `json:"name"`
	// Inputs and Expect are the case as the dataset wrote it.
	Inputs    map[string]any  `json:"inputs,omitempty"`
	Expect    json.RawMessage `json:"expect,omitempty"`
	Pass      bool            `json:"pass"`
	Score     float64         `json:"score"`
	LatencyMs int64           `json:"latencyMs"`
	Tokens    int64           `json:"tokens"`
	CostUSD   float64         `json:"costUsd"`
	RunID     string          `json:"runId,omitempty"`
	Output    any             `json:"output,omitempty"`
	Error     string          `json:"error,omitempty"`
	// Cancelled says why weft eval cancelled the case's run ("" when the run ended by itself or
	// never started): the case ran past --case-timeout, the run waited for a review the case does
	// not decide, or the eval was interrupted. A case ends its run: none is left waiting.
	Cancelled string `json:"cancelled,omitempty"`
	// Reviews are the decisions sent to the run's reviews, in order.
	Reviews []Review `json:"reviews,omitempty"`
	Grades  []Grade  `json:"grades"`
	// Replay is what a replay case (one that re-runs a recorded run) changed; nil for others.
	Replay *Replay `json:"replay,omitempty"`
}

// Summary adds the cases up.
type Summary struct {
	Cases        int     `json:"cases"`
	Passed       int     `json:"passed"`
	Failed       int     `json:"failed"`
	PassRate     float64 `json:"passRate"`
	MeanScore    float64 `json:"meanScore"`
	LatencyP50Ms int64   `json:"latencyP50Ms"`
	LatencyP95Ms int64   `json:"latencyP95Ms"`
	Tokens       int64   `json:"tokens"`
	CostUSD      float64 `json:"costUsd"`
	// JudgeTokens and JudgeCostUSD are the judge's model calls.
	JudgeTokens  int64   `json:"judgeTokens,omitempty"`
	JudgeCostUSD float64 `json:"judgeCostUsd,omitempty"`
	DurationMs   int64   `json:"durationMs"`
	// Replayed counts the replay cases; ModelChanged those in which a model step answered
	// differently from the record; Drifted those in which a tool call went off the record.
	Replayed     int `json:"replayed,omitempty"`
	ModelChanged int `json:"modelChanged,omitempty"`
	Drifted      int `json:"drifted,omitempty"`
}

// Replay is what a replay case did: the recorded run it re-ran with its model steps live (with
// Model, when one was given) and everything else from the record.
type Replay struct {
	// From is the recorded run.
	From  string `json:"from"`
	Model string `json:"model,omitempty"`
	// Reused are the steps whose recorded output was taken; Live those that ran, and why.
	Reused []string     `json:"reused"`
	Live   []ReplayStep `json:"live"`
	// RecordedCalls is how many agent tool calls the record held; FromRecord how many of the
	// replay's calls it answered.
	RecordedCalls int `json:"recordedCalls"`
	FromRecord    int `json:"fromRecord"`
	// Changed are the model steps that answered differently from the record.
	Changed []ModelChange `json:"changed"`
	// Drift is what went off the record: a tool call the record does not hold (not run: the
	// model was told so), or a step the record has no output for that ran live.
	Drift []Drift `json:"drift"`
	// Stale are steps taken from the record although a model step they depend on answered
	// differently: their recorded output answers the recorded answer.
	Stale []Stale `json:"stale,omitempty"`
}

// Stale is a step taken from the record below model steps whose answers changed (Changed).
type Stale struct {
	Step    string   `json:"step"`
	Changed []string `json:"changed"`
}

// ReplayStep is a step a replay ran, and why (a model step, computed from its inputs, its
// definition changed, the record has no output for it).
type ReplayStep struct {
	ID  string `json:"id"`
	Why string `json:"why"`
}

// ModelChange is a model step's answer in the record (Was) and in the replay (Now): its text or
// JSON, and for an agent the tools it called, in order.
type ModelChange struct {
	Step     string   `json:"step"`
	Was      string   `json:"was"`
	Now      string   `json:"now"`
	WasTools []string `json:"wasTools,omitempty"`
	NowTools []string `json:"nowTools,omitempty"`
}

// Drift is one thing a replay could not take from the record.
type Drift struct {
	Step      string `json:"step"`
	Tool      string `json:"tool,omitempty"`
	Arguments any    `json:"arguments,omitempty"`
	Why       string `json:"why"`
}

// Comparison is a report against a baseline report.
type Comparison struct {
	File string `json:"file"`
	// Regressions passed in the baseline and fail now; Fixed the other way round.
	Regressions    []string `json:"regressions"`
	Fixed          []string `json:"fixed"`
	New            []string `json:"new,omitempty"`
	Missing        []string `json:"missing,omitempty"`
	PassRateDelta  float64  `json:"passRateDelta"`
	MeanScoreDelta float64  `json:"meanScoreDelta"`
	CostDelta      float64  `json:"costUsdDelta"`
	LatencyP50Diff int64    `json:"latencyP50MsDelta"`
}

// Report is what `weft eval --json` prints, --baseline reads and Save keeps.
type Report struct {
	Workflow string `json:"workflow"`
	Dataset  string `json:"dataset"`
	// StartedAt is when the eval started (zero in reports written before it was recorded).
	StartedAt   time.Time   `json:"startedAt,omitzero"`
	Concurrency int         `json:"concurrency"`
	Summary     Summary     `json:"summary"`
	Cases       []Case      `json:"cases"`
	Baseline    *Comparison `json:"baseline,omitempty"`
}

// Entry is a kept report as a listing shows it: its id (the file's name without .json) and the
// report without its cases.
type Entry struct {
	ID string
	Report
}

// validID is a report's id: what Save names files, and nothing that leaves the folder.
var validID = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z._-]{0,199}$`)

// ErrNotFound is wrapped by Read's error for an id the folder does not hold.
var ErrNotFound = errors.New("no such eval report")

// Save writes r into dir (created when missing) as a new file named after when it started and
// its workflow ("20261125T042551.123Z-qa.json"), and returns the report's id. An existing report
// is never overwritten. The file appears whole or not at all (written aside, then hard-linked into
// place); on a filesystem without hard links (FAT, some network and FUSE mounts) it is created
// under its name with O_EXCL instead, and removed again when writing it fails.
func Save(dir string, r *Report) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("eval reports folder %s: %w", dir, err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("eval report: %w", err)
	}
	data = append(data, '\n')
	tmp, err := os.CreateTemp(dir, ".saving-*")
	if err != nil {
		return "", fmt.Errorf("eval reports folder %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("writing an eval report in %s: %w", dir, err)
	}
	at := r.StartedAt
	if at.IsZero() {
		at = time.Now()
	}
	base := at.UTC().Format("20060102T150405.000Z") + "-" + dsl.Slug(r.Workflow, "workflow")
	noLinks := false
	for n := 1; n < 100; n++ {
		id := base
		if n > 1 {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		path := filepath.Join(dir, id+".json")
		if !noLinks {
			err := link(tmp.Name(), path)
			if err == nil {
				return id, nil
			}
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			// No hard links here: create the file under its name, never over another.
			noLinks = true
		}
		err := createNew(path, data)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("saving eval report %s in %s: %w", id, dir, err)
		}
	}
	return "", fmt.Errorf("saving an eval report in %s: %s.json and 98 more names are taken", dir, base)
}

// link publishes a report written aside (os.Link; tests replace it with a filesystem without
// hard links).
var link = os.Link

// createNew writes data to path, which must not exist (O_EXCL); a file it could not write whole
// is removed.
func createNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// List reads the newest limit reports of dir (all when limit <= 0), newest first, without their
// cases. A folder that does not exist holds none; a file that is not a report is left out and
// named in the error returned beside the rest.
func List(dir string, limit int) ([]Entry, error) {
	ids, err := IDs(dir)
	if err != nil {
		return nil, err
	}
	if limit > 0 && len(ids) > limit {
		ids = ids[:limit]
	}
	return Entries(dir, ids)
}

// IDs lists the ids of dir's reports, newest first, without reading them: a listing that shows a
// part of them reads that part (Entries). A folder that does not exist holds none.
func IDs(dir string) ([]string, error) {
	files, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("eval reports folder %s: %w", dir, err)
	}
	var ids []string
	for _, f := range files {
		id, ok := strings.CutSuffix(f.Name(), ".json")
		if ok && f.Type().IsRegular() && validID.MatchString(id) {
			ids = append(ids, id)
		}
	}
	// Names start with the time in UTC: newest first is the names backwards.
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	return ids, nil
}

// Entries reads reports ids of dir (ids IDs returned), in their order, without their cases. A
// file that is not a report, or is gone, is left out and named in the error returned beside the
// rest.
func Entries(dir string, ids []string) ([]Entry, error) {
	var (
		out  []Entry
		errs []error
	)
	for _, id := range ids {
		r, err := Read(dir, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if r.StartedAt.IsZero() {
			if fi, err := os.Stat(filepath.Join(dir, id+".json")); err == nil {
				r.StartedAt = fi.ModTime()
			}
		}
		r.Cases = nil
		out = append(out, Entry{ID: id, Report: *r})
	}
	return out, errors.Join(errs...)
}

// ValidID reports whether id could name a report: a name Save gives its files, without .json,
// and nothing that leaves the folder.
func ValidID(id string) bool { return validID.MatchString(id) }

// Read reads report id of dir (an id List returned).
func Read(dir, id string) (*Report, error) {
	if !validID.MatchString(id) {
		return nil, fmt.Errorf("eval report %q: %w (an id is a file name of %s without .json)", id, ErrNotFound, dir)
	}
	return read(dir, id)
}

func read(dir, id string) (*Report, error) {
	path := filepath.Join(dir, id+".json")
	data, err := safefile.Read(path, MaxSize, "eval report")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("eval report %q: %w in %s", id, ErrNotFound, dir)
	}
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil || r.Cases == nil {
		return nil, fmt.Errorf("%s is not a weft eval report (weft eval writes them): %v", path, err)
	}
	return &r, nil
}
