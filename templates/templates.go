// Package templates holds weft's built-in workflow files, embedded in the binary. `weft list`
// shows them and every command that takes a FILE also takes a template name.
package templates

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed workflows/*.json
var files embed.FS

// Template is one built-in workflow.
type Template struct {
	Name        string
	Description string
	Data        []byte
}

// All returns the built-in templates sorted by name.
func All() []Template {
	entries, err := fs.ReadDir(files, "workflows")
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []Template
	for _, e := range entries {
		data, err := files.ReadFile("workflows/" + e.Name())
		if err != nil {
			panic(err)
		}
		var head struct{ Description string }
		_ = json.Unmarshal(data, &head)
		out = append(out, Template{Name: strings.TrimSuffix(e.Name(), ".json"), Description: head.Description, Data: data})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Get returns the named template.
func Get(name string) (Template, error) {
	var names []string
	for _, t := range All() {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return Template{}, fmt.Errorf("no built-in template %q (built-ins: %s)", name, strings.Join(names, ", "))
}
