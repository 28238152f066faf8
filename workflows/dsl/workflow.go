package dsl

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/safefile"
	"github.com/weftworks/weft/workflows/expr"
)

// Workflow is a validated definition with every template and expression compiled and the
// dependency graph built: what validate, plan and the interpreter work from.
type Workflow struct {
	Def *Definition
	// Text is what Load was given: the user's file (a Flow file before its conversion). A run
	// request carries it, so the worker compiles the same text and points at the same lines.
	Text     []byte
	Source   *Source
	Steps    []*CompiledStep // in file order
	Output   *expr.Value
	Order    []string // a topological order; file order among steps that are ready together
	Warnings Diagnostics
	// Dialect is the format the file is written in (dialect.go), DialectReason why.
	Dialect       Dialect
	DialectReason string
	byID          map[string]*CompiledStep
}

// CompiledStep is one step, compiled.
type CompiledStep struct {
	*Step
	Index      int
	Pointer    string // JSON pointer of the step in the file, e.g. /steps/2
	Spec       *toolspec.Spec
	InputValue *expr.Value    // Step.Inputs compiled: what the interpreter resolves before the call
	Lazy       map[string]any // inputs the tool evaluates itself (Spec.Lazy), as written
	Condition  *expr.Program  // nil when the step has no condition
	ForEach    *expr.Program  // nil unless forEach is set
	// Compiled is what the step's kind compiled beyond its inputs, one value declared in the
	// kind's own file and read through its accessor: FilterCompiled (kind_filter.go, Filter),
	// ConditionalCompiled (kind_conditional.go, Conditional), TransformCompiled
	// (kind_transform.go, Transform), *NestedStep (kind_loop.go, Nested), *AgentCompiled
	// (kind_agent.go, Agent); nil for a plain tool call and for a kind with nothing more to compile.
	Compiled kindCompiled
	// Input is the step's typed input as its kind decoded it from the inputs the file writes
	// (kind_*.go: *toolspec.FilterIn, *toolspec.LoopIn, an agent's *toolspec.AgentIn, ...), with
	// its declaration's defaults; nil for a plain tool call, or when a setting is templated
	// (TypedInput decodes it then).
	Input any
	Deps  []string // ids of the steps this one waits for, sorted
	// Policy is the step's timeout and retry, parsed.
	Policy Policy
}

// Step returns the compiled step with the given id.
func (w *Workflow) Step(id string) (*CompiledStep, bool) {
	s, ok := w.byID[id]
	return s, ok
}

// ReadFile reads a workflow file, refusing one over MaxFileSize (as Diagnostics) and anything
// but a regular file (a directory, /dev/zero, a named pipe) before reading it.
func ReadFile(path string) ([]byte, error) {
	data, err := safefile.Read(path, MaxFileSize, "workflow file")
	var fe *safefile.Error
	if errors.As(err, &fe) && errors.Is(err, safefile.ErrTooLarge) {
		d := sizeDiag(path, fe.Size)
		if fe.Grew {
			d.Message = fmt.Sprintf("file grew past the %d byte limit while being read", MaxFileSize)
		}
		return nil, Diagnostics{d}
	}
	return data, err
}

// LoadFile reads and compiles a workflow file (step or Flow format).
func LoadFile(path string) (*Workflow, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(path, data)
}

// Load compiles a workflow from bytes. file names it in messages. The error, when not nil, is a
// Diagnostics list holding every problem found (warnings included); on success warnings are in
// Workflow.Warnings.
func Load(file string, data []byte) (*Workflow, error) {
	return load(file, data, loadOptions{})
}

// LoadVai compiles a file its loader knows to be vai's (a vai package's workflow: why says how it
// knows), as Load does but in vai's dialect unless the file's $schema names weft (DetectDialect).
func LoadVai(file string, data []byte, why string) (*Workflow, error) {
	if why == "" {
		why = "its loader says it is vai's"
	}
	return load(file, data, loadOptions{vai: why})
}

// LoadWeft compiles a definition built in Go (Builder, FromDefinition, a tool call): as Load
// does, except that an input field a tool does not take is an error even when nothing else marks
// the definition as weft's (DetectDialect).
func LoadWeft(file string, data []byte) (*Workflow, error) {
	return load(file, data, loadOptions{built: true})
}

