package workflows_test

import (
	"io"
	"log/slog"

	"github.com/stretchr/testify/mock"
	tlog "go.temporal.io/sdk/log"

	"github.com/weftworks/weft/templates"
)

const mockAnything = mock.Anything

type templateFile struct {
	name string
	data []byte
}

func templatesDir() ([]templateFile, error) {
	var out []templateFile
	for _, t := range templates.All() {
		out = append(out, templateFile{t.Name, t.Data})
	}
	return out, nil
}

func quietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}
