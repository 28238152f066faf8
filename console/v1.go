package console

import (
	"net/http"
	"strings"

	"github.com/weftworks/weft/auth"
)

// The console serves the HTTP API (package httpapi) at /v1/ to its own page: the same operations,
// answers and refusals a program gets with a key, with the login session as the identity. A
// state-changing request needs what every console action needs (guard): a same-origin request
// and the session's CSRF token in the X-CSRF-Token header.

// authenticateV1 is who sends a /v1 request: the session's identity (nil for the operator on
// this machine, when nobody logs in), or why it is refused: no session (401), a cross-site
// request or a missing or wrong CSRF token on an unsafe method (403).
func (s *Server) authenticateV1(r *http.Request) (*auth.Identity, *auth.Refusal) {
	sess := s.sessionOf(r)
	if sess == nil {
		return nil, &auth.Refusal{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "log in first: open /login"}
	}
	if !safeMethod(r.Method) {
		if !sameOrigin(r) {
			return nil, &auth.Refusal{Status: http.StatusForbidden, Code: "forbidden", Message: "cross-origin request refused: use the console's own pages"}
		}
		if !auth.Equal(r.Header.Get(csrfHeader), sess.csrf) {
			return nil, &auth.Refusal{Status: http.StatusForbidden, Code: "forbidden", Message: "missing or wrong " + csrfHeader + ": reload the page and try again"}
		}
	}
	if id, ok := sess.identity(); ok {
		return &id, nil
	}
	return nil, nil
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// serveV1 serves /v1. A decision or a cancel that went through (2xx), or a decision refused
// because the review waits no more (409: decided elsewhere, its run ended), makes the shared
// listing of the pending reviews be read again for the next poll, so the person sees the list as
// it is now; any other failure (a run that does not exist) changed nothing the listing holds.
func (s *Server) serveV1() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if safeMethod(r.Method) || !(strings.HasSuffix(r.URL.Path, "/reviews") || strings.HasSuffix(r.URL.Path, "/cancel")) {
			s.v1.ServeHTTP(w, r)
			return
		}
		rec := &statusOf{ResponseWriter: w, status: http.StatusOK}
		s.v1.ServeHTTP(rec, r)
		if rec.status < 300 || rec.status == http.StatusConflict {
			s.reviews.forget()
		}
	})
}

// statusOf keeps the status a handler answered.
type statusOf struct {
	http.ResponseWriter
	status int
}

func (w *statusOf) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