// LoadAccepted compiles a definition that a run has already accepted: Load's verdict on it is
// recorded in the run's history. The tool input schemas (which a newer release may tighten) are
// not checked again, so a run replayed on a newer binary takes the path it took when it started;
// everything the run needs to execute is compiled as Load does.
func LoadAccepted(file string, data []byte) (*Workflow, error) {
	return load(file, data, loadOptions{accepted: true})
}

// loadOptions are how a definition is loaded. accepted: a run already accepted it (LoadAccepted);
// built: it was built in Go (LoadWeft); vai: the loader knows it is vai's, and why (LoadVai);
// flow: it is a Flow file's conversion (vai's builder's format, read as leniently as vai's).
type loadOptions struct {
	accepted, built, flow bool
	vai                   string
}

func load(file string, data []byte, o loadOptions) (*Workflow, error) {
	src, err := ParseSource(file, data)
	if err != nil {
		return nil, err
	}
	if IsFlow(src.Root) {
		def, diags := convertFlow(src)
		if diags.HasErrors() {
			return nil, diags.sorted()
		}
		out, err := json.MarshalIndent(def, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("%s: converting the Flow format: %w", file, err)
		}
		fo := o
		fo.flow = true
		w, err := load(file+" (converted to steps)", out, fo)
		if w != nil {
			w.Warnings = append(diags, w.Warnings...)
			w.Text = data
		}
		return w, err
	}
	c := &compiler{src: src, bad: map[string]bool{}, accepted: o.accepted, opts: o}
	w := c.compile()
	if !c.diags.HasErrors() {
		c.diags = append(c.diags, c.runtime...)
	}
	all := c.diags.sorted()
	if all.HasErrors() {
		return nil, all
	}
	w.Warnings = all
	w.Text = data
	return w, nil
}

// FromDefinition compiles an in-memory definition (builder, workflow input).
func FromDefinition(def *Definition) (*Workflow, error) {
	data, err := json.MarshalIndent(def, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding definition %q: %w", def.Name, err)
	}
	name := def.Name
	if name == "" {
		name = "workflow"
	}
	return LoadWeft(name, data)
}

type compiler struct {
	src   *Source
	diags Diagnostics
	bad   map[string]bool // pointers the schema already reported
	def   *Definition
	w     *Workflow
	// runtime are warnings about what fails at run time; shown only when the file has no errors,
	// so that what is wrong with the file comes first.
	runtime Diagnostics
	// accepted: a run already accepted the definition (LoadAccepted); tool input schemas are
	// not checked again.
	accepted bool
	// dialect of the file (dialect.go): vai's is read leniently.
	dialect Dialect
	// byFields: the file is vai's only because a tool is given vaiFields (DetectDialect): only
	// those are ignored.
	byFields bool
	// opts are how the definition was loaded.
	opts loadOptions
	// outputRefs are the references into a step's output, checked against the tool's declared
	// output once every step is compiled (checkOutputRefs).
	outputRefs []outputRef
}

func (c *compiler) errAt(ptr, msg, hint string) { c.diags = append(c.diags, c.src.At(ptr, msg, hint)) }

func (c *compiler) warnAt(ptr, msg, hint string) {
	d := c.src.At(ptr, msg, hint)
	d.Severity = SeverityWarning
	c.diags = append(c.diags, d)
}

func (c *compiler) errIn(ptr string, off int, msg, hint string) {
	c.diags = append(c.diags, c.src.diag(c.src.StringOffset(ptr, off), ptr, msg, hint))
}

