package workflows_test

import (
	"github.com/stretchr/testify/mock"

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
