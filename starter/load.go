package starter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/weftworks/weft/internal/vaipkg"
	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/workflows/dsl"
)

// workflowSource is a workflow's name (for messages), its text, and, for an installed vai
// package's workflow, why it is vai's (vaipkg.Manifest.VaiDialect: it is read in vai's dialect).
type workflowSource struct {
	name string
	data []byte
	vai  string
}

// load compiles the workflow, as weft install read it when it is a package's.
func (s workflowSource) load() (*dsl.Workflow, error) {
	return vaipkg.LoadWorkflow(s.name, s.data, s.vai)
}

// readWorkflow returns the bytes of a workflow file, or of a built-in template by name, or of an
// installed workflow package's workflow by package name, in that order.
func readWorkflow(arg string) (name string, data []byte, err error) {
	src, err := readWorkflowSource(arg)
	return src.name, src.data, err
}

// readWorkflowSource is readWorkflow saying, of an installed package's workflow, whether the
// package is vai's.
func readWorkflowSource(arg string) (workflowSource, error) {
	st, statErr := os.Stat(arg)
	if statErr == nil {
		if st.IsDir() {
			return workflowSource{}, invalid(fmt.Errorf("%s is a directory; give a workflow file", arg))
		}
		data, err := dsl.ReadFile(arg)
		if err != nil {
			return workflowSource{}, invalid(err)
		}
		return workflowSource{name: arg, data: data}, nil
	}
	if t, err := templates.Get(arg); err == nil {
		return workflowSource{name: t.Name, data: t.Data}, nil
	}
	// then an installed workflow package (weft install): a file or template of the same name wins
	if src, ok, err := readPackageWorkflow(arg); ok || err != nil {
		if err != nil {
			return workflowSource{}, invalid(err)
		}
		return src, nil
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		return workflowSource{}, invalid(fmt.Errorf("%s: no such file and no built-in template of that name, nor an installed package (see `weft list`, `weft list --packages`)", arg))
	}
	return workflowSource{}, invalid(fmt.Errorf("reading %s: %w", arg, statErr))
}

// loadWorkflow reads and compiles a workflow; invalid files give an ExitInvalid error.
func loadWorkflow(arg string) (*dsl.Workflow, error) {
	src, err := readWorkflowSource(arg)
	if err != nil {
		return nil, err
	}
	w, err := src.load()
	if err != nil {
		return nil, invalid(err)
	}
	return w, nil
}