func (c *compiler) compile() *Workflow {
	src := c.src
	if _, ok := src.Root.(map[string]any); !ok {
		c.errAt("", "a workflow file must be a JSON object", "start with {\"name\": ..., \"steps\": [...]}")
		return nil
	}
	for _, p := range src.dups {
		d := src.AtKey(p, "duplicate field; the last value wins", "remove one of them")
		d.Severity = SeverityWarning
		c.diags = append(c.diags, d)
	}
	v := detectDialect(src.File, src.Root, c.opts)
	dialect, why := v.dialect, v.reason
	c.dialect, c.byFields = dialect, v.byFields
	if dialect == DialectVai {
		// vai's numeric path segments (results.0.score) are indexes: results[0].score
		indexSegments(src.Root, true)
	}
	sch, err := workflowSchema()
	if err != nil {
		c.errAt("", "internal: workflow schema: "+err.Error(), "")
		return nil
	}
	if err := sch.Validate(src.Root); err != nil {
		for _, d := range schemaDiags(src, err, "", nil, c.unknownFileField(), fileFields) {
			c.diags = append(c.diags, d)
			if d.Severity == SeverityError {
				c.markBad(d)
			}
		}
	}
	def := definitionFrom(src.Root.(map[string]any))
	c.def = def
	w := &Workflow{Def: def, Source: src, byID: map[string]*CompiledStep{}, Dialect: dialect, DialectReason: why}
	c.w = w
	c.checkInputs()
	c.checkNotify()
	c.checkBudgets()
	c.compileSteps()
	c.checkOperatorTrust()
	c.checkGraph()
	c.compileOutput()
	c.checkOutputRefs()
	c.checkInputTypes()
	c.vaiChunkReads() // reads of vai's chunk fields, null in weft (vai_datatools.go)
	if ((dialect == DialectWeft && why == "") || c.byFields) && !c.accepted {
		c.hintVaiSchema()
	}
	return w
}

// unknownFileField is how a field the file format does not have (a step's "conditon", the
// file's "default") is reported: an error in weft's dialect, where the step would otherwise run
// without the condition, dependency or timeout meant; a warning in vai's, where vai ignores it
// (a file vai's only by vaiFields is weft's for everything but those fields); and a warning on an
// accepted run, which its history says was accepted with it.
func (c *compiler) unknownFileField() Severity {
	if c.accepted || (c.dialect == DialectVai && !c.byFields) {
		return SeverityWarning
	}
	return SeverityError
}

// markBad remembers where the schema failed so the semantic checks do not pile on.
func (c *compiler) markBad(d Diagnostic) {
	c.bad[d.Where] = true
}

func (c *compiler) isBad(ptr string) bool { return len(c.bad) > 0 && c.bad[Where(ptr)] }

func (c *compiler) checkInputs() {
	names := sortedKeys(c.def.Inputs)
	for _, name := range names {
		in := c.def.Inputs[name]
		ptr := "/inputs/" + escapePointer(name)
		if in.Default == nil || c.isBad(ptr+"/type") {
			continue
		}
		if _, err := CoerceValue(in.Type, in.Default); err != nil {
			c.errAt(ptr+"/default", fmt.Sprintf("default %s does not match the declared type %s", expr.Text(in.Default), in.Type),
				"change the default or the type")
		}
	}
}

var reservedIDs = map[string]bool{"inputs": true, "defaults": true, "item": true, "index": true, "output": true, "steps": true, "env": true}

func (c *compiler) compileSteps() {
	first := map[string]int{}
	for i := range c.def.Steps {
		st := &c.def.Steps[i]
		ptr := "/steps/" + strconv.Itoa(i)
		cs := &CompiledStep{Step: st, Index: i, Pointer: ptr}
		c.w.Steps = append(c.w.Steps, cs)
		if st.ID != "" && !c.isBad(ptr+"/id") {
			if j, dup := first[st.ID]; dup {
				c.errAt(ptr+"/id", fmt.Sprintf("duplicate step id %q (also steps[%d])", st.ID, j), "give every step its own id")
			} else if reservedIDs[st.ID] {
				c.errAt(ptr+"/id", fmt.Sprintf("step id %q is reserved", st.ID), "choose another id; "+reservedList()+" name template roots")
				first[st.ID] = i
			} else {
				first[st.ID] = i
				c.w.byID[st.ID] = cs
			}
		}
	}
	for _, cs := range c.w.Steps {
		c.compileStep(cs)
	}
}

func reservedList() string {
	keys := sortedKeys(reservedIDs)
	return strings.Join(keys, ", ")
}

