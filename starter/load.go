package starter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/workflows/dsl"
)

// readWorkflow returns the bytes of a workflow file, or of a built-in template by name.
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
	if errors.Is(statErr, fs.ErrNotExist) {
		return "", nil, invalid(fmt.Errorf("%s: no such file and no built-in template of that name (see `weft list`)", arg))
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
