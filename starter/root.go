package starter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/internal/vaipkg"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailed  = 1
	ExitInvalid = 2
	ExitRunning = 3
)

// ExitError carries the process exit code of a failed command. Silent errors have already
// been reported on the command's output.
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

func invalid(err error) error { return &ExitError{Code: ExitInvalid, Err: err} }

// NewRootCommand builds the weft command tree.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "weft",
		Short: "Durable AI/RAG workflows on Temporal",
		Long: "weft runs AI/RAG pipelines written as JSON workflow files durably on Temporal.\n" +
			"Start with `weft list` (built-in templates), `weft validate FILE` and `weft plan FILE`.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       CurrentBuild().String(),
	}
	root.AddCommand(
		newValidateCommand(),
		newPlanCommand(),
		newListCommand(),
		newInitCommand(),
		newConvertCommand(),
		newSchemaCommand(),
		newToolsCommand(),
		newTestCommand(),
		newEvalCommand(),
		newRunCommand(),
		newStatusCommand(),
		newWatchCommand(),
		newReviewCommand(),
		newReviewsCommand(),
		newRunsCommand(),
		newCancelCommand(),
		newHistoryCommand(),
		newWorkerCommand(),
		newDevCommand(),
		newIndexCommand(),
		newIngestCommand(),
		newMCPCommand(),
		newChatCommand(),
		newMemoryCommand(),
		newCodecServerCommand(),
		newRetryCommand(),
		newForkCommand(),
		newScheduleCommand(),
		newConsoleCommand(),
		newServerCommand(),
		newStoreCommand(),
		newPingCommand(),
		newInstallCommand(),
		newSearchCommand(),
		newCreateCommand(),
		newUninstallCommand(),
		newInfoCommand(),
		newCheckCommand(),
		newWorkflowsCommand(),
	)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return invalid(err) })
	markUsageErrors(root)
	return root
}

// markUsageErrors makes wrong argument counts exit with ExitInvalid like other bad input.
func markUsageErrors(cmd *cobra.Command) {
	if orig := cmd.Args; orig != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := orig(c, args); err != nil {
				return invalid(fmt.Errorf("%s: %w", c.CommandPath(), err))
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		markUsageErrors(sub)
	}
}

// Execute runs the CLI with args and returns the process exit code.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := NewRootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	flushTracing()
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if !ee.Silent && ee.Err != nil {
			fmt.Fprintln(stderr, "weft:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(stderr, "weft:", err)
	if strings.HasPrefix(err.Error(), "unknown command") {
		return ExitInvalid
	}
	return ExitFailed
}

// Main is what cmd/weft runs.
func Main() { os.Exit(Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// jsonFlag declares --json on cmd, the one spelling of the JSON output mode every command that
// has one shares: usage says what it prints (writeJSON, or writeJSONLine for a stream).
func jsonFlag(cmd *cobra.Command, p *bool, usage string) {
	cmd.Flags().BoolVar(p, "json", false, usage)
}

// writeJSON prints v as indented JSON, terminal-safe (escapeControls).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeControls(buf.Bytes()))
	return err
}

// writeJSONLine prints v as one line of JSON (a record of a stream), terminal-safe.
func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(escapeControls(b)))
	return err
}

// escapeControls rewrites encoded JSON so that no character a terminal acts on or draws
// reversed (vaipkg.Unsafe) is written raw. Text from files, packages and models reaches weft's
// JSON output; the encoder escapes the C0 controls, and this the rest (DEL, C1, bidi controls),
// which can only occur inside strings, so the output stays the same JSON.
func escapeControls(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, r := range string(b) {
		if r >= 0x7f && vaipkg.Unsafe(r) { // below DEL, the encoder has escaped what is in strings
			out = fmt.Appendf(out, `\u%04x`, r)
			continue
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}
