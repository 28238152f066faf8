// Command funclen lists the longest functions of the module's Go code, longest first, and
// exits 1 when one is longer than -max lines: `make lint` runs it with -max 150, so that no
// function grows past what a reader takes in (split one that does into named parts).
//
//	go run ./scripts/funclen [-n 10] [-max 0] [dir ...]
//
// A function's length is its lines from the func keyword to its closing brace, doc comment not
// counted; methods are named (*T).M or T.M. It reads the .go files under each dir (default .),
// skipping tests (_test.go), generated files, testdata, vendor, node_modules, bin and
// directories starting with a dot. Function literals count toward the function they are in.
package main
