package codeindex

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestWalkHonoursGitignore(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		".gitignore":             "build/\n*.gen.go\n/secret.py\n!keep.gen.go\n",
		"main.go":                "package main\n",
		"x.gen.go":               "package main\n",
		"keep.gen.go":            "package main\n",
		"secret.py":              "x = 1\n",
		"sub/secret.py":          "x = 1\n",
		"build/out.js":           "var a\n",
		"web/.gitignore":         "dist\n",
		"web/dist/app.js":        "var a\n",
		"web/src/app.ts":         "export const a = 1\n",
		"node_modules/m/i.js":    "var a\n",
		"README.md":              "# hi\n",
		"image.png":              "\x89PNG\x00\x00",
		"data.bin.go":            "package x\x00",
		"lib/Thing.java":         "class Thing {}\n",
		"notes.unknownextension": "text\n",
	}
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	res, err := Walk(root, WalkOptions{})
	require.NoError(t, err)
	var got []string
	for _, f := range res.Files {
		got = append(got, f.Path+":"+f.Language)
	}
	require.Equal(t, []string{"README.md:markdown", "keep.gen.go:go", "lib/Thing.java:java", "main.go:go", "sub/secret.py:python", "web/src/app.ts:typescript"}, got)

	res, err = Walk(root, WalkOptions{Languages: []string{"go"}, MaxFiles: 1})
	require.NoError(t, err)
	require.Len(t, res.Files, 1)
	require.True(t, res.Truncated)

	_, err = Walk(filepath.Join(root, "main.go"), WalkOptions{})
	require.ErrorContains(t, err, "give the directory")
}

func TestSplitAtDefinitions(t *testing.T) {
	goSrc := `package x

import "fmt"

// Hello greets.
func Hello(name string) string {
	return fmt.Sprint("hello ", name)
}

type Store struct {
	n int
}

func (s *Store) Add(n int) {
	s.n += n
}
`
	pySrc := `import os

@decorator
def load(path):
    return open(path).read()

class Reader:
    def read(self):
        return 1
`
	tsSrc := `import { x } from "y";

export interface Options {
  size: number;
}

export const run = async (o: Options) => {
  return o.size;
};

export default class Runner {
  go() {}
}
`
	tests := []struct {
		lang, src string
		want      []string // symbol@start-end
	}{
		{"go", goSrc, []string{"@1-4", "Hello@5-9", "Store@10-13", "Add@14-16"}},
		{"python", pySrc, []string{"@1-2", "load@3-6", "Reader@7-7", "read@8-9"}},
		{"typescript", tsSrc, []string{"@1-2", "Options@3-6", "run@7-10", "Runner@11-13"}},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			var got []string
			for _, c := range split(tt.lang, tt.src, 1<<20, 0) {
				got = append(got, fmt.Sprintf("%s@%d-%d", c.Symbol, c.StartLine, c.EndLine))
			}
			require.Equal(t, tt.want, got)
		})
	}
	// small neighbours merge; a long definition is cut into windows of whole lines that keep
	// its symbol and their own line numbers
	merged := Split("go", goSrc, 1000)
	require.Len(t, merged, 1)
	require.Equal(t, "Hello", merged[0].Symbol)
	long := "func Big() {\n" + strings.Repeat("\tx := 1\n", 50) + "}\n"
	parts := Split("go", long, 100)
	require.Greater(t, len(parts), 3)
	for i, p := range parts {
		require.Equal(t, "Big", p.Symbol)
		require.LessOrEqual(t, len(p.Text), 100)
		if i > 0 {
			require.Equal(t, parts[i-1].EndLine+1, p.StartLine)
		}
	}
	require.Equal(t, 52, parts[len(parts)-1].EndLine)
	// no boundaries: windows; one long line: cut by characters, never inside a character
	md := Split("markdown", strings.Repeat("é", 300), 101)
	require.Len(t, md, 6)
	for _, c := range md {
		require.True(t, utf8.ValidString(c.Text))
		require.Equal(t, 1, c.StartLine)
	}
}
