package toolspec

import (
	"reflect"
	"slices"
	"strings"
)

// Content names the tool's input and output fields tagged weft:"content", in declaration order:
// the ones that carry what the tool works on (a prompt, a text to store, the documents to rank)
// and what it gives (the answer, the results), as opposed to its settings (a model, a limit) and
// its bookkeeping (a finish reason, a status text). The console's builder wires an edge drawn
// between two steps by them. A tool without a Go output type (workflow) has no output fields.
func (s *Spec) Content() (in, out []string) {
	return contentFields(s.In), contentFields(s.Out)
}

func contentFields(t reflect.Type) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for _, f := range reflect.VisibleFields(t) {
		name, ok := jsonName(f)
		if !ok || f.Anonymous {
			continue
		}
		if slices.Contains(strings.Split(f.Tag.Get("weft"), ","), "content") {
			out = append(out, name)
		}
	}
	return out
}