func (c *compiler) compileStep(cs *CompiledStep) {
	ptr := cs.Pointer
	st := cs.Step
	if p, err := st.Policy(); err != nil {
		if !c.isBad(ptr+"/timeout") && !c.isBad(ptr+"/retry") {
			c.errAt(ptr, err.Error(), "")
		}
	} else {
		cs.Policy = p
	}
	if st.Tool != "" && !c.isBad(ptr+"/tool") {
		spec, ok := toolspec.Lookup(st.Tool)
		if !ok {
			hint := didYouMean(st.Tool, toolspec.Names())
			if hint == "" {
				hint = "known tools: " + strings.Join(toolspec.Names(), ", ")
			}
			c.errAt(ptr+"/tool", fmt.Sprintf("unknown tool %q", st.Tool), hint)
		}
		cs.Spec = spec
	}
	sc := scope{}
	if st.ForEach != "" {
		sc.names = []string{"item", "index"}
	}
	// condition and forEach
	if st.Condition != "" && !c.isBad(ptr+"/condition") {
		cs.Condition = c.compileExpr(ptr+"/condition", st.Condition, sc)
	}
	if st.ForEach != "" && !c.isBad(ptr+"/forEach") {
		cs.ForEach = c.compileExpr(ptr+"/forEach", st.ForEach, scope{})
		if cs.ForEach != nil {
			c.checkArray(ptr+"/forEach", cs.ForEach)
		}
	}
	if st.Concurrency > 0 && st.ForEach == "" {
		c.warnAt(ptr+"/concurrency", "concurrency has no effect without forEach", "remove it, or add forEach")
	}
	if st.Batch != nil && st.ForEach == "" && cs.Spec != toolspec.Loop.Spec {
		c.warnAt(ptr+"/batch", "batch has no effect without forEach", "remove it, or add forEach")
	} else if st.Batch != nil && cs.Spec != nil && cs.Spec.Batch == nil && cs.Spec != toolspec.Loop.Spec {
		c.warnAt(ptr+"/batch", fmt.Sprintf("%s does not batch: its forEach items run one call each", st.Tool), "remove batch")
	}
	for i, d := range st.DependsOn {
		p := ptr + "/dependsOn/" + strconv.Itoa(i)
		c.checkStepRef(p, d, st.ID, "dependsOn")
	}
	if cs.Spec == nil {
		return
	}
	if st.Inputs == nil {
		st.Inputs = map[string]any{}
	}
	st.Inputs = c.toolInputs(cs.Spec, st.Inputs, ptr+"/inputs", st.Tool)
	if cs.Spec.NeedsCollection && st.Inputs["collection"] == nil && c.def.Defaults["collection"] == nil && !c.isBad(ptr+"/inputs") {
		d := c.src.At(ptr+"/inputs", fmt.Sprintf("%s has no collection: the step fails when it runs unless the run sets one", st.Tool),
			`set inputs.collection, or "defaults": {"collection": ...} in the file (weft run --collection also sets it)`)
		d.Severity = SeverityWarning
		c.runtime = append(c.runtime, d)
	}
	inPtr := ptr + "/inputs"
	eager := map[string]any{}
	cs.Lazy = map[string]any{}
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range st.Inputs {
		if cs.Spec.IsLazy(k) {
			cs.Lazy[k] = v
		} else {
			eager[k] = v
		}
	}
	val, perrs := expr.CompileValue(eager)
	for _, pe := range perrs {
		c.errIn(inPtr+pe.Path, pe.Offset, pe.Msg, pe.Hint)
	}
	cs.InputValue = val
	c.checkValueRefs(inPtr, val, st.ID, sc)
	// Validate literal inputs; templated values are checked when resolved at run time.
	lit, holes := val.Literal()
	litMap := lit.(map[string]any)
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range cs.Lazy {
		litMap[k] = v
	}
	holeSet := map[string]bool{}
	for _, h := range holes {
		holeSet[inPtr+h] = true
	}
	if err := cs.Spec.ValidateInputs(litMap); err != nil && !c.accepted {
		fields := toolFields(cs.Spec)
		c.diags = append(c.diags, schemaDiags(c.src, err, inPtr, func(p string) bool {
			//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
			for h := range holeSet {
				if p == h || strings.HasPrefix(p, h+"/") {
					return true
				}
			}
			return false
		}, SeverityError, func(p string) []string {
			if p == inPtr {
				return fields
			}
			return nil
		})...)
	}
	c.compileLazy(cs, inPtr)
}

