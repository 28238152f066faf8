package starter

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"google.golang.org/protobuf/types/known/structpb"
)

// renderOutput prints a run's output the way the file's formatters ask (vai's field):
// table renders an array (the arrayField of the output, or the output itself) as rows; markdown
// and text print text as it is; json (the default) prints JSON.
func renderOutput(w io.Writer, formatters map[string]any, out *structpb.Value) error {
	kind, _ := formatters["default"].(string)
	v := out.AsInterface()
	if title, _ := formatters["title"].(string); title != "" && kind != "" && kind != "json" {
		fmt.Fprintf(w, "%s\n\n", title)
	}
	switch kind {
	case "table":
		field, _ := formatters["arrayField"].(string)
		rows, ok := tableRows(v, field)
		if !ok {
			break
		}
		var cols []string
		if fs, ok := formatters["fields"].([]any); ok {
			for _, f := range fs {
				cols = append(cols, fmt.Sprint(f))
			}
		}
		return writeTable(w, rows, cols)
	case "markdown", "text":
		if s, ok := textOf(v); ok {
			_, err := fmt.Fprintln(w, strings.TrimRight(s, "\n"))
			return err
		}
	}
	return writeProto(w, out)
}

// tableRows finds the rows of a table: the named field, the value itself when it is an array,
// else the output's first array field (in key order).
func tableRows(v any, field string) ([]any, bool) {
	if a, ok := v.([]any); ok {
		return a, true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if field != "" {
		a, ok := m[field].([]any)
		return a, ok
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if a, ok := m[k].([]any); ok {
			return a, true
		}
	}
	return nil, false
}

func writeTable(w io.Writer, rows []any, cols []string) error {
	if len(cols) == 0 {
		seen := map[string]bool{}
		for _, r := range rows {
			if m, ok := r.(map[string]any); ok {
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					if !seen[k] && len(cols) < 6 {
						seen[k] = true
						cols = append(cols, k)
					}
				}
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(cols) == 0 {
		fmt.Fprintln(tw, "#\tVALUE")
		for i, r := range rows {
			fmt.Fprintf(tw, "%d\t%s\n", i+1, cell(r))
		}
		return tw.Flush()
	}
	fmt.Fprintln(tw, "#\t"+strings.ToUpper(strings.Join(cols, "\t")))
	for i, r := range rows {
		m, _ := r.(map[string]any)
		cells := make([]string, len(cols))
		for j, c := range cols {
			cells[j] = cell(m[c])
		}
		fmt.Fprintf(tw, "%d\t%s\n", i+1, strings.Join(cells, "\t"))
	}
	if len(rows) == 0 {
		fmt.Fprintln(tw, "(no rows)")
	}
	return tw.Flush()
}

func cell(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		s = ""
	case string:
		s = x
	case float64:
		s = fmt.Sprintf("%.4g", x)
	default:
		b, _ := json.Marshal(x)
		s = string(b)
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

// textOf returns the text of an output: a string, or an object's only string field (or its
// "text", "markdown", "answer" or "summary" field).
func textOf(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case map[string]any:
		for _, k := range []string{"markdown", "text", "answer", "summary"} {
			if s, ok := x[k].(string); ok {
				return s, true
			}
		}
		var only string
		n := 0
		for _, e := range x {
			if s, ok := e.(string); ok {
				only = s
				n++
			}
		}
		if n == 1 {
			return only, true
		}
	}
	return "", false
}
