package layers_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/weftworks/weft"

// floors maps a package directory (relative to the module root, "." for the root) or a directory
// prefix ending in "/" to its floor. The longest match wins.
var floors = map[string]int{
	"internal/english":           0,
	"internal/fuzzy":             0,
	"internal/netaddr":           0,
	"internal/safefile":          0,
	"internal/docread":           0,
	"internal/wirejson":          0,
	"proto/":                     0,
	"templates":                  0,
	"workflows/expr":             0,
	"activities/toolspec":        0,
	"tracing":                    0,
	"internal/testkit/fakellm":   0,
	"internal/testkit/fakeembed": 0,

	"activities/":      1,
	"events":           1,
	"internal/webhook": 1,
	"auth":             1,
	"codec":            1,
	"metrics":          1,
	"devdb":            1,
	"devserver":        1,

	"workflows/dsl":       2,
	"workflows/datatools": 2,
	"activities":          2,

	"runwire": 3,

	"workflows": 4,

	"client":                      5,
	"worker":                      5,
	"internal/vaipkg":             5,
	"internal/vaipkg/":            5,
	"eval/report":                 5,
	"fixtures":                    5,
	"internal/testkit/reviewfake": 5,

	"mcp":     6,
	"httpapi": 6,
	"eval":    6,

	"console": 7,
	".":       7,

	"starter": 8,

	"internal/ops/": 9,

	"internal/layers": 10,
	"cmd/":            10,
	"examples/":       10,
	"integration":     10,
	"scripts/":        10,
}

func floorOf(dir string) (int, bool) {
	if f, ok := floors[dir]; ok {
		return f, true
	}
	best, floor := "", 0
	for prefix, f := range floors {
		if strings.HasSuffix(prefix, "/") && strings.HasPrefix(dir, prefix) && len(prefix) > len(best) {
			best, floor = prefix, f
		}
	}
	return floor, best != ""
}

// pkg is one directory's imports, split by whether a test file or the package itself has them.
type pkg struct {
	imports     map[string]bool // module-relative dirs and external paths of non-test files
	testImports map[string]bool
}

