package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	gschema "github.com/google/jsonschema-go/jsonschema"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

const componentRef = "#/components/schemas/"

// Shapes of values whose Go types marshal differently from their fields (MarshalJSON): the
// schema is derived from the shape, and TestShapesMatch holds each to what is sent.
type (
	eventShape struct {
		events.Event
		State  *weftv1.StepState     `json:"state,omitempty" jsonschema:"the step as it was (step_* and review_requested events)"`
		Review *weftv1.ReviewRequest `json:"review,omitempty" jsonschema:"the gate (review_* events)"`
		Call   *weftv1.ToolCall      `json:"call,omitempty" jsonschema:"the agent's tool call (tool_call_* events)"`
		Usage  *weftv1.TokenUsage    `json:"usage,omitempty" jsonschema:"the run's usage so far (usage, run_*), the step's (step_*)"`
		Result *weftv1.RunResult     `json:"result,omitempty" jsonschema:"the run's result (run_completed)"`
	}
	pendingReviewShape struct {
		Run    weftclient.RunSummary `json:"run" jsonschema:"the run the review belongs to"`
		Chat   bool                  `json:"chat,omitempty" jsonschema:"the run is a chat session"`
		In     weftclient.RunSummary `json:"in" jsonschema:"where the gate waits: the run, or one of its child runs; send the decision to in.id"`
		Review *weftv1.ReviewRequest `json:"review"`
	}
)

// schemas derives the components of the document.
type schemas struct {
	opts  *gschema.ForOptions
	comps map[string]any
}

func newSchemas() (*schemas, error) {
	s := &schemas{opts: &gschema.ForOptions{TypeSchemas: map[reflect.Type]*gschema.Schema{}}, comps: map[string]any{}}
	msgs := weftv1.File_proto_weft_v1_weft_proto.Messages()
	for i := range msgs.Len() {
		md := msgs.Get(i)
		name := string(md.Name())
		s.comps[name] = protoSchema(md)
		t := protoType(md)
		if t != nil {
			s.opts.TypeSchemas[t] = &gschema.Schema{Ref: componentRef + name}
			s.opts.TypeSchemas[t.Elem()] = &gschema.Schema{Ref: componentRef + name}
		}
	}
	s.opts.TypeSchemas[reflect.TypeFor[time.Time]()] = &gschema.Schema{Type: "string", Format: "date-time"}
	s.opts.TypeSchemas[reflect.TypeFor[any]()] = &gschema.Schema{Description: "any JSON value"}
	for name, t := range map[string]reflect.Type{"Event": reflect.TypeFor[eventShape](), "PendingReview": reflect.TypeFor[pendingReviewShape]()} {
		if _, err := s.add(name, t, false); err != nil {
			return nil, err
		}
	}
	s.opts.TypeSchemas[reflect.TypeFor[events.Event]()] = &gschema.Schema{Ref: componentRef + "Event"}
	s.opts.TypeSchemas[reflect.TypeFor[weftclient.PendingReview]()] = &gschema.Schema{Ref: componentRef + "PendingReview"}
	if _, err := s.add("Problem", reflect.TypeFor[Problem](), false); err != nil {
		return nil, err
	}
	return s, nil
}

// protoType is the Go type (a pointer) of a message of proto/weft/v1.
func protoType(md protoreflect.MessageDescriptor) reflect.Type {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		return nil
	}
	return reflect.TypeOf(mt.New().Interface())
}

// add derives t's schema as component name (a request body refuses unknown fields; an answer
// may grow fields) and returns its reference.
func (s *schemas) add(name string, t reflect.Type, request bool) (map[string]any, error) {
	ref := map[string]any{"$ref": componentRef + name}
	if _, ok := s.comps[name]; ok {
		return ref, nil
	}
	if known := s.opts.TypeSchemas[t]; known != nil && known.Ref != "" {
		return map[string]any{"$ref": known.Ref}, nil
	}
	sc, err := gschema.ForType(t, s.opts)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", t, err)
	}
	b, err := json.Marshal(sc)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	tidy(doc, request)
	s.comps[name] = doc
	return ref, nil
}

