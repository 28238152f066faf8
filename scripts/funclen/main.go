package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the command: its exit code, 2 for a usage or read error, 1 for a function over -max.
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("funclen", flag.ContinueOnError)
	fl.SetOutput(stderr)
	n := fl.Int("n", 10, "list the `N` longest functions (0: none)")
	limit := fl.Int("max", 0, "exit 1 when a function is longer than `LINES` lines (0: no limit)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	dirs := fl.Args()
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	var all []funcLen
	for _, d := range dirs {
		fs, err := scan(d)
		if err != nil {
			fmt.Fprintf(stderr, "funclen: %v\n", err)
			return 2
		}
		all = append(all, fs...)
	}
	sortLongestFirst(all)
	for i := 0; i < *n && i < len(all); i++ {
		fmt.Fprintln(stdout, all[i])
	}
	if *limit <= 0 {
		return 0
	}
	over := 0
	for _, f := range all {
		if f.Lines > *limit {
			if over == 0 {
				fmt.Fprintf(stderr, "funclen: functions longer than %d lines (split each into named parts: a helper per step, or a type with methods):\n", *limit)
			}
			fmt.Fprintf(stderr, "  %s\n", f)
			over++
		}
	}
	if over > 0 {
		return 1
	}
	return 0
}

// funcLen is one function and its length in lines.
type funcLen struct {
	File  string
	Line  int
	Name  string
	Lines int
}

func (f funcLen) String() string { return fmt.Sprintf("%4d %s:%d %s", f.Lines, f.File, f.Line, f.Name) }

// sortLongestFirst sorts by length, longest first, then by file and line.
func sortLongestFirst(fs []funcLen) {
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].Lines != fs[j].Lines {
			return fs[i].Lines > fs[j].Lines
		}
		if fs[i].File != fs[j].File {
			return fs[i].File < fs[j].File
		}
		return fs[i].Line < fs[j].Line
	})
}

// scan measures the functions of the Go files under root, tests, generated files and skipped
// directories left out (see the package doc).
func scan(root string) ([]funcLen, error) {
	var out []funcLen
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && skipDir(name) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		out = append(out, measure(fset, f)...)
		return nil
	})
	return out, err
}

func skipDir(name string) bool {
	switch name {
	case "testdata", "vendor", "node_modules", "bin":
		return true
	}
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// measure is the length of each function declared in f, from its func keyword to its closing
// brace; a declaration without a body (assembly) is left out.
func measure(fset *token.FileSet, f *ast.File) []funcLen {
	var out []funcLen
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start := fset.Position(fd.Type.Func)
		end := fset.Position(fd.Body.Rbrace)
		out = append(out, funcLen{File: filepath.ToSlash(start.Filename), Line: start.Line, Name: funcName(fd), Lines: end.Line - start.Line + 1})
	}
	return out
}

// funcName is F for a function, (*T).M or T.M for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	switch x := t.(type) { // a generic receiver: T[K] or T[K, V]
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	recv := "?"
	if id, ok := t.(*ast.Ident); ok {
		recv = id.Name
	}
	if star != "" {
		return "(*" + recv + ")." + fd.Name.Name
	}
	return recv + "." + fd.Name.Name
}
