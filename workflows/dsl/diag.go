package dsl

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weftworks/weft/internal/fuzzy"
)

// Severity of a diagnostic.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Diagnostic is one finding about a workflow file, printed as FILE:LINE:COL: where: what (hint).
type Diagnostic struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	Where    string   `json:"where,omitempty"`
	Message  string   `json:"message"`
	Hint     string   `json:"hint,omitempty"`
	Severity Severity `json:"severity"`
}

func (d Diagnostic) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: ", d.File, d.Line, d.Col)
	if d.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	if d.Where != "" {
		b.WriteString(d.Where + ": ")
	}
	b.WriteString(d.Message)
	if d.Hint != "" {
		b.WriteString(" (" + d.Hint + ")")
	}
	return b.String()
}

// Diagnostics is a list of findings; as an error it holds at least one error-severity entry.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	lines := make([]string, 0, len(ds))
	for _, d := range ds {
		lines = append(lines, d.String())
	}
	return strings.Join(lines, "\n")
}

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errors returns only the error-severity diagnostics.
func (ds Diagnostics) Errors() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == SeverityError {
			out = append(out, d)
		}
	}
	return out
}

// Warnings returns only the warnings.
func (ds Diagnostics) Warnings() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == SeverityWarning {
			out = append(out, d)
		}
	}
	return out
}

// sorted orders by position, then message, and drops exact duplicates.
func (ds Diagnostics) sorted() Diagnostics {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.Message < b.Message
	})
	out := ds[:0]
	for i, d := range ds {
		if i > 0 && d == ds[i-1] {
			continue
		}
		out = append(out, d)
	}
	return out
}

// suggest returns the candidate closest to s, if it is close enough to be a typo.
func suggest(s string, candidates []string) string { return fuzzy.Nearest(s, candidates) }

func didYouMean(s string, candidates []string) string {
	if m := suggest(s, candidates); m != "" {
		return fmt.Sprintf("did you mean %q?", m)
	}
	return ""
}
