package starter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/workflows/dsl"
)

// readWorkflow returns the bytes of a workflow file, or of a built-in template by name, or of an
// installed workflow package's workflow by package name, in that order.
func readWorkflow(arg string) (name string, data []byte, err error) {
	st, statErr := os.Stat(arg)
	if statErr == nil {
		if st.IsDir() {
			return "", nil, invalid(fmt.Errorf("%s is a directory; give a workflow file", arg))
		}
		data, err := dsl.ReadFile(arg)
		if err != nil {
			return "", nil, invalid(err)
		}
		return arg, data, nil
	}
	if t, err := templates.Get(arg); err == nil {
		return t.Name, t.Data, nil
	}
	// then an installed workflow package (weft install): a file or template of the same name wins
	if name, data, ok, err := readPackageWorkflow(arg); ok || err != nil {
		if err != nil {
			return "", nil, invalid(err)
		}
		return name, data, nil
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		return "", nil, invalid(fmt.Errorf("%s: no such file and no built-in template of that name, nor an installed package (see `weft list`, `weft list --packages`)", arg))
	}
	return "", nil, invalid(fmt.Errorf("reading %s: %w", arg, statErr))
}

// loadWorkflow reads and compiles a workflow; invalid files give an ExitInvalid error.
func loadWorkflow(arg string) (*dsl.Workflow, error) {
	name, data, err := readWorkflow(arg)
	if err != nil {
		return nil, err
	}
	w, err := dsl.Load(name, data)
	if err != nil {
		return nil, invalid(err)
	}
	return w, nil
}
