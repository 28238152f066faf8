package console

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzhttp"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/httpapi"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// DefaultAddress is where `weft dev` and `weft console` serve the console.
const DefaultAddress = "127.0.0.1:8234"

// Options configure a console.
type Options struct {
	Client *weftclient.Client
	// WorkflowsDir holds workflow files shown in the playground, beside the built-in templates.
	WorkflowsDir string
	// TemporalUI is the Temporal Web UI's base URL, for links to the same execution ("" no links).
	TemporalUI string
	// Namespace is the Temporal namespace (for Web UI links).
	Namespace string
	// Keys are the bearer keys people log in with. RequireLogin makes every page ask for one;
	// it is set when the console is served beyond this machine.
	Keys         *auth.Keys
	RequireLogin bool
	// AllowedHosts are the Host headers served (DNS rebinding guard); empty: 127.0.0.1, localhost.
	AllowedHosts []string
	// Reviewer is the name decisions carry when nobody logged in (default: the OS account).
	Reviewer string
	// PollInterval is how often a live page's state is read (default 250 ms).
	PollInterval time.Duration
	// RunsPerPage is how many runs a page of the runs list shows (default 50).
	RunsPerPage int
	// ReviewsPerPage is how many pending reviews a page of the reviews list shows (default 50).
	ReviewsPerPage int
	// ReviewListingTTL is how long one listing of the pending reviews answers every poll of
	// /api/reviews, whoever polls (each sees only what they may read of it); default
	// ReviewsPollInterval. Negative: polls share only a listing being read when they ask.
	ReviewListingTTL time.Duration
	// EvalsDir is the folder of weft eval's reports the Evals page lists (default .weft/evals,
	// report.DefaultDir).
	EvalsDir string
	Log      *slog.Logger
}

// Server is the console.
type Server struct {
	o       Options
	pages   map[string]*template.Template
	limiter *auth.FailureLimiter

	mu       sync.Mutex
	sessions map[string]*session
	// local is the one session of a console that asks nobody to log in: its CSRF token guards
	// the state-changing requests all the same.
	local *session
	costs map[string]runUsage // closed runs' usage, which never changes
	// reviews is the listing of the pending reviews every poll shares
	reviews *reviewListing
	// v1 is the HTTP API (package httpapi) the page reads and acts through, at /v1/, with the
	// session as the identity (authenticateV1)
	v1 *httpapi.API
}

type runUsage struct {
	cost   float64
	tokens int64
}

type session struct {
	id   string
	csrf string
	name string
	// who is the key the person logged in with (authenticated); the local session has none.
	who           auth.Identity
	authenticated bool
	expires       time.Time
}

// SessionLifetime is how long a login lasts.
const SessionLifetime = 12 * time.Hour

// New builds a console.
func New(o Options) (*Server, error) {
	if o.PollInterval <= 0 {
		o.PollInterval = 250 * time.Millisecond
	}
	if o.RunsPerPage <= 0 {
		o.RunsPerPage = 50
	}
	if o.ReviewsPerPage <= 0 {
		o.ReviewsPerPage = 50
	}
	if o.ReviewListingTTL == 0 {
		o.ReviewListingTTL = ReviewsPollInterval
	}
	if len(o.AllowedHosts) == 0 {
		o.AllowedHosts = []string{"127.0.0.1", "localhost", "::1"}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, pages: map[string]*template.Template{}, sessions: map[string]*session{}, costs: map[string]runUsage{},
		limiter: auth.NewFailureLimiter(auth.FailureBurst, auth.FailureRate),
		reviews: &reviewListing{client: o.Client, ttl: o.ReviewListingTTL}}
	s.local = &session{id: "local", csrf: randomHex(24), name: o.Reviewer}
	operator := o.Reviewer
	if operator == "" {
		operator = "operator"
	}
	v1, err := httpapi.New(httpapi.Options{Authenticate: s.authenticateV1, Operator: operator, Surface: "console",
		Client: func(context.Context) (*weftclient.Client, error) {
			if o.Client == nil {
				return nil, errors.New("the console has no Temporal client")
			}
			return o.Client, nil
		},
		WorkflowsDir: o.WorkflowsDir, Log: o.Log})
	if err != nil {
		return nil, err
	}
	s.v1 = v1
	for _, page := range []string{"runs", "run", "reviews", "workflows", "workflow", "login", "build", "evals", "eval", "notfound"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+page+".html")
		if err != nil {
			return nil, err
		}
		s.pages[page] = t
	}
	return s, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// Handler serves the console.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", cacheStatic(http.FileServerFS(static))))
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.guard(s.logout))

	mux.HandleFunc("GET /{$}", s.page(s.runsPage))
	mux.HandleFunc("GET /runs/{id}", s.page(s.runPage))
	mux.HandleFunc("GET /reviews", s.page(s.reviewsPage))
	mux.HandleFunc("GET /workflows", s.page(s.workflowsPage))
	mux.HandleFunc("GET /workflows/{name}", s.page(s.workflowPage))
	mux.HandleFunc("GET /build", s.page(s.builderPage))
	mux.HandleFunc("GET /evals", s.page(s.evalsPage))
	mux.HandleFunc("GET /evals/{id}", s.page(s.evalPage))
	// What the page reads and does goes through the HTTP API (/v1, package httpapi), with the
	// session as the identity (v1.go). The /api/ routes left are what /v1 does not serve, each
	// saying why in docs/console.md: the runs page's rows (with each run's cost), a run as its
	// page draws it and its live snapshots, the reviews a viewer may read with who may decide
	// them, and the graph of an edited definition.
	mux.Handle(httpapi.Prefix, s.serveV1())
	mux.HandleFunc("GET /api/runs", s.api(s.apiRuns))
	mux.HandleFunc("GET /api/runs/{id}", s.api(s.apiRun))
	mux.HandleFunc("GET /api/runs/{id}/events", s.api(s.apiEvents))
	// AG-UI (agui.go): POST too, as AG-UI's HttpAgent sends it; it only reads.
	mux.HandleFunc("GET /runs/{id}/agui", s.api(s.agui))
	mux.HandleFunc("POST /runs/{id}/agui", s.api(s.agui))
	mux.HandleFunc("GET /api/reviews", s.api(s.apiReviews))
	mux.HandleFunc("POST /api/graph", s.guard(s.apiGraph))
	mux.HandleFunc("/", s.notFound)
	// Pages and JSON are compressed (a 100-step run page is 75 KB of HTML, 9 KB gzipped); the
	// event stream is not, so each snapshot leaves at once.
	zipped := gzhttp.GzipHandler(mux)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/events") {
			mux.ServeHTTP(w, r)
			return
		}
		zipped.ServeHTTP(w, r)
	})
	return auth.HostGuard(s.o.AllowedHosts, "--allowed-host", securityHeaders(h))
}

// securityHeaders: no framing, no sniffing, and a policy that runs only the console's own script.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		next.ServeHTTP(w, r)
	})
}
