package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/weftworks/weft/auth"
)

const (
	sessionCookie = "weft_session"
	csrfHeader    = "X-CSRF-Token"
	// maxBody limits a request body: a workflow file (1 MiB) with room for JSON escaping.
	maxBody = 4 << 20
)

// sessionOf returns the request's session: the local one when nobody needs to log in, else the
// one its cookie names (nil when absent or expired).
func (s *Server) sessionOf(r *http.Request) *session {
	if !s.o.RequireLogin {
		return s.local
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[c.Value]
	if sess == nil || time.Now().After(sess.expires) {
		delete(s.sessions, c.Value)
		return nil
	}
	return sess
}

type handler func(w http.ResponseWriter, r *http.Request, sess *session)

// identity is the session's authenticated identity; ok is false for the operator on this machine.
func (sess *session) identity() (auth.Identity, bool) {
	return sess.who, sess.authenticated
}

// bind makes r's context carry the session's identity (auth.WithIdentity), from which the client
// package's operations take their caller: what a lookup suggests, who may cancel or retry
// (weftclient.Caller, CheckAct).
func (sess *session) bind(r *http.Request) *http.Request {
	if id, ok := sess.identity(); ok {
		return r.WithContext(auth.WithIdentity(r.Context(), id))
	}
	return r
}

// page serves an HTML page to a session, sending others to the login page.
func (s *Server) page(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := s.sessionOf(r)
		if sess == nil {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		h(w, sess.bind(r), sess)
	}
}

// api serves a read-only JSON endpoint to a session.
func (s *Server) api(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := s.sessionOf(r)
		if sess == nil {
			writeError(w, http.StatusUnauthorized, "log in first: open /login")
			return
		}
		h(w, sess.bind(r), sess)
	}
}

// guard serves a state-changing request: it needs a session, a same-origin request and the
// session's CSRF token in the X-CSRF-Token header.
func (s *Server) guard(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := s.sessionOf(r)
		if sess == nil {
			writeError(w, http.StatusUnauthorized, "log in first: open /login")
			return
		}
		if !sameOrigin(r) {
			writeError(w, http.StatusForbidden, "cross-origin request refused: use the console's own pages")
			return
		}
		if !auth.Equal(r.Header.Get(csrfHeader), sess.csrf) {
			writeError(w, http.StatusForbidden, "missing or wrong "+csrfHeader+": reload the page and try again")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h(w, sess.bind(r), sess)
	}
}

// sameOrigin refuses requests a browser marks as coming from another site, and those whose Origin
// names another host than the one served.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return false
		}
	}
	return true
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	if !s.o.RequireLogin {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.render(w, "login", pageData{Title: "Log in", Next: safeNext(r.URL.Query().Get("next"))}, http.StatusOK)
}

// login exchanges a key (from `weft mcp generate-key`, or WEFT_MCP_KEY) for a session cookie:
// HttpOnly, SameSite=Strict. The session is the key's identity: its name is what decisions and
// starts record, its roles what the person may do. Failed attempts are limited per client address.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !s.o.RequireLogin {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if !sameOrigin(r) {
		writeError(w, http.StatusForbidden, "cross-origin login refused")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	next := safeNext(r.FormValue("next"))
	var id auth.Identity
	known := false
	if s.o.Keys != nil {
		id, known = s.o.Keys.Identify(r.FormValue("key"))
	}
	if !known {
		msg := "that key is not valid here: use a key from `weft mcp generate-key --name NAME --role ROLE`"
		if wait, ok := s.limiter.Fail(auth.ClientAddress(r), time.Now()); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+0.999)))
			s.render(w, "login", pageData{Title: "Log in", Next: next, Error: "too many failed attempts from this address: wait a moment"}, http.StatusTooManyRequests)
			return
		}
		s.render(w, "login", pageData{Title: "Log in", Next: next, Error: msg}, http.StatusUnauthorized)
		return
	}
	if !id.Has(auth.RoleReader) {
		s.render(w, "login", pageData{Title: "Log in", Next: next, Error: id.Refusal("the console", auth.RoleReader) +
			" (routing roles such as finance only say which reviews a reviewer may decide)"}, http.StatusForbidden)
		return
	}
	sess := &session{id: randomHex(32), csrf: randomHex(24), name: id.Name, who: id, authenticated: true, expires: time.Now().Add(SessionLifetime)}
	s.mu.Lock()
	for id, old := range s.sessions {
		if time.Now().After(old.expires) {
			delete(s.sessions, id)
		}
	}
	s.sessions[sess.id] = sess
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sess.id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, Expires: sess.expires})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, _ *http.Request, sess *session) {
	s.mu.Lock()
	delete(s.sessions, sess.id)
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	writeJSON(w, http.StatusOK, map[string]string{"next": "/login"})
}

// safeNext keeps redirects on this site.
func safeNext(n string) string {
	if !strings.HasPrefix(n, "/") || strings.HasPrefix(n, "//") || strings.HasPrefix(n, "/\\") {
		return "/"
	}
	return n
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
