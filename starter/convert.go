package starter

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/workflows/dsl"
)

func newConvertCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "convert FILE",
		Short: "Print a nodes+edges Flow file in weft's step format",
		Long: "Converts a Flow file (nodes + edges, prompt-template nodes) to the step format: each node\n" +
			"becomes a generate step, {{outputName}} references become step output references, edges\n" +
			"become dependsOn and edge conditions become step conditions; a numeric path segment (x.0, as\n" +
			"weft run reads it) is written as an index (x[0]). The result is validated as weft run validates\n" +
			"the Flow file, and its warnings are printed: a read of a field a node's output does not have\n" +
			"(generate gives text, model and usage) is null when run, and an error in the printed file.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, data, err := readWorkflow(args[0])
			if err != nil {
				return err
			}
			def, err := dsl.ConvertFlow(name, data)
			if err != nil {
				return invalid(err)
			}
			// weft run reads a path segment written as a number (x.0) as vai does, an index; the
			// file printed here spells it as weft does (x[0]), so it validates as weft's own.
			def, rewrote, err := dsl.IndexesInBrackets(def)
			if err != nil {
				return err
			}
			// what weft run accepts of the Flow file, convert accepts: the Flow file is compiled as
			// run compiles it (reads of a field a node's output does not have are warnings there,
			// null when run); the file printed is weft's own, where they are errors, so say them.
			w, err := dsl.Load(name, data)
			if err != nil {
				return invalid(err)
			}
			for _, d := range w.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), d.String())
			}
			if rewrote {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: numeric path segments (x.0, vai's spelling) are written as indexes (x[0]), weft's; weft run reads either")
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(def); err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(buf.Bytes())
			return err
		},
	}
}
