package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
)

// Prefix is where the API is mounted.
const Prefix = "/v1/"

// Options configure the API.
type Options struct {
	// Gate authenticates requests: the same one /mcp uses (mcp.Gateway.HTTPHandlerWith).
	Gate *auth.Gate
	// Authenticate, when set, decides who calls instead of Gate: the console mounts the API
	// with its login session as the identity (and its CSRF check). It returns the caller's
	// identity, nil for the operator on this machine (a console without login: no role is
	// checked, as on stdio), or why the request is refused (Status 401, 403 or 429).
	Authenticate func(*http.Request) (*auth.Identity, *auth.Refusal)
	// Operator is the name recorded for the operator (Authenticate's nil identity): who cancelled
	// a run, and who decided a review when the decision names nobody (default "operator").
	Operator string
	// Surface is how a cancel's reason names where the caller came from (default "HTTP key"; the
	// console: "console").
	Surface string
	// Client is the Temporal client every operation goes through (mcp.Gateway.Client: dialled on
	// first use).
	Client func(context.Context) (*weftclient.Client, error)
	// WorkflowsDir and NoBuiltins say which workflows may be started by name, as for /mcp.
	WorkflowsDir string
	NoBuiltins   bool
	// WorkflowTools is the MCP tool definitions a catalog workflow is offered as
	// (mcp.Gateway.WorkflowTools): GET /v1/workflows/{name}/tools. Unset, the route answers 503.
	WorkflowTools func(name string) (json.RawMessage, bool)
	// Memory is long-term memory (mcp.Gateway: its knowledge store): /v1/memory. Unset, those
	// routes answer 503.
	Memory weftclient.MemoryStore
	// Version is the gateway's, in the document's info.
	Version string
	// Log gets one line per request (method, route, status, duration, client, key): the audit
	// of who did what, beside the runs' own records of who started, cancelled or decided.
	Log *slog.Logger
	// Hooks are the inbound triggers (POST /v1/hooks/{name}) by name; each needs a Secret.
	Hooks map[string]Hook
	// Heartbeat is how often an event stream with nothing to say sends a comment, so proxies
	// keep it open (default 15 s).
	Heartbeat time.Duration
}

// API serves /v1.
type API struct {
	o      Options
	routes []route
	mux    *http.ServeMux
	doc    []byte
}

// New builds the API and its OpenAPI document.
func New(o Options) (*API, error) {
	if (o.Gate == nil && o.Authenticate == nil) || o.Client == nil {
		return nil, fmt.Errorf("httpapi: Options.Gate (or Authenticate) and Options.Client are required")
	}
	if o.Operator == "" {
		o.Operator = "operator"
	}
	if o.Surface == "" {
		o.Surface = "HTTP key"
	}
	for name, h := range o.Hooks {
		if h.Secret == "" || h.Workflow == "" {
			return nil, fmt.Errorf("hook %q: it needs a workflow and a secret (WEFT_HOOK_SECRET)", name)
		}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	a := &API{o: o, routes: routes(), mux: http.NewServeMux()}
	doc, err := Document(a.routes, o.Version)
	if err != nil {
		return nil, err
	}
	a.doc = doc
	for _, rt := range a.routes {
		a.mux.Handle(rt.Method+" "+rt.Path, a.handler(rt))
	}
	a.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, kindNotFound.problem(fmt.Sprintf("no operation %s %s: the operations are listed in GET /v1/openapi.json", r.Method, r.URL.Path)))
	})
	return a, nil
}

// ServeHTTP serves the API's routes.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// OpenAPI is the document GET /v1/openapi.json serves.
func (a *API) OpenAPI() []byte { return a.doc }

// authenticate is who sends r: Options.Authenticate's answer when set, else the Gate's (a key's
// identity, never the operator).
func (a *API) authenticate(r *http.Request) (*auth.Identity, *auth.Refusal) {
	if a.o.Authenticate != nil {
		return a.o.Authenticate(r)
	}
	id, refused := a.o.Gate.Check(r)
	if refused != nil {
		return nil, refused
	}
	return &id, nil
}

// handler authenticates, bounds the body, checks the role and serves rt, logging the request.
func (a *API) handler(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		c := &call{api: a, w: rec, r: r, ctx: r.Context()}
		defer func() {
			a.o.Log.Info("http request", "method", r.Method, "route", rt.Path, "path", r.URL.Path, "status", rec.status,
				"duration", time.Since(start).Round(time.Microsecond), "client", r.RemoteAddr, "key", c.who.Name)
		}()
		if rt.Role != "" {
			id, refused := a.authenticate(r)
			if refused != nil {
				switch refused.Status {
				case http.StatusTooManyRequests:
					rec.Header().Set("Retry-After", strconv.Itoa(refused.RetryAfterSeconds()))
					writeProblem(rec, kindTooMany.problem(refused.Message))
				case http.StatusForbidden: // a valid token without a weft role
					if a.o.Authenticate == nil && refused.Challenge != "" {
						rec.Header().Set("WWW-Authenticate", refused.Challenge)
					}
					writeProblem(rec, kindForbidden.problem(refused.Message))
				default:
					if a.o.Authenticate == nil {
						challenge := refused.Challenge
						if challenge == "" {
							challenge = "Bearer"
						}
						rec.Header().Set("WWW-Authenticate", challenge)
					}
					writeProblem(rec, kindUnauthorized.problem(refused.Message))
				}
				return
			}
			if id == nil {
				// the operator on this machine: every role, nobody's run scoping (caller nil)
				c.who = auth.Identity{Name: a.o.Operator}
			} else {
				c.who, c.authed = *id, true
				c.ctx = auth.WithIdentity(c.ctx, *id)
			}
			if c.authed && !c.who.Has(rt.Role) {
				id := c.who
				a.o.Log.Warn("http request refused", "route", rt.Method+" "+rt.Path, "identity", id.Name, "roles", id.Roles, "needs", rt.Role)
				writeProblem(rec, kindForbidden.problem(id.Refusal(rt.Method+" "+rt.Path, rt.Role)))
				return
			}
		}
		if r.ContentLength > auth.MaxBodyBytes {
			writeProblem(rec, tooLarge()) // refused before reading a byte of it
			return
		}
		r.Body = http.MaxBytesReader(rec, r.Body, auth.MaxBodyBytes)
		c.r = r.WithContext(c.ctx)
		if err := rt.serve(c); err != nil {
			if rec.wrote {
				return // a stream that ended with an error: its events said so
			}
			writeProblem(rec, problemOf(err))
		}
	})
}

type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	r.status, r.wrote = code, true
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
