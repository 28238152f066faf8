// Package layers holds the floor plan of weft's packages and the test that keeps it: every
// package has a floor, and a package imports only packages on lower floors (or, on its own
// floor, packages under its own directory). The floors, low to high:
//
//	0 leaf utilities and declarations: internal/{english,fuzzy,netaddr,safefile,wirejson}, proto,
//	  templates, workflows/expr, activities/toolspec, tracing, the test kit's HTTP fakes
//	1 clients and shared definitions, none of which imports Temporal's workflow package:
//	  the providers, the store, chunk/rank/codeindex, internal/webhook, auth, codec, metrics,
//	  devdb, devserver
//	2 the language (workflows/dsl, workflows/datatools) and the activities
//	3 the run's wire contract (runwire): names, statuses, review vocabulary, chat types
//	4 the interpreter (workflows)
//	5 the client, the worker, features built on them (internal/vaipkg, eval/report), the fixture
//	  runner (fixtures) and the test kit's Temporal fake
//	6 the surfaces mcp and httpapi; and the eval engine (eval), which runs cases through the client
//	7 the console, which serves httpapi's /v1 to its page with its login as the identity; and the
//	  Go API (the module's root)
//	8 the CLI (starter)
//	9 operations harnesses (internal/ops)
//	10 programs and whole-stack tests: cmd, examples, integration
//
// Three rules sit beside the floors: internal/testkit is imported only by tests and by
// internal/ops; activities never import go.temporal.io/sdk/workflow, and the clients under
// activities/ and the leaf utilities link no Temporal at all; runwire, the client and the
// surfaces over it (console, mcp, httpapi) never link the interpreter (workflows) nor import
// go.temporal.io/sdk/workflow, directly or through another package of the module.
//
// One named exception: the CLI (starter) links the interpreter, and must, through exactly two
// imports: fixtures (weft test runs a workflow's fixtures in the process, through the interpreter)
// and worker (weft worker and weft dev run the worker, which registers it). The rest of the CLI
// talks to runs through the client like the surfaces; TestStarterLinksInterpreterOnlyThese lists
// the starter imports that reach the interpreter and fails when one appears that is not named
// (with its reason) in starterInterpreterImports, or one named is gone.
//
// A new package gets its floor in layers_test.go, or the test fails naming it.
package layers
