// Package starter is the `weft` command line (cobra): one file per command, each a constructor
// returning its *cobra.Command. Commands read and write through cmd.InOrStdin/OutOrStdout/ErrOrStderr
// so tests run the CLI in-process exactly as users type it (see cli_test.go).
//
// Exit codes: 0 success, 1 failure, 2 invalid input (bad workflow file or --input), 3 still
// running. cmd/weft/main.go is the only main; it holds no logic.
package starter
