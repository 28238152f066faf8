package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
)

// A route is one operation of the API: what the OpenAPI document says of it and how it is
// served. In's fields tagged `path:"NAME"` are path parameters, `query:"NAME"` query parameters,
// the others (json) the request body; Out is the answer's body (or, for a stream, one event's
// data).
type route struct {
	Method, Path string
	ID           string // operationId
	Tag          string
	Summary      string
	Description  string
	// Role is the role the caller's key needs; "" needs no key (the document itself).
	Role string
	In   reflect.Type
	Out  reflect.Type
	// Stream: the answer is text/event-stream, one event per Out.
	Stream bool
	// Status is the success status (200 when 0); Created is answered 201 instead when the
	// handler says so (created).
	Status int
	// Created and Same describe the 201 and the 200 answers of a route whose Status is 201
	// (default: a run started, and the run an id names).
	Created, Same string
	// Errors are the error statuses the route answers besides 401, 403, 413 and 503.
	Errors []int
	// RawBody: the handler reads the body itself (a signed hook's); the document says it is a
	// JSON object.
	RawBody bool
	serve   func(c *call) error
}

// call is one request being served.
type call struct {
	api    *API
	w      http.ResponseWriter
	r      *http.Request
	ctx    context.Context
	who    auth.Identity
	authed bool
	status int // the success status the handler chose (0: the route's)
}

// client is the gateway's Temporal client (dialled on first use).
func (c *call) client() (*weftclient.Client, error) {
	wc, err := c.api.o.Client(c.ctx)
	if err != nil {
		return nil, kindUnavailable.problem(err.Error())
	}
	return wc, nil
}

// caller is who calls as client/ takes it (nil: nobody authenticated, the operator).
func (c *call) caller() *auth.Identity {
	if !c.authed {
		return nil
	}
	return &c.who
}

// starter is who a run the caller starts is recorded as started by: the key's (or login's) name,
// "" for the operator, whose runs are nobody's (weftclient.MayAct).
func (c *call) starter() string {
	if !c.authed {
		return ""
	}
	return c.who.Name
}

// op declares a route whose handler takes In and returns Out.
func op[In, Out any](method, path, role, id, tag, summary, description string, errs []int, h func(*call, In) (Out, error)) route {
	rt := route{Method: method, Path: path, Role: role, ID: id, Tag: tag, Summary: summary, Description: description, Errors: errs,
		In: reflect.TypeFor[In](), Out: reflect.TypeFor[Out]()}
	rt.serve = func(c *call) error {
		var in In
		if err := decode(c.r, &in); err != nil {
			return err
		}
		out, err := h(c, in)
		if err != nil {
			return err
		}
		status := c.status
		if status == 0 {
			status = max(rt.Status, http.StatusOK)
		}
		return writeJSON(c.w, status, out)
	}
	return rt
}

// stream declares a route that answers with server-sent events (its handler writes them).
func stream[In, Event any](path, role, id, tag, summary, description string, errs []int, h func(*call, In) error) route {
	rt := route{Method: http.MethodGet, Path: path, Role: role, ID: id, Tag: tag, Summary: summary, Description: description, Errors: errs,
		In: reflect.TypeFor[In](), Out: reflect.TypeFor[Event](), Stream: true}
	rt.serve = func(c *call) error {
		var in In
		if err := decode(c.r, &in); err != nil {
			return err
		}
		return h(c, in)
	}
	return rt
}

// hasBody reports whether In has fields sent in the body.
func hasBody(t reflect.Type) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.IsExported() && f.Tag.Get("path") == "" && f.Tag.Get("query") == "" && f.Tag.Get("json") != "-" {
			return true
		}
	}
	return false
}

// decode fills in from r: the body (JSON, unknown fields refused), then the path and query
// parameters.
func decode(r *http.Request, in any) error {
	v := reflect.ValueOf(in).Elem()
	t := v.Type()
	if t.Kind() != reflect.Struct {
		return nil
	}
	if hasBody(t) {
		if err := decodeBody(r.Body, in); err != nil {
			return err
		}
	}
	q := r.URL.Query()
	for i := range t.NumField() {
		f := t.Field(i)
		if name := f.Tag.Get("path"); name != "" {
			v.Field(i).SetString(r.PathValue(name))
			continue
		}
		name := f.Tag.Get("query")
		if name == "" || !q.Has(name) {
			continue
		}
		s := q.Get(name)
		switch f.Type.Kind() {
		case reflect.String:
			v.Field(i).SetString(s)
		case reflect.Int, reflect.Int64:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return invalid("?"+name, fmt.Sprintf("query parameter %s=%q: send a whole number", name, s))
			}
			v.Field(i).SetInt(n)
		case reflect.Bool:
			b, err := strconv.ParseBool(s)
			if err != nil {
				return invalid("?"+name, fmt.Sprintf("query parameter %s=%q: send true or false", name, s))
			}
			v.Field(i).SetBool(b)
		}
	}
	return nil
}

// decodeBody reads a JSON object into in; an empty body is an empty object.
func decodeBody(body io.Reader, in any) error {
	data, err := io.ReadAll(body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return tooLarge()
		}
		return kindInvalid.problem("reading the request body: " + err.Error())
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			p := "/" + strings.ReplaceAll(te.Field, ".", "/")
			return invalid(p, fmt.Sprintf("%s: a JSON %s was sent where %s is expected", p, te.Value, jsonKind(te.Type)))
		case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF):
			return invalid("", fmt.Sprintf("the body is not JSON (%v): send a JSON object", err))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
			return invalid("/"+name, fmt.Sprintf("unknown field %q: the operation's fields are in GET /v1/openapi.json", name))
		}
		return invalid("", "the body is not a JSON object of the operation's fields: "+err.Error())
	}
	if dec.More() {
		return invalid("", "the body holds more than one JSON value: send one object")
	}
	return nil
}

// jsonKind names a Go type's JSON kind for people.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another value"
}

// writeJSON answers with v (proto messages as every surface writes them: weftclient.ProtoJSON).
func writeJSON(w http.ResponseWriter, status int, v any) error {
	var b []byte
	var err error
	switch m := v.(type) {
	case proto.Message:
		b, err = weftclient.ProtoJSON(m)
	case json.RawMessage:
		b = m
	default:
		b, err = json.Marshal(v)
	}
	if err != nil {
		return fmt.Errorf("writing the answer: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}
