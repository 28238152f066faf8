package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/fuzzy"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// Case is one line of an eval dataset.
type Case struct {
	Name   string         `json:"name"`
	Inputs map[string]any `json:"inputs"`
	// Replay names a recorded run the case re-runs (replay.go): its inputs, its model steps
	// live, everything else from the record. A replay case has no inputs of its own.
	Replay string `json:"replay,omitempty"`
	// Reviews decide the run's reviews: keyed by a review's id ("approval", "each[1]",
	// "agent/call_1"), by its step, or "*" for every review the other keys do not name. A run
	// that waits for a review the case does not decide fails the case (and is cancelled).
	Reviews map[string]Decision `json:"reviews,omitempty"`
	Expect  Expect              `json:"expect"`
	// line is the case's line in the dataset (0: not read from one).
	line int
}

// Decision is what the eval decides for a review: approve, edit (with data) or reject
// (a comment says why). The decision is sent through the client's Review as reviewer "eval".
type Decision struct {
	Decision string `json:"decision"`
	Data     any    `json:"data,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

// Reviewer is the reviewer weft eval's decisions carry.
const Reviewer = "eval"

// decisionFor picks the case's decision for review r: its id first, then its step, then "*".
func (c Case) decisionFor(r *weftv1.ReviewRequest) (Decision, string, bool) {
	for _, k := range []string{r.GetId(), r.GetStep(), "*"} {
		if d, ok := c.Reviews[k]; ok && k != "" {
			return d, k, true
		}
	}
	return Decision{}, "", false
}

// noDecision is the message for a review the case leaves undecided.
func noDecision(r *weftv1.ReviewRequest) string {
	key := r.GetId()
	if key == "" {
		key = r.GetStep()
	}
	return fmt.Sprintf("the run waits for review %q (step %q) and the case has no decision for it: add "+
		`"reviews": {%q: {"decision": "approve"}} to the case (or "edit" with "data", "reject" with "comment"; the key "*" decides every review)`,
		key, r.GetStep(), key)
}

// Expect holds a case's graders; every grader given must pass.
type Expect struct {
	// Path selects the part of the output the graders read ("answer", "results.0.score"); max
	// and min may name their own.
	Path   string          `json:"path,omitempty"`
	Equals json.RawMessage `json:"equals,omitempty"`
	// Contains: a string, or a list of strings that must all appear.
	Contains json.RawMessage `json:"contains,omitempty"`
	Matches  string          `json:"matches,omitempty"`
	Schema   json.RawMessage `json:"schema,omitempty"`
	// Max and Min: a number, or {"path": ..., "value": N}.
	Max   json.RawMessage `json:"max,omitempty"`
	Min   json.RawMessage `json:"min,omitempty"`
	Judge json.RawMessage `json:"judge,omitempty"`
	// Error expects the run to fail with a message that contains it (a rejected review:
	// "rejected"); the output graders read the output of a run that completes, so it stands
	// alone (the trajectory graders may go with it).
	Error string `json:"error,omitempty"`
	// The trajectory graders (trajectory.go) read the run's tool calls. Tools: the set of tools
	// called is this one ([]: none was called).
	Tools []string `json:"tools,omitzero"`
	// ToolOrder: these tools were called in this order (others between them allowed), or
	// {"order": [...], "exact": true}: the calls are these, in this order.
	ToolOrder json.RawMessage `json:"toolOrder,omitempty"`
	// MaxToolCalls: at most this many tool calls.
	MaxToolCalls *int `json:"maxToolCalls,omitempty"`
	// Step: the trajectory graders read this step's tool calls (default: every step's, in the
	// steps' order).
	Step string `json:"step,omitempty"`
}

// outputGraders says whether x grades an output.
func (x Expect) outputGraders() bool {
	return len(x.Equals)+len(x.Contains)+len(x.Schema)+len(x.Max)+len(x.Min)+len(x.Judge) > 0 || x.Matches != "" || x.Path != ""
}

// ReadDataset reads a JSONL dataset: every line a case with a unique name.
func ReadDataset(r io.Reader, file string) ([]Case, error) {
	var cases []Case
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var c Case
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w (a line is {\"name\", \"inputs\" or \"replay\": RUN, \"reviews\": {STEP|ID|\"*\": {decision, data, comment}}, \"expect\": {equals|contains|matches|schema|max|min|judge|error, path, tools|toolOrder|maxToolCalls, step}})", file, n, err)
		}
		if c.Replay != "" && c.Inputs != nil {
			return nil, fmt.Errorf("%s:%d: case %q: a replay case runs with the inputs of run %s: remove \"inputs\" (or \"replay\", to run these inputs afresh)", file, n, c.Name, c.Replay)
		}
		if c.Name == "" {
			c.Name = fmt.Sprintf("line-%d", n)
			if c.Replay != "" {
				c.Name = c.Replay
			}
		}
		if prev, dup := seen[c.Name]; dup {
			return nil, fmt.Errorf("%s:%d: case %q is named on line %d too: names must be unique (reports compare cases by name)", file, n, c.Name, prev)
		}
		seen[c.Name] = n
		c.line = n
		if err := c.Expect.check(); err != nil {
			return nil, fmt.Errorf("%s:%d: case %q: %w", file, n, c.Name, err)
		}
		for _, k := range slices.Sorted(maps.Keys(c.Reviews)) {
			d := c.Reviews[k]
			if k == "" {
				return nil, fmt.Errorf("%s:%d: case %q: reviews: a key names a review's id, its step, or \"*\" for all", file, n, c.Name)
			}
			if err := runwire.CheckDecisionKind(d.Decision, d.Data != nil); err != nil {
				return nil, fmt.Errorf("%s:%d: case %q: reviews.%s: %w", file, n, c.Name, k, err)
			}
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("%s holds no case: write one JSON object per line", file)
	}
	return cases, nil
}

// ReviewSteps lists the steps of w whose runs may wait for a review (review steps; agents,
// whose tool calls may wait for approval; loops over either) and those of the workflows w calls,
// resolved as a run's start resolves them: a called workflow's reviews are decided with the
// caller's, by their own ids and steps. known is false when w may call a workflow this cannot
// read (a name computed at run time, a loop over workflow steps, a name that does not resolve):
// the keys of its reviews are then not known before the run.
func ReviewSteps(w *dsl.Workflow, resolve weftclient.Resolver) (steps []string, known bool) {
	called, err := weftclient.CalledDefinitions(w.Def, resolve)
	known = err == nil // else the run's start names what is wrong
	set := map[string]bool{}
	for _, x := range append([]*dsl.Workflow{w}, slices.Collect(maps.Values(called))...) {
		for _, cs := range x.Steps {
			specs := []*toolspec.Spec{cs.Spec}
			nested := cs.Nested() != nil && cs.Nested().Spec != nil
			if nested {
				specs = append(specs, cs.Nested().Spec)
			}
			for _, spec := range specs {
				if dsl.MayWait(spec) {
					set[cs.ID] = true
				}
				if spec != nil && spec.Kind == toolspec.KindChild {
					name, literal := cs.Inputs["workflow"].(string)
					if nested || !literal || strings.Contains(name, "{{") {
						known = false
					}
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(set)), known
}

// keyStep is the step a review key names: "each[1]" and "agent/call_1" name steps each and
// agent.
func keyStep(key string) string {
	if i := strings.IndexAny(key, "[/"); i > 0 {
		return key[:i]
	}
	return key
}

// CheckReviews checks, before anything runs, that every key of the cases' reviews names a
// review a run of workflow may wait for: a review step, an item of one ("each[1]"), an agent's
// tool call ("agent/call_1") or "*" (steps: ReviewSteps). A key that names none would never
// decide anything and leave its review waiting. file names the dataset in the error.
func CheckReviews(file, workflow string, cases []Case, steps []string) error {
	for _, c := range cases {
		for _, k := range slices.Sorted(maps.Keys(c.Reviews)) {
			if k == "*" || slices.Contains(steps, keyStep(k)) {
				continue
			}
			at := fmt.Sprintf("%s:%d: case %q: reviews.%s", file, c.line, c.Name, k)
			if len(steps) == 0 {
				return fmt.Errorf(`%s: workflow %q has no step that waits for a review (a review step, an agent's tool call): remove "reviews" from the case`, at, workflow)
			}
			hint := ""
			if m := fuzzy.Nearest(keyStep(k), steps); m != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", m+strings.TrimPrefix(k, keyStep(k)))
			}
			return fmt.Errorf(`%s: workflow %q has no review %q%s: a key is a step that waits for a review (%s), an item of one ("%s[0]"), an agent's tool call (AGENT/CALL_ID), or "*" for every review`,
				at, workflow, k, hint, strings.Join(steps, ", "), steps[0])
		}
	}
	return nil
}

