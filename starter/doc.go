// Package starter is the `weft` command line (cobra): one file per command, each a constructor
// returning its *cobra.Command, all under NewRootCommand; Main and Execute run it. Commands read
// and write through cmd.InOrStdin/OutOrStdout/ErrOrStderr so tests run the CLI in-process exactly
// as users type it (see cli_test.go).
//
// It is where the processes are wired: `weft worker` and `weft dev` read the provider settings
// (activities.ConfigFromEnv) and start worker/, `weft mcp` starts mcp/, `weft console` console/,
// and every command dials Temporal with the codec and tracing it reads from the environment.
// Operations on runs go through client/, never through Temporal directly. The engines are packages
// of their own and their commands thin: `weft test` is package fixtures (the interpreter in-process
// in the SDK's test environment), `weft eval` package eval. The embedded stack (Temporal's server,
// FerretDB) is not linked here: `weft dev`, `weft server` and `weft store` hand themselves over to
// weft-stack (stack.go).
//
// Exit codes: 0 success, 1 failure (and a run that ended without completing), 2 invalid input (bad
// workflow file or --input), 3 still running (stopped following a run that goes on). The mains,
// cmd/weft and cmd/weft-stack, hold no logic.
package starter
