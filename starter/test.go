package starter

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/fixtures"
)

// `weft test` is a thin command over package fixtures (the fixture runner): one line per
// fixture, the count, and the exit status.
func newTestCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "test FIXTURE|DIR...",
		Short: "Run workflow files on the real interpreter with mocked tool outputs",
		Long: "Each fixture (*.test.json) names a workflow (a path, a template name, or by default the\n" +
			"part of its file name before the first dot: multi-collection-search.basic.test.json runs\n" +
			"multi-collection-search), inputs, mocks {tool: output} ({\"$error\": \"msg\"} makes the tool fail),\n" +
			"reviews {step: {decision, data, reviewer, comment}} and expectations: steps {id: {status}},\n" +
			"output (objects match when every expected key matches), noErrors, or error (a substring).\n" +
			"Pure local tools (chunk, estimate, explain, models: no network, no store) run for real when\n" +
			"not mocked, and the case's line says which did; every other tool needs a mock.\n" +
			"A mock or review key that names no step (or, for mocks, no tool), a typo'd key in a\n" +
			"decision or a mock, a mock the tool could never return (a field its output does not have,\n" +
			"a value of the wrong type), and a fixture field that is unknown or of the wrong type fail\n" +
			"the case before it runs, with their line and a did-you-mean.\n" +
			"Prints one line per case and `N passed, N failed`; exit 1 if any failed.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := fixtures.Files(args)
			if err != nil {
				return invalid(err)
			}
			out := cmd.OutOrStdout()
			passed, failed := 0, 0
			for _, f := range files {
				r := fixtures.RunFile(f)
				ran := ""
				if len(r.Real) > 0 {
					ran = " (ran for real, unmocked: " + strings.Join(r.Real, ", ") + ")"
				}
				if r.Passed() {
					passed++
					fmt.Fprintf(out, "✔ %s%s\n", r.Name, ran)
					for _, w := range r.Warnings {
						fmt.Fprintf(out, "    %s\n", w)
					}
					continue
				}
				failed++
				fmt.Fprintf(out, "✗ %s%s\n", r.Name, ran)
				for _, p := range append(r.Problems, r.Warnings...) {
					fmt.Fprintf(out, "    %s\n", p)
				}
			}
			fmt.Fprintf(out, "%d passed, %d failed\n", passed, failed)
			if failed > 0 {
				return &ExitError{Code: ExitFailed, Silent: true}
			}
			return nil
		},
	}
}