// compileLazy runs the compile step of the tool's kind, if it has one (kind_*.go): the inputs
// the tool evaluates per item, references to other steps, names checked beyond the schema.
func (c *compiler) compileLazy(cs *CompiledStep, inPtr string) {
	if k := kinds[cs.Spec]; k.compile != nil {
		k.compile(c, cs, inPtr)
	}
	c.vaiDataTool(cs, inPtr) // vai's merge and transform semantics in vai's dialect (vai_datatools.go)
}

// compileExpr compiles a condition/forEach: one expression, bare or wrapped in {{ }}.
func (c *compiler) compileExpr(ptr, s string, sc scope) *expr.Program {
	trimmed := strings.TrimSpace(s)
	lead := strings.Index(s, trimmed)
	var p *expr.Program
	if expr.HasTemplate(trimmed) {
		t, err := expr.ParseTemplate(trimmed)
		if err != nil {
			e := err.(*expr.Error)
			c.errIn(ptr, lead+e.Offset, e.Msg, e.Hint)
			return nil
		}
		if t.IsSingle() {
			p = t.Programs()[0]
		} else {
			// vai's dialect: templates inside an expression stand for their values.
			combined, _ := t.AsExpression()
			var err error
			if p, err = expr.Compile(combined); err != nil {
				c.errAt(ptr, "must be a single expression, not text with templates", "write it as {{ a && b }} or without braces: a && b")
				return nil
			}
		}
	} else {
		var err error
		p, err = expr.Compile(trimmed)
		if err != nil {
			e := err.(*expr.Error)
			c.errIn(ptr, lead+e.Offset, e.Msg, e.Hint)
			return nil
		}
	}
	c.checkRefs(ptr, p.Refs(), c.stepIDAt(ptr), sc)
	return p
}

func (c *compiler) stepIDAt(ptr string) string {
	parts := strings.Split(ptr, "/")
	if len(parts) >= 3 && parts[1] == "steps" {
		i, _ := strconv.Atoi(parts[2])
		if i < len(c.def.Steps) {
			return c.def.Steps[i].ID
		}
	}
	return ""
}

// scope names the per-item roots that are defined where an expression is evaluated.
type scope struct{ names []string }

func (s scope) has(n string) bool {
	for _, x := range s.names {
		if x == n {
			return true
		}
	}
	return false
}

var stepFields = []string{"output", "error", "status"}

// checkValueRefs checks the references of each template in a value, at the template's place.
func (c *compiler) checkValueRefs(ptr string, v *expr.Value, self string, sc scope) {
	v.Each(func(path string, t *expr.Template) { c.checkRefs(ptr+path, t.Refs(), self, sc) })
}

// checkRefs verifies every reference names something that exists where it is used.
func (c *compiler) checkRefs(ptr string, refs []expr.Ref, self string, sc scope) {
	for _, r := range refs {
		switch {
		case sc.has(r.Root):
		case r.Root == "inputs":
			if len(r.Path) == 0 {
				continue
			}
			if _, ok := c.def.Inputs[r.Path[0]]; !ok {
				hint := didYouMean(r.Path[0], sortedKeys(c.def.Inputs))
				if hint == "" {
					hint = fmt.Sprintf("declare it under \"inputs\": {\"%s\": {\"type\": \"string\"}}", r.Path[0])
				}
				c.errAt(ptr, fmt.Sprintf("reference to undeclared input %q", r.Path[0]), hint)
			}
		case r.Root == "defaults":
			if len(r.Path) == 0 {
				continue
			}
			if _, ok := c.def.Defaults[r.Path[0]]; !ok && !isSettingDefault(r.Path[0]) {
				c.warnAt(ptr, fmt.Sprintf("defaults.%s is not set in this file and resolves to null", r.Path[0]), "add it under \"defaults\"")
			}
		case r.Root == "item" || r.Root == "index":
			c.errAt(ptr, fmt.Sprintf("%q is only defined per item", r.Root), "use it in a step with forEach, in a filter condition or a transform template")
		default:
			if r.Root == self {
				c.errAt(ptr, fmt.Sprintf("step %q refers to its own output", self), "a step can only use the outputs of other steps")
				continue
			}
			if _, ok := c.w.byID[r.Root]; !ok {
				var cands []string
				for _, id := range sortedKeys(c.w.byID) {
					if id != self { // a step's own output is never what it meant
						cands = append(cands, id)
					}
				}
				hint := didYouMean(r.Root, append(cands, "inputs", "defaults"))
				if hint == "" {
					hint = "references start with inputs., defaults. or a step id"
				}
				c.errAt(ptr, fmt.Sprintf("reference to unknown step %q in {{ %s }}", r.Root, r.String()), hint)
				continue
			}
			if len(r.Path) == 0 || !contains(stepFields, r.Path[0]) {
				c.errAt(ptr, fmt.Sprintf("{{ %s }} does not name a step field", r.String()), fmt.Sprintf("use %s.output (or .error, .status)", r.Root))
			} else if r.Path[0] == "output" && len(r.Path) > 1 {
				c.outputRefs = append(c.outputRefs, outputRef{ptr, r})
			}
		}
	}
}

