package dsl

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
)

// The Flow format (nodes + edges) is a second way to write a workflow: every node is a
// natural-language instruction for an LLM, data flows through named outputs ({{outputName}}),
// and edges order the nodes. weft converts it to the step format: each node becomes a generate
// step whose prompt is the instruction, {{name}} references become {{ node.output.text }} (nested
// properties read the node's output), edges become dependsOn and an edge condition becomes the
// target's condition. A node's tool and mode (which coding CLI ran it, and how) have no
// counterpart: generate uses the configured LLM, so they are dropped.

// IsFlow reports whether a decoded file is in the Flow format.
func IsFlow(root any) bool {
	m, ok := root.(map[string]any)
	if !ok {
		return false
	}
	_, hasNodes := m["nodes"]
	_, hasEdges := m["edges"]
	_, hasSteps := m["steps"]
	return hasNodes && hasEdges && !hasSteps
}

// flowRef is an {{outputName.path}} reference in a node's instruction; a path segment may be a
// number (items.0, as vai writes an index).
var flowRef = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)((?:\.(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+))*)\s*\}\}`)

// ConvertFlow converts a Flow-format file to a step-format definition.
func ConvertFlow(file string, data []byte) (*Definition, error) {
	src, err := ParseSource(file, data)
	if err != nil {
		return nil, err
	}
	if !IsFlow(src.Root) {
		return nil, Diagnostics{src.At("", "not a Flow file: it needs \"nodes\" and \"edges\" and no \"steps\"", "step-format files are already in weft's format")}
	}
	def, diags := convertFlow(src)
	if diags.HasErrors() {
		return nil, diags.sorted()
	}
	return def, nil
}

func convertFlow(src *Source) (*Definition, Diagnostics) {
	fc := &flowConverter{src: src, ids: map[string]int{}, stepID: map[string]string{}, outputs: map[string]string{},
		usedStep: map[string]string{}, deps: map[string][]string{}, conds: map[string][]string{}}
	root := src.Root.(map[string]any)
	def := fc.header(root)
	nodes, ok := root["nodes"].([]any)
	if !ok && root["nodes"] != nil {
		fc.at("/nodes", "must be an array of nodes", "")
	}
	edges, ok := root["edges"].([]any)
	if !ok && root["edges"] != nil {
		fc.at("/edges", "must be an array of edges", "")
	}
	if v, ok := root["version"]; ok {
		if _, isNum := v.(float64); !isNum {
			fc.at("/version", "must be a number (the Flow schema version, currently 1)", "")
		}
	}
	for i, n := range nodes {
		fc.node(i, n)
	}
	edgeIDs := map[string]bool{}
	for i, e := range edges {
		fc.edge(i, e, edgeIDs)
	}
	fc.checkContextRefs()
	if fc.ds.HasErrors() {
		return nil, fc.ds
	}
	for _, in := range fc.infos {
		def.Steps = append(def.Steps, fc.step(in))
	}
	return def, fc.ds
}

// flowConverter is a Flow file being converted: what its nodes and edges say, by node id.
type flowConverter struct {
	src      *Source
	ds       Diagnostics
	ids      map[string]int    // node id -> index
	stepID   map[string]string // node id -> step id
	outputs  map[string]string // outputName -> node id
	usedStep map[string]string // step id -> node id
	infos    []flowNode
	deps     map[string][]string // node id -> the nodes its edges come from
	conds    map[string][]string // node id -> its edges' conditions
}

// flowNode is a node that converts to a step.
type flowNode struct {
	id, ptr string
	data    map[string]any
}

func (fc *flowConverter) at(ptr, msg, hint string) { fc.ds = append(fc.ds, fc.src.At(ptr, msg, hint)) }

// header checks the Flow's required fields and starts its definition.
func (fc *flowConverter) header(root map[string]any) *Definition {
	for _, f := range []string{"id", "name", "version", "nodes", "edges"} {
		if _, ok := root[f]; !ok {
			fc.at("", fmt.Sprintf("missing required field %q", f), "a Flow needs id, name, version, nodes and edges")
		}
	}
	def := &Definition{Name: str(root, "name"), Description: str(root, "description")}
	if def.Name == "" {
		def.Name = str(root, "id")
	}
	return def
}

// node reads nodes[i]: its id (unique), type, data, step id and output name.
func (fc *flowConverter) node(i int, n any) {
	ptr := "/nodes/" + strconv.Itoa(i)
	m, ok := n.(map[string]any)
	if !ok {
		fc.at(ptr, "a node must be an object", "")
		return
	}
	id := str(m, "id")
	if id == "" {
		fc.at(ptr, "missing required field \"id\"", "every node needs a unique id")
		return
	}
	if j, dup := fc.ids[id]; dup {
		fc.at(ptr+"/id", fmt.Sprintf("duplicate id %q (also nodes[%d])", id, j), "node and edge ids must be unique")
		return
	}
	fc.ids[id] = i
	if t := str(m, "type"); t != "prompt-template" {
		fc.at(ptr+"/type", fmt.Sprintf("node type %q is not supported", t), "every Flow node has \"type\": \"prompt-template\"")
	}
	data, _ := m["data"].(map[string]any)
	if data == nil {
		fc.at(ptr, "missing required field \"data\"", "a node's data holds its label and instruction")
		return
	}
	for _, f := range []string{"label", "instruction"} {
		if s, _ := data[f].(string); s == "" {
			fc.at(ptr+"/data", fmt.Sprintf("missing required field %q", f), "")
		}
	}
	sid := sanitizeID(id)
	if _, taken := fc.usedStep[sid]; taken {
		sid = sid + "_" + strconv.Itoa(i)
	}
	fc.usedStep[sid] = id
	fc.stepID[id] = sid
	if on := str(data, "outputName"); on != "" {
		if prev, dup := fc.outputs[on]; dup {
			fc.at(ptr+"/data/outputName", fmt.Sprintf("outputName %q is already used by node %q", on, prev), "output names must be unique")
		}
		fc.outputs[on] = id
	}
	fc.infos = append(fc.infos, flowNode{id: id, ptr: ptr, data: data})
}

// edge reads edges[i]: its id (unique among nodes' and edges'), its ends, and its condition.
func (fc *flowConverter) edge(i int, e any, edgeIDs map[string]bool) {
	ptr := "/edges/" + strconv.Itoa(i)
	m, ok := e.(map[string]any)
	if !ok {
		fc.at(ptr, "an edge must be an object", "")
		return
	}
	id := str(m, "id")
	if id != "" {
		if edgeIDs[id] {
			fc.at(ptr+"/id", fmt.Sprintf("duplicate edge id %q", id), "node and edge ids must be unique")
		} else if _, clash := fc.ids[id]; clash {
			fc.at(ptr+"/id", fmt.Sprintf("edge id %q is also a node id", id), "node and edge ids must be unique")
		}
		edgeIDs[id] = true
	}
	srcID, tgt := str(m, "source"), str(m, "target")
	for _, end := range []struct{ k, v string }{{"source", srcID}, {"target", tgt}} {
		if _, ok := fc.ids[end.v]; !ok {
			fc.at(ptr+"/"+end.k, fmt.Sprintf("%s %q is not a node id", end.k, end.v), didYouMean(end.v, sortedKeys(fc.ids)))
		}
	}
	if srcID == tgt && srcID != "" {
		fc.at(ptr, fmt.Sprintf("edge from %q to itself", srcID), "remove it")
	}
	fc.deps[tgt] = append(fc.deps[tgt], srcID)
	if d, _ := m["data"].(map[string]any); d != nil {
		if c := str(d, "condition"); c != "" {
			fc.conds[tgt] = append(fc.conds[tgt], c)
		}
	}
}

// checkContextRefs: contextRefs must name an existing outputName.
func (fc *flowConverter) checkContextRefs() {
	for _, in := range fc.infos {
		refs, _ := in.data["contextRefs"].([]any)
		for j, r := range refs {
			s, _ := r.(string)
			if _, ok := fc.outputs[s]; !ok {
				fc.at(fmt.Sprintf("%s/data/contextRefs/%d", in.ptr, j), fmt.Sprintf("contextRefs names %q, which no node outputs", s), didYouMean(s, sortedKeys(fc.outputs)))
			}
		}
	}
}

// step is the generate step the node converts to.
func (fc *flowConverter) step(in flowNode) Step {
	id := in.id
	st := Step{ID: fc.stepID[id], Name: str(in.data, "label"), Tool: toolspec.Generate.Name}
	instr := flowRef.ReplaceAllStringFunc(str(in.data, "instruction"), func(m string) string {
		sub := flowRef.FindStringSubmatch(m)
		node, ok := fc.outputs[sub[1]]
		if !ok {
			return m
		}
		if sub[2] == "" {
			return "{{ " + fc.stepID[node] + ".output.text }}"
		}
		return "{{ " + fc.stepID[node] + ".output" + sub[2] + " }}"
	})
	st.Inputs = map[string]any{"prompt": instr}
	refs, _ := in.data["contextRefs"].([]any)
	var ctx []string
	for _, r := range refs {
		ctx = append(ctx, "{{ "+fc.stepID[fc.outputs[r.(string)]]+".output.text }}")
	}
	if len(ctx) == 1 {
		st.Inputs["context"] = ctx[0]
	} else if len(ctx) > 1 {
		arr := make([]any, len(ctx))
		for i, c := range ctx {
			arr[i] = c
		}
		st.Inputs["context"] = arr
	}
	set := map[string]bool{}
	for _, d := range fc.deps[id] {
		set[fc.stepID[d]] = true
	}
	st.DependsOn = sortedKeys(set)
	if cs := fc.conds[id]; len(cs) > 0 {
		parts := make([]string, len(cs))
		for i, c := range cs {
			parts[i] = "(" + rewriteFlowCondition(c, fc.outputs, fc.stepID) + ")"
		}
		sort.Strings(parts)
		st.Condition = strings.Join(parts, " || ")
	}
	return st
}

// condIdent is a node.path or outputName.path reference in an edge condition; a path segment may
// be a number (verdict.0).
var condIdent = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_-]*)((?:\.(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+\b))+)`)

// rewriteFlowCondition maps node.field / output.field in an edge condition to step outputs.
func rewriteFlowCondition(c string, outputs, stepID map[string]string) string {
	return condIdent.ReplaceAllStringFunc(c, func(m string) string {
		sub := condIdent.FindStringSubmatch(m)
		if node, ok := outputs[sub[1]]; ok {
			return stepID[node] + ".output" + sub[2]
		}
		if sid, ok := stepID[sub[1]]; ok {
			return sid + ".output" + sub[2]
		}
		return m
	})
}