// tidy drops what jsonschema-go adds that the document should not say: `additionalProperties:
// false` on answers (they may grow fields), null among the types of slices and pointers.
func tidy(v any, request bool) {
	switch d := v.(type) {
	case map[string]any:
		if ap, ok := d["additionalProperties"].(bool); ok && !ap && !request {
			delete(d, "additionalProperties")
		}
		if ap, ok := d["additionalProperties"].(map[string]any); ok && len(ap) == 0 {
			d["additionalProperties"] = true
		}
		if ts, ok := d["type"].([]any); ok {
			var kept []any
			for _, t := range ts {
				if t != "null" {
					kept = append(kept, t)
				}
			}
			switch len(kept) {
			case 0:
				delete(d, "type")
			case 1:
				d["type"] = kept[0]
			default:
				d["type"] = kept
			}
		}
		for _, sub := range d {
			tidy(sub, request)
		}
	case []any:
		for _, sub := range d {
			tidy(sub, request)
		}
	}
}

// Document is the OpenAPI 3.1 document of rs.
func Document(rs []route, version string) ([]byte, error) {
	s, err := newSchemas()
	if err != nil {
		return nil, err
	}
	paths := map[string]map[string]any{}
	for _, rt := range rs {
		o, err := s.operation(rt)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", rt.Method, rt.Path, err)
		}
		if paths[rt.Path] == nil {
			paths[rt.Path] = map[string]any{}
		}
		paths[rt.Path][strings.ToLower(rt.Method)] = o
	}
	s.prune(paths)
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "weft HTTP API",
			"version":     version,
			"description": "Start, read, follow, cancel, retry and fork weft runs, and decide their reviews. Every operation but this document needs a key: Authorization: Bearer KEY (weft mcp generate-key). Errors are RFC 9457 problem details.",
			"license":     map[string]any{"name": "See the weft repository", "url": "https://github.com/weftworks/weft"},
		},
		"servers":  []any{map[string]any{"url": "http://127.0.0.1:3100", "description": "weft mcp --transport http, by default"}},
		"security": []any{map[string]any{"bearer": []any{}}},
		"tags": []any{
			map[string]any{"name": "runs", "description": "Runs: start, list, read, follow, cancel, retry, fork"},
			map[string]any{"name": "reviews", "description": "Review gates waiting for a decision"},
			map[string]any{"name": "hooks", "description": "Inbound triggers: signed requests that start the operator's workflows"},
			map[string]any{"name": "meta", "description": "This document"},
		},
		"paths": paths,
		"components": map[string]any{
			"schemas":         s.comps,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "a key of the gateway's key file (weft mcp generate-key), or WEFT_MCP_KEY"}},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