func isSettingDefault(k string) bool { return k == "db" || k == "collection" || k == "model" }

func (c *compiler) checkStepRef(ptr, id, self, what string) {
	if id == self {
		c.errAt(ptr, fmt.Sprintf("step %q lists itself in %s", self, what), "remove it")
		return
	}
	if _, ok := c.w.byID[id]; !ok {
		c.errAt(ptr, fmt.Sprintf("%s names unknown step %q", what, id), didYouMean(id, sortedKeys(c.w.byID)))
	}
}

// checkArray reports a forEach whose value is known not to be an array.
func (c *compiler) checkArray(ptr string, p *expr.Program) {
	refs := p.Refs()
	if len(refs) != 1 || p.Source() != refs[0].String() {
		return // an expression: only run time knows
	}
	r := refs[0]
	switch r.Root {
	case "inputs":
		if len(r.Path) == 1 {
			if in, ok := c.def.Inputs[r.Path[0]]; ok && in.Type != "array" {
				c.errAt(ptr, fmt.Sprintf("forEach needs an array, but input %q is declared as %s", r.Path[0], in.Type), "declare it with \"type\": \"array\"")
			}
		}
	default:
		cs, ok := c.w.byID[r.Root]
		if !ok || cs.Spec == nil || len(r.Path) == 0 || r.Path[0] != "output" {
			return
		}
		t := outputType(cs, r.Path[1:])
		if t != "" && t != "array" {
			hint := ""
			if t == "object" && len(r.Path) == 1 {
				hint = fmt.Sprintf("did you mean %s.output.results?", r.Root)
			}
			c.errAt(ptr, fmt.Sprintf("forEach needs an array, but %s is %s", r.String(), article([]string{t})), hint)
		}
	}
}

// outputType returns the JSON type at path inside a step's output, or "" when unknown.
func outputType(cs *CompiledStep, path []string) string {
	sch := stepOutputSchema(cs)
	for _, seg := range path {
		m, ok := sch.(map[string]any)
		if !ok {
			return ""
		}
		switch m["type"] {
		case "object":
			props, _ := m["properties"].(map[string]any)
			if props == nil {
				return ""
			}
			sch = props[seg]
		case "array":
			if seg == "length" {
				return "integer"
			}
			if _, err := strconv.Atoi(seg); err != nil {
				return ""
			}
			sch = m["items"]
		default:
			return ""
		}
	}
	m, ok := sch.(map[string]any)
	if !ok {
		return ""
	}
	t, _ := m["type"].(string)
	return t
}

func (c *compiler) compileOutput() {
	if c.def.Output == nil {
		return
	}
	val, perrs := expr.CompileValue(c.def.Output)
	for _, pe := range perrs {
		c.errIn("/output"+pe.Path, pe.Offset, pe.Msg, pe.Hint)
	}
	c.checkValueRefs("/output", val, "", scope{})
	c.w.Output = val
}

