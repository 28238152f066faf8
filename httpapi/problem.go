package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	weftclient "github.com/weftworks/weft/client"
)

// ProblemBase is where the problem types are explained (docs/http.md, one heading each).
const ProblemBase = "https://github.com/weftworks/weft/blob/main/docs/http.md#"

// Problem is an error answer (RFC 9457 problem details, application/problem+json): Type names
// the kind of problem (a link to its explanation), Detail says what to do, Errors name the
// fields of the request that are wrong.
type Problem struct {
	Type   string       `json:"type" jsonschema:"the kind of problem: a link to where it is explained"`
	Title  string       `json:"title" jsonschema:"the kind of problem in words"`
	Status int          `json:"status" jsonschema:"the HTTP status code"`
	Detail string       `json:"detail" jsonschema:"what went wrong and what to do"`
	Errors []FieldError `json:"errors,omitempty" jsonschema:"the fields of the request that are wrong"`
}

// FieldError is one wrong field of a request.
type FieldError struct {
	Pointer string `json:"pointer" jsonschema:"the field: a JSON pointer into the body (/inputs/topic), or a parameter (?limit, {id})"`
	Detail  string `json:"detail" jsonschema:"what is wrong with it and what to send"`
}

func (p *Problem) Error() string { return p.Detail }

// The kinds of problem.
var (
	kindInvalid      = kind{"invalid-request", "The request is not valid", http.StatusBadRequest}
	kindUnauthorized = kind{"unauthorized", "No valid key", http.StatusUnauthorized}
	kindForbidden    = kind{"forbidden", "Not allowed", http.StatusForbidden}
	kindNotFound     = kind{"not-found", "Not found", http.StatusNotFound}
	kindConflict     = kind{"conflict", "The run is not in a state that allows this", http.StatusConflict}
	kindVersion      = kind{"version-conflict", "The workflow changed since the version the request started from", http.StatusConflict}
	kindTooLarge     = kind{"too-large", "The request body is too large", http.StatusRequestEntityTooLarge}
	kindTooMany      = kind{"too-many-requests", "Too many failed attempts", http.StatusTooManyRequests}
	kindUnavailable  = kind{"unavailable", "Temporal or the run does not answer", http.StatusServiceUnavailable}
)

type kind struct {
	slug, title string
	status      int
}

func (k kind) problem(detail string, errs ...FieldError) *Problem {
	return &Problem{Type: ProblemBase + k.slug, Title: k.title, Status: k.status, Detail: detail, Errors: errs}
}

// invalid is a 400 naming one field.
func invalid(pointer, detail string) *Problem {
	return kindInvalid.problem(detail, FieldError{Pointer: pointer, Detail: detail})
}

// problemOf maps what a client operation returned to its problem (client/errors.go's types).
func problemOf(err error) *Problem {
	var p *Problem
	var nf *weftclient.NotFoundError
	var re *weftclient.RefusedError
	var ar *weftclient.AlreadyRunningError
	var fe *weftclient.FinishedError
	var ie *weftclient.InvalidError
	var mb *http.MaxBytesError
	var bn *weftclient.BadWorkflowNameError
	var vc *weftclient.VersionConflictError
	var iw *weftclient.InvalidWorkflowError
	var vn *weftclient.VersionNotFoundError
	var tl *weftclient.ContentTooLargeError
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &mb):
		return tooLarge()
	case errors.As(err, &bn):
		return invalid("{name}", err.Error())
	case errors.As(err, &vc):
		return kindVersion.problem(err.Error(), FieldError{Pointer: "/base", Detail: fmt.Sprintf("send base %d, the current version, with content made from it", vc.Current.ID)})
	case errors.As(err, &iw):
		p := kindInvalid.problem(err.Error())
		for _, d := range iw.Check.Diagnostics.Errors() {
			p.Errors = append(p.Errors, FieldError{Pointer: "/content", Detail: d.String()})
		}
		return p
	case errors.As(err, &vn):
		return kindNotFound.problem(err.Error(), FieldError{Pointer: "{version}", Detail: err.Error()})
	case errors.As(err, &tl):
		return kindTooLarge.problem(err.Error(), FieldError{Pointer: "/content", Detail: err.Error()})
	case errors.Is(err, weftclient.ErrNoWorkflowsDir):
		return kindUnavailable.problem(err.Error())
	case errors.As(err, &nf):
		return kindNotFound.problem(err.Error())
	case errors.As(err, &re) && re.Access:
		return kindForbidden.problem(err.Error())
	case errors.As(err, &re), errors.As(err, &ar), errors.As(err, &fe):
		return kindConflict.problem(err.Error())
	case errors.As(err, &ie):
		return kindInvalid.problem(err.Error())
	}
	return kindUnavailable.problem(err.Error())
}

func tooLarge() *Problem {
	return kindTooLarge.problem("a request body may hold at most 4 MB: pass large values by reference (a URL, a stored document's id)")
}

// writeProblem answers with p as application/problem+json.
func writeProblem(w http.ResponseWriter, p *Problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}