func readTree(t *testing.T, root string) map[string]*pkg {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		p := pkgs[rel]
		if p == nil {
			p = &pkg{imports: map[string]bool{}, testImports: map[string]bool{}}
			pkgs[rel] = p
		}
		for _, imp := range f.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if ip == module {
				ip = "."
			} else if strings.HasPrefix(ip, module+"/") {
				ip = strings.TrimPrefix(ip, module+"/")
			}
			if strings.HasSuffix(name, "_test.go") {
				p.testImports[ip] = true
			} else {
				p.imports[ip] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	return pkgs
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func isOwn(pkgs map[string]*pkg, ip string) bool { _, ok := pkgs[ip]; return ok }

// TestFloors: every package has a floor, and each import goes down (or stays on the floor within
// the importer's own directory).
func TestFloors(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	pkgs := readTree(t, root)
	require.Contains(t, pkgs, "workflows", "the tree was not read from the module root")
	dirs := sortedKeys(func() map[string]bool {
		m := map[string]bool{}
		for d := range pkgs {
			m[d] = true
		}
		return m
	}())
	var problems []string
	for _, dir := range dirs {
		floor, ok := floorOf(dir)
		if !ok {
			problems = append(problems, dir+": has no floor; add it to floors in internal/layers/layers_test.go")
			continue
		}
		for _, ip := range sortedKeys(pkgs[dir].imports) {
			if !isOwn(pkgs, ip) {
				continue
			}
			to, ok := floorOf(ip)
			if !ok {
				continue // reported as its own line
			}
			sameFamily := strings.HasPrefix(ip, dir+"/") || (dir != "." && strings.HasPrefix(ip, filepath.ToSlash(filepath.Dir(dir))+"/") && floor == to)
			if to > floor || (to == floor && !sameFamily) {
				problems = append(problems, dir+" (floor "+strconv.Itoa(floor)+") imports "+ip+" (floor "+strconv.Itoa(to)+"): move the shared part down, or the importer up")
			}
		}
	}
	require.Empty(t, problems, strings.Join(problems, "\n"))
}

// TestTestKitOnlyInTests: the fakes are for tests and the ops harnesses, never linked into weft.
func TestTestKitOnlyInTests(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	pkgs := readTree(t, root)
	var problems []string
	for _, dir := range sortedKeys(keysOf(pkgs)) {
		if strings.HasPrefix(dir, "internal/testkit/") || strings.HasPrefix(dir, "internal/ops/") {
			continue
		}
		for _, ip := range sortedKeys(pkgs[dir].imports) {
			if strings.HasPrefix(ip, "internal/testkit/") {
				problems = append(problems, dir+" imports "+ip+" outside a test file")
			}
		}
	}
	require.Empty(t, problems, strings.Join(problems, "\n"))
}

// TestNoWorkflowSDKBelowTheInterpreter: activities never link Temporal's workflow package or the
// interpreter; the clients under activities/ and the leaf utilities under internal/ link no
// Temporal at all (codec, metrics and tracing are Temporal adapters by design).
func TestNoWorkflowSDKBelowTheInterpreter(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	pkgs := readTree(t, root)
	var problems []string
	for _, dir := range sortedKeys(keysOf(pkgs)) {
		floor, _ := floorOf(dir)
		activity := dir == "activities" || strings.HasPrefix(dir, "activities/")
		for _, ip := range sortedKeys(pkgs[dir].imports) {
			switch {
			case activity && (ip == "go.temporal.io/sdk/workflow" || ip == "workflows" || strings.HasPrefix(ip, "workflows/")):
				problems = append(problems, dir+" imports "+ip+": activities never import the interpreter or the workflow SDK")
			case floor <= 1 && (strings.HasPrefix(dir, "activities/") || strings.HasPrefix(dir, "internal/")) && strings.HasPrefix(ip, "go.temporal.io/"):
				problems = append(problems, dir+" imports "+ip+": the clients (providers, store) and the leaf utilities do not link Temporal")
			}
		}
	}
	require.Empty(t, problems, strings.Join(problems, "\n"))
}

// protocolOnly are the packages that talk to runs without running them: they need the wire
// contract (runwire, proto), never the interpreter.
var protocolOnly = []string{"runwire", "client", "console", "mcp", "httpapi"}

// TestClientWithoutInterpreter: the client and the surfaces over it do not link the interpreter
// (package workflows) nor import Temporal's workflow package, directly or through another package
// of the module; what they share with a run lives in runwire. (The SDK's own interceptor package,
// which the client's Interceptors option names, links go.temporal.io/sdk/workflow inside the SDK:
// that is not checked here.)
func TestClientWithoutInterpreter(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	problems := interpreterPaths(readTree(t, root), protocolOnly)
	require.Empty(t, problems, strings.Join(problems, "\n"))
}

// interpreterPaths lists, for each of from, an import path that reaches the interpreter or the
// workflow SDK through the module's own packages (test files aside).
func interpreterPaths(pkgs map[string]*pkg, from []string) []string {
	var problems []string
	for _, start := range from {
		via := map[string]string{start: ""}
		queue := []string{start}
		for len(queue) > 0 {
			dir := queue[0]
			queue = queue[1:]
			p := pkgs[dir]
			if p == nil {
				continue
			}
			for _, ip := range sortedKeys(p.imports) {
				bad := ip == "workflows" || ip == "go.temporal.io/sdk/workflow"
				if _, seen := via[ip]; seen || (!bad && !isOwn(pkgs, ip)) {
					continue
				}
				via[ip] = dir
				if bad {
					chain := []string{ip}
					for d := dir; d != ""; d = via[d] {
						chain = append([]string{d}, chain...)
					}
					problems = append(problems, strings.Join(chain, " imports ")+
						": "+start+" must not link the interpreter: move what it needs into runwire")
					continue
				}
				queue = append(queue, ip)
			}
		}
	}
	return problems
}

// TestInterpreterPathsFails: the check above names the way in when a package reaches the
// interpreter, directly or through another package.
func TestInterpreterPathsFails(t *testing.T) {
	pkgs := map[string]*pkg{
		"client":    {imports: map[string]bool{"runwire": true, "fixtures": true}},
		"runwire":   {imports: map[string]bool{"workflows/dsl": true}},
		"fixtures":  {imports: map[string]bool{"workflows": true}},
		"console":   {imports: map[string]bool{"go.temporal.io/sdk/workflow": true}},
		"mcp":       {imports: map[string]bool{"runwire": true, "go.temporal.io/sdk/client": true}},
		"workflows": {imports: map[string]bool{"runwire": true}},
	}
	for _, p := range pkgs {
		p.testImports = map[string]bool{}
	}
	require.Equal(t, []string{
		"client imports fixtures imports workflows: client must not link the interpreter: move what it needs into runwire",
		"console imports go.temporal.io/sdk/workflow: console must not link the interpreter: move what it needs into runwire",
	}, interpreterPaths(pkgs, []string{"client", "console", "mcp", "runwire"}))
}

func keysOf(pkgs map[string]*pkg) map[string]bool {
	m := map[string]bool{}
	for d := range pkgs {
		m[d] = true
	}
	return m
}

// starterInterpreterImports are the CLI's imports that link the interpreter (package workflows),
// each with why it must: the CLI is the program that runs fixtures and workers, not a client of
// runs alone. Any other starter import that reaches the interpreter fails TestStarterLinksInterpreterOnlyThese.
var starterInterpreterImports = map[string]string{
	"fixtures": "weft test runs a workflow's fixtures in the process, through the interpreter on Temporal's test environment",
	"worker":   "weft worker and weft dev run the worker, which registers the interpreter and the activities",
}

// reachesInterpreter lists the module packages imported by from (test files aside) whose imports
// link the interpreter (package workflows) or Temporal's workflow package, the import itself
// included, sorted.
func reachesInterpreter(pkgs map[string]*pkg, from string) []string {
	var through []string
	p := pkgs[from]
	if p == nil {
		return nil
	}
	for _, start := range sortedKeys(p.imports) {
		if start == "workflows" || start == "go.temporal.io/sdk/workflow" {
			through = append(through, start)
			continue
		}
		if !isOwn(pkgs, start) {
			continue
		}
		seen := map[string]bool{start: true}
		queue := []string{start}
		for len(queue) > 0 && !seen["workflows"] && !seen["go.temporal.io/sdk/workflow"] {
			dir := queue[0]
			queue = queue[1:]
			for _, ip := range sortedKeys(pkgs[dir].imports) {
				if seen[ip] {
					continue
				}
				if ip == "workflows" || ip == "go.temporal.io/sdk/workflow" {
					seen[ip] = true
					break
				}
				if isOwn(pkgs, ip) {
					seen[ip] = true
					queue = append(queue, ip)
				}
			}
		}
		if seen["workflows"] || seen["go.temporal.io/sdk/workflow"] {
			through = append(through, start)
		}
	}
	return through
}

// TestStarterLinksInterpreterOnlyThese: the CLI (starter, floor 8) links the interpreter, which
// is allowed and necessary, through the imports named in starterInterpreterImports and no other:
// the rest of the CLI is a client of runs like the surfaces, and a new way in is either a
// command that runs workflows in the process (add it there, saying why) or a client-side need
// that belongs in runwire or the client.
func TestStarterLinksInterpreterOnlyThese(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	allowed := sortedKeys(func() map[string]bool {
		m := map[string]bool{}
		for k := range starterInterpreterImports {
			m[k] = true
		}
		return m
	}())
	require.Equal(t, allowed, reachesInterpreter(readTree(t, root), "starter"),
		"the starter imports that link the interpreter changed: a new one is named with its reason in starterInterpreterImports (internal/layers/layers_test.go, docs/maintainers.md's Layout) or moves what it needs into runwire or the client; one no longer there is removed from both")
}

// TestReachesInterpreterFails: a starter import that links the interpreter, directly or through
// another package, is named; one that does not is not.
func TestReachesInterpreterFails(t *testing.T) {
	pkgs := map[string]*pkg{
		"starter":       {imports: map[string]bool{"client": true, "fixtures": true, "worker": true, "eval": true, "workflows/dsl": true}},
		"client":        {imports: map[string]bool{"runwire": true}},
		"fixtures":      {imports: map[string]bool{"workflows": true}},
		"worker":        {imports: map[string]bool{"workflows/dsl": true, "go.temporal.io/sdk/workflow": true}},
		"eval":          {imports: map[string]bool{"client": true, "fixtures": true}},
		"runwire":       {imports: map[string]bool{"workflows/dsl": true}},
		"workflows":     {imports: map[string]bool{"runwire": true}},
		"workflows/dsl": {imports: map[string]bool{}},
	}
	require.Equal(t, []string{"eval", "fixtures", "worker"}, reachesInterpreter(pkgs, "starter"))
}