// checkGraph builds dependencies, reports cycles and computes the order.
func (c *compiler) checkGraph() {
	w := c.w
	for _, cs := range w.Steps {
		deps := map[string]bool{}
		add := func(refs []expr.Ref) {
			for _, r := range refs {
				if _, ok := w.byID[r.Root]; ok && r.Root != cs.ID {
					deps[r.Root] = true
				}
			}
		}
		if cs.InputValue != nil {
			add(cs.InputValue.Refs())
		}
		for _, p := range []*expr.Program{cs.Condition, cs.ForEach} {
			if p != nil {
				add(p.Refs())
			}
		}
		add(cs.CompiledRefs())
		for _, d := range cs.DependsOn {
			if _, ok := w.byID[d]; ok && d != cs.ID {
				deps[d] = true
			}
		}
		cs.Deps = sortedKeys(deps)
	}
	// conditional then/else: the branch steps wait for the conditional.
	for _, cs := range w.Steps {
		if cs.Spec == nil || !cs.Spec.Branches {
			continue
		}
		then, els := cs.Branches()
		for _, ids := range [][]string{then, els} {
			for _, id := range ids {
				if t, ok := w.byID[id]; ok && t != cs && !contains(t.Deps, cs.ID) {
					t.Deps = append(t.Deps, cs.ID)
					sort.Strings(t.Deps)
				}
			}
		}
	}
	if cyc := findCycle(w); cyc != nil {
		first := w.byID[cyc[0]]
		c.errAt(first.Pointer, "dependency cycle: "+strings.Join(cyc, " → "), "a step cannot wait, directly or through others, for itself; remove one of the references")
		return
	}
	w.Order = topoOrder(w)
	c.checkBranchReviews()
}

// checkBranchReviews warns about a step that depends on a review inside a conditional branch
// but is not in that branch itself: when the branch is not taken the review is skipped, and (as
// in vai, skips do not propagate) the step runs with nobody having approved anything.
func (c *compiler) checkBranchReviews() {
	w := c.w
	for _, cond := range w.Steps {
		if cond.Spec == nil || !cond.Spec.Branches {
			continue
		}
		then, els := cond.Branches()
		for _, b := range []struct {
			branch string
			ids    []string
		}{{"then", then}, {"else", els}} {
			branch, ids := b.branch, b.ids
			inBranch := map[string]bool{}
			for _, id := range ids {
				inBranch[id] = true
			}
			for _, id := range ids {
				r, ok := w.byID[id]
				if !ok || r.Spec == nil || r.Spec.Kind != toolspec.KindReview {
					continue
				}
				for _, s := range w.Steps {
					if inBranch[s.ID] || s.ID == r.ID || !contains(s.Deps, r.ID) || s.Condition != nil {
						continue
					}
					c.warnAt(s.Pointer, fmt.Sprintf("step %q depends on review %q, which runs only in the %s branch of %q: when that branch is not taken, %q runs without anyone approving",
						s.ID, r.ID, branch, cond.ID, s.ID),
						fmt.Sprintf("list %q in the same branch, or give it a condition such as \"{{ %s.output.decision == 'approve' }}\"", s.ID, r.ID))
				}
			}
		}
	}
}

func findCycle(w *Workflow) []string {
	const (
		white = 0
		grey  = 1
		black = 2
	)
	color := map[string]int{}
	var stack []string
	var found []string
	var visit func(id string) bool
	visit = func(id string) bool {
		color[id] = grey
		stack = append(stack, id)
		for _, d := range w.byID[id].Deps {
			switch color[d] {
			case grey:
				i := indexOf(stack, d)
				found = append(append([]string{}, stack[i:]...), d)
				return true
			case white:
				if visit(d) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
		return false
	}
	for _, cs := range w.Steps {
		if _, ok := w.byID[cs.ID]; ok && w.byID[cs.ID] == cs && color[cs.ID] == white && visit(cs.ID) {
			// report the cycle in the direction data flows: producer → consumer
			for i, j := 0, len(found)-1; i < j; i, j = i+1, j-1 {
				found[i], found[j] = found[j], found[i]
			}
			return found
		}
	}
	return nil
}

// topoOrder is Kahn's algorithm, taking ready steps in file order.
func topoOrder(w *Workflow) []string {
	done := map[string]bool{}
	var order []string
	for len(order) < len(w.byID) {
		progressed := false
		for _, cs := range w.Steps {
			if done[cs.ID] || w.byID[cs.ID] != cs {
				continue
			}
			ready := true
			for _, d := range cs.Deps {
				if !done[d] {
					ready = false
					break
				}
			}
			if ready {
				done[cs.ID] = true
				order = append(order, cs.ID)
				progressed = true
			}
		}
		if !progressed {
			break
		}
	}
	return order
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func contains(ss []string, s string) bool { return indexOf(ss, s) >= 0 }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