// check says what is wrong with the graders before anything runs.
func (x Expect) check() error {
	if x.Error != "" && x.outputGraders() {
		return errors.New(`error: a run that fails has no output to grade: give "error" alone, or the other graders for a run that completes`)
	}
	if x.Step != "" && !x.trajectoryGraders() {
		return errors.New(`step: names the step whose tool calls tools, toolOrder and maxToolCalls read: give one of them, or remove "step"`)
	}
	if len(x.ToolOrder) > 0 {
		if _, err := x.toolOrder(); err != nil {
			return err
		}
	}
	if x.MaxToolCalls != nil && *x.MaxToolCalls < 0 {
		return fmt.Errorf("maxToolCalls %d: give 0 or more", *x.MaxToolCalls)
	}
	if x.Matches != "" {
		if _, err := regexp.Compile(x.Matches); err != nil {
			return fmt.Errorf("matches: %w", err)
		}
	}
	if len(x.Schema) > 0 {
		if _, err := compileSchema(x.Schema); err != nil {
			return err
		}
	}
	if len(x.Contains) > 0 {
		if _, err := x.contains(); err != nil {
			return err
		}
	}
	for name, b := range map[string]json.RawMessage{"max": x.Max, "min": x.Min} {
		if len(b) > 0 {
			if _, _, err := bound(b); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	if len(x.Judge) > 0 {
		if _, _, err := x.judge(); err != nil {
			return err
		}
	}
	return nil
}

func (x Expect) contains() ([]string, error) {
	var one string
	if json.Unmarshal(x.Contains, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(x.Contains, &many); err != nil {
		return nil, errors.New(`contains: give a string or a list of strings`)
	}
	return many, nil
}

func (x Expect) judge() (rubric string, pass float64, err error) {
	if json.Unmarshal(x.Judge, &rubric) == nil && rubric != "" {
		return rubric, 0.5, nil
	}
	var j struct {
		Rubric string   `json:"rubric"`
		Pass   *float64 `json:"pass"`
	}
	if err := json.Unmarshal(x.Judge, &j); err != nil || j.Rubric == "" {
		return "", 0, errors.New(`judge: give a rubric, or {"rubric": "...", "pass": 0.7}`)
	}
	pass = 0.5
	if j.Pass != nil {
		pass = *j.Pass
	}
	return j.Rubric, pass, nil
}

// bound reads a max/min grader: a number, or {"path", "value"}.
func bound(b json.RawMessage) (path string, v float64, err error) {
	if json.Unmarshal(b, &v) == nil {
		return "", v, nil
	}
	var o struct {
		Path  string   `json:"path"`
		Value *float64 `json:"value"`
	}
	if err := json.Unmarshal(b, &o); err != nil || o.Value == nil {
		return "", 0, errors.New(`give a number, or {"path": "score", "value": 5}`)
	}
	return o.Path, *o.Value, nil
}

func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("expect.json", doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile("expect.json")
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return s, nil
}
