package starter

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/activities/toolspec"
)

func newToolsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools [NAME]",
		Short: "List the tools steps can use, or show one tool's input and output schemas",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				s, ok := toolspec.Lookup(args[0])
				if !ok {
					return invalid(fmt.Errorf("unknown tool %q (see `weft tools`)", args[0]))
				}
				var schema any
				if err := json.Unmarshal([]byte(s.InputJSON()), &schema); err != nil {
					return err
				}
				return writeJSON(out, map[string]any{"name": s.Name, "kind": s.Kind, "domain": s.Domain,
					"description": s.Description, "annotations": s.Annotations, "inputSchema": schema, "outputSchema": s.OutputSchema()})
			}
			if asJSON {
				type row struct {
					Name        string        `json:"name"`
					Kind        toolspec.Kind `json:"kind"`
					Domain      string        `json:"domain"`
					Description string        `json:"description"`
				}
				var rows []row
				for _, s := range toolspec.All() {
					rows = append(rows, row{s.Name, s.Kind, s.Domain, s.Description})
				}
				return writeJSON(out, rows)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOOL\tKIND\tDOMAIN\tTITLE")
			for _, s := range toolspec.All() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Kind, s.Domain, s.Title)
			}
			return tw.Flush()
		},
	}
	jsonFlag(cmd, &asJSON, "print JSON")
	return cmd
}
