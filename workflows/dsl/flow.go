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
	var ds Diagnostics
	at := func(ptr, msg, hint string) { ds = append(ds, src.At(ptr, msg, hint)) }
	root := src.Root.(map[string]any)
	for _, f := range []string{"id", "name", "version", "nodes", "edges"} {
		if _, ok := root[f]; !ok {
			at("", fmt.Sprintf("missing required field %q", f), "a Flow needs id, name, version, nodes and edges")
		}
	}
	nodes, ok := root["nodes"].([]any)
	if !ok && root["nodes"] != nil {
		at("/nodes", "must be an array of nodes", "")
	}
	edges, ok := root["edges"].([]any)
	if !ok && root["edges"] != nil {
		at("/edges", "must be an array of edges", "")
	}
	if v, ok := root["version"]; ok {
		if _, isNum := v.(float64); !isNum {
			at("/version", "must be a number (the Flow schema version, currently 1)", "")
		}
	}
	def := &Definition{Name: str(root, "name"), Description: str(root, "description")}
	if def.Name == "" {
		def.Name = str(root, "id")
	}
	ids := map[string]int{}
	stepID := map[string]string{} // node id -> step id
	outputs := map[string]string{}
	usedStep := map[string]string{}
	type nodeInfo struct {
		id, ptr string
		data    map[string]any
	}
	var infos []nodeInfo
	for i, n := range nodes {
		ptr := "/nodes/" + strconv.Itoa(i)
		m, ok := n.(map[string]any)
		if !ok {
			at(ptr, "a node must be an object", "")
			continue
		}
		id := str(m, "id")
		if id == "" {
			at(ptr, "missing required field \"id\"", "every node needs a unique id")
			continue
		}
		if j, dup := ids[id]; dup {
			at(ptr+"/id", fmt.Sprintf("duplicate id %q (also nodes[%d])", id, j), "node and edge ids must be unique")
			continue
		}
		ids[id] = i
		if t := str(m, "type"); t != "prompt-template" {
			at(ptr+"/type", fmt.Sprintf("node type %q is not supported", t), "every Flow node has \"type\": \"prompt-template\"")
		}
		data, _ := m["data"].(map[string]any)
		if data == nil {
			at(ptr, "missing required field \"data\"", "a node's data holds its label and instruction")
			continue
		}
		for _, f := range []string{"label", "instruction"} {
			if s, _ := data[f].(string); s == "" {
				at(ptr+"/data", fmt.Sprintf("missing required field %q", f), "")
			}
		}
		sid := sanitizeID(id)
		if _, taken := usedStep[sid]; taken {
			sid = sid + "_" + strconv.Itoa(i)
		}
		usedStep[sid] = id
		stepID[id] = sid
		if on := str(data, "outputName"); on != "" {
			if prev, dup := outputs[on]; dup {
				at(ptr+"/data/outputName", fmt.Sprintf("outputName %q is already used by node %q", on, prev), "output names must be unique")
			}
			outputs[on] = id
		}
		infos = append(infos, nodeInfo{id: id, ptr: ptr, data: data})
	}
	edgeIDs := map[string]bool{}
	deps := map[string][]string{}
	conds := map[string][]string{}
	for i, e := range edges {
		ptr := "/edges/" + strconv.Itoa(i)
		m, ok := e.(map[string]any)
		if !ok {
			at(ptr, "an edge must be an object", "")
			continue
		}
		id := str(m, "id")
		if id != "" {
			if edgeIDs[id] {
				at(ptr+"/id", fmt.Sprintf("duplicate edge id %q", id), "node and edge ids must be unique")
			} else if _, clash := ids[id]; clash {
				at(ptr+"/id", fmt.Sprintf("edge id %q is also a node id", id), "node and edge ids must be unique")
			}
			edgeIDs[id] = true
		}
		srcID, tgt := str(m, "source"), str(m, "target")
		for _, end := range []struct{ k, v string }{{"source", srcID}, {"target", tgt}} {
			if _, ok := ids[end.v]; !ok {
				at(ptr+"/"+end.k, fmt.Sprintf("%s %q is not a node id", end.k, end.v), didYouMean(end.v, sortedKeys(ids)))
			}
		}
		if srcID == tgt && srcID != "" {
			at(ptr, fmt.Sprintf("edge from %q to itself", srcID), "remove it")
		}
		deps[tgt] = append(deps[tgt], srcID)
		if d, _ := m["data"].(map[string]any); d != nil {
			if c := str(d, "condition"); c != "" {
				conds[tgt] = append(conds[tgt], c)
			}
		}
	}
	// contextRefs must name an existing outputName.
	for _, in := range infos {
		refs, _ := in.data["contextRefs"].([]any)
		for j, r := range refs {
			s, _ := r.(string)
			if _, ok := outputs[s]; !ok {
				at(fmt.Sprintf("%s/data/contextRefs/%d", in.ptr, j), fmt.Sprintf("contextRefs names %q, which no node outputs", s), didYouMean(s, sortedKeys(outputs)))
			}
		}
	}
	if ds.HasErrors() {
		return nil, ds
	}
	for _, in := range infos {
		id := in.id
		st := Step{ID: stepID[id], Name: str(in.data, "label"), Tool: toolspec.Generate.Name}
		instr := flowRef.ReplaceAllStringFunc(str(in.data, "instruction"), func(m string) string {
			sub := flowRef.FindStringSubmatch(m)
			node, ok := outputs[sub[1]]
			if !ok {
				return m
			}
			if sub[2] == "" {
				return "{{ " + stepID[node] + ".output.text }}"
			}
			return "{{ " + stepID[node] + ".output" + sub[2] + " }}"
		})
		st.Inputs = map[string]any{"prompt": instr}
		refs, _ := in.data["contextRefs"].([]any)
		var ctx []string
		for _, r := range refs {
			ctx = append(ctx, "{{ "+stepID[outputs[r.(string)]]+".output.text }}")
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
		for _, d := range deps[id] {
			set[stepID[d]] = true
		}
		st.DependsOn = sortedKeys(set)
		if cs := conds[id]; len(cs) > 0 {
			parts := make([]string, len(cs))
			for i, c := range cs {
				parts[i] = "(" + rewriteFlowCondition(c, outputs, stepID) + ")"
			}
			sort.Strings(parts)
			st.Condition = strings.Join(parts, " || ")
		}
		def.Steps = append(def.Steps, st)
	}
	return def, ds
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
