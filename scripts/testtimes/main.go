package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

type testTime struct {
	name    string
	elapsed float64
}

type pkgState struct {
	output  []string            // package-level lines (no test): printed when the package fails
	tests   map[string][]string // each running test's lines, printed when it fails
	elapsed float64
	result  string
}

func main() {
	over := flag.Duration("over", 10*time.Second, "list tests that took longer than this")
	report := flag.String("report", "", "also write the timing table to this file")
	flag.Parse()
	failed, table, err := run(os.Stdin, os.Stdout, *over)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		os.Exit(2)
	}
	fmt.Print(table)
	if *report != "" {
		if err := os.WriteFile(*report, []byte(table), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testtimes: writing the report:", err)
			os.Exit(2)
		}
	}
	if failed {
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer, over time.Duration) (failed bool, table string, err error) {
	pkgs := map[string]*pkgState{}
	get := func(name string) *pkgState {
		p := pkgs[name]
		if p == nil {
			p = &pkgState{tests: map[string][]string{}}
			pkgs[name] = p
		}
		return p
	}
	var slow []testTime
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// go test writes build errors and the like as plain text: pass them through.
			fmt.Fprintln(out, string(line))
			if strings.HasPrefix(string(line), "FAIL") {
				failed = true
			}
			continue
		}
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output)
			continue
		case "build-fail":
			failed = true
			continue
		}
		if e.Package == "" {
			continue
		}
		p := get(e.Package)
		switch {
		case e.Action == "output" && e.Test != "":
			p.tests[e.Test] = append(p.tests[e.Test], e.Output)
		case e.Action == "output":
			p.output = append(p.output, e.Output)
		case e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			if e.Action == "fail" {
				for _, l := range p.tests[e.Test] {
					fmt.Fprint(out, l)
				}
			}
			if e.Action != "skip" && !strings.Contains(e.Test, "/") && e.Elapsed*float64(time.Second) > float64(over) {
				slow = append(slow, testTime{e.Package + " " + e.Test, e.Elapsed})
			}
			delete(p.tests, e.Test)
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			p.elapsed, p.result = e.Elapsed, e.Action
			switch e.Action {
			case "fail":
				failed = true
				// Tests that never ended (a panic, a timeout) are shown with the package.
				names := make([]string, 0, len(p.tests))
				for name := range p.tests {
					names = append(names, name)
				}
				sort.Strings(names)
				for _, name := range names {
					for _, l := range p.tests[name] {
						fmt.Fprint(out, l)
					}
				}
				for _, l := range p.output {
					fmt.Fprint(out, l)
				}
				fmt.Fprintf(out, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
			case "skip":
				fmt.Fprintf(out, "?   \t%s\t[no test files]\n", e.Package)
			default:
				fmt.Fprintf(out, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return true, "", fmt.Errorf("reading go test -json: %w", err)
	}
	return failed, timings(pkgs, slow, over), nil
}

func timings(pkgs map[string]*pkgState, slow []testTime, over time.Duration) string {
	var b strings.Builder
	var list []testTime
	var total float64
	for name, p := range pkgs {
		if p.result == "pass" || p.result == "fail" {
			list = append(list, testTime{name, p.elapsed})
			total += p.elapsed
		}
	}
	sort.Slice(list, func(i, j int) bool {
		return list[i].elapsed > list[j].elapsed || (list[i].elapsed == list[j].elapsed && list[i].name < list[j].name)
	})
	sort.Slice(slow, func(i, j int) bool {
		return slow[i].elapsed > slow[j].elapsed || (slow[i].elapsed == slow[j].elapsed && slow[i].name < slow[j].name)
	})
	fmt.Fprintf(&b, "test times: %d packages, %.0f s summed (packages run side by side, so the wall time is less)\n", len(list), total)
	for _, t := range list {
		if t.elapsed >= 1 {
			fmt.Fprintf(&b, "  %7.1f s  %s\n", t.elapsed, t.name)
		}
	}
	fmt.Fprintf(&b, "tests over %s: %d\n", over, len(slow))
	for _, t := range slow {
		fmt.Fprintf(&b, "  %7.1f s  %s\n", t.elapsed, t.name)
	}
	return b.String()
}