func (s *schemas) operation(rt route) (map[string]any, error) {
	o := map[string]any{"operationId": rt.ID, "summary": rt.Summary, "description": rt.Description, "tags": []any{rt.Tag}}
	if rt.Role == "" {
		o["security"] = []any{}
	} else {
		o["description"] = rt.Description + " Needs the role " + rt.Role + "."
	}
	var params []any
	body := false
	for i := range rt.In.NumField() {
		f := rt.In.Field(i)
		in, name := "", ""
		switch {
		case f.Tag.Get("path") != "":
			in, name = "path", f.Tag.Get("path")
		case f.Tag.Get("query") != "":
			in, name = "query", f.Tag.Get("query")
		default:
			if f.IsExported() && f.Tag.Get("json") != "-" {
				body = true
			}
			continue
		}
		if in == "query" && (f.Name == "Since" || f.Name == "Run") && !rt.Stream {
			continue // runIn's since and run are the stream's
		}
		p := map[string]any{"name": name, "in": in, "schema": paramSchema(f.Type), "description": f.Tag.Get("jsonschema")}
		if in == "path" {
			p["required"] = true
		}
		params = append(params, p)
	}
	if rt.Stream {
		params = append(params, map[string]any{"name": "Last-Event-ID", "in": "header", "schema": map[string]any{"type": "string"},
			"description": "the id of the last event received: the stream goes on after it"})
	}
	if params != nil {
		o["parameters"] = params
	}
	if rt.RawBody {
		body = true
		o["requestBody"] = map[string]any{"required": false, "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object", "description": "the workflow's inputs"}}}}
		params = append(params, map[string]any{"name": "X-Weft-Timestamp", "in": "header", "required": true, "schema": map[string]any{"type": "string"}, "description": "when the request was signed, in Unix seconds"},
			map[string]any{"name": "X-Weft-Signature", "in": "header", "required": true, "schema": map[string]any{"type": "string"}, "description": "sha256= and the hex HMAC-SHA256 of the timestamp, \".\" and the body"})
		o["parameters"] = params
	} else if body {
		ref, err := s.add(rt.In.Name(), rt.In, true)
		if err != nil {
			return nil, err
		}
		o["requestBody"] = map[string]any{"required": false, "content": map[string]any{"application/json": map[string]any{"schema": ref}}}
	}
	responses := map[string]any{}
	switch {
	case rt.Stream:
		ref, err := s.add("Event", rt.Out, false)
		if err != nil {
			return nil, err
		}
		responses["200"] = map[string]any{"description": "server-sent events until the run ends: each event's data is an Event (the schema given)",
			"content": map[string]any{"text/event-stream": map[string]any{"schema": ref}}}
	case rt.ID == "openapi":
		responses["200"] = map[string]any{"description": "this document", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}}
	default:
		name := rt.Out.Name()
		t := rt.Out
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
			name = t.Name()
		}
		ref, err := s.add(name, t, false)
		if err != nil {
			return nil, err
		}
		ok := map[string]any{"description": rt.Summary + ": done", "content": map[string]any{"application/json": map[string]any{"schema": ref}}}
		if rt.Status == http.StatusCreated {
			created, same := "started", "a run with the id existed: this is that run"
			if rt.Created != "" {
				created, same = rt.Created, rt.Same
			}
			responses["201"] = map[string]any{"description": created, "content": ok["content"]}
			ok["description"] = same
		}
		responses["200"] = ok
	}
	errs := append([]int{}, rt.Errors...)
	if rt.Role != "" {
		errs = append(errs, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests, http.StatusServiceUnavailable)
	}
	if body {
		errs = append(errs, http.StatusRequestEntityTooLarge)
	}
	sort.Ints(errs)
	if rt.Role == "" && !rt.RawBody {
		responses["403"] = map[string]any{"description": "the Host header names a host the gateway does not serve (weft mcp --allowed-host adds one)"}
	}
	for _, code := range errs {
		responses[strconv.Itoa(code)] = map[string]any{"description": http.StatusText(code),
			"content": map[string]any{"application/problem+json": map[string]any{"schema": map[string]any{"$ref": componentRef + "Problem"}}}}
	}
	o["responses"] = responses
	return o, nil
}

func paramSchema(t reflect.Type) map[string]any {
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	}
	return map[string]any{"type": "string"}
}

// prune drops the components nothing in paths refers to, directly or not.
func (s *schemas) prune(paths any) {
	used := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch d := v.(type) {
		case map[string]any:
			if ref, ok := d["$ref"].(string); ok && strings.HasPrefix(ref, componentRef) {
				name := strings.TrimPrefix(ref, componentRef)
				if !used[name] {
					used[name] = true
					walk(s.comps[name])
				}
			}
			for _, sub := range d {
				walk(sub)
			}
		case map[string]map[string]any:
			for _, sub := range d {
				walk(sub)
			}
		case []any:
			for _, sub := range d {
				walk(sub)
			}
		}
	}
	walk(paths)
	for name := range s.comps {
		if !used[name] {
			delete(s.comps, name)
		}
	}
}
