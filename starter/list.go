package starter

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/workflows/dsl"
)

func newListCommand() *cobra.Command {
	var asJSON, packages bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in workflow templates",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if packages {
				return listPackages(cmd, asJSON)
			}
			type entry struct {
				Name        string               `json:"name"`
				Description string               `json:"description"`
				Inputs      map[string]dsl.Input `json:"inputs"`
			}
			var entries []entry
			for _, t := range templates.All() {
				w, err := dsl.Load(t.Name, t.Data)
				if err != nil {
					return fmt.Errorf("built-in template %s is invalid: %w", t.Name, err)
				}
				entries = append(entries, entry{t.Name, t.Description, w.Def.Inputs})
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), entries)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "Built-in workflow templates:")
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			for _, e := range entries {
				fmt.Fprintf(tw, "  %s\t%s\n", e.Name, e.Description)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(out, "\nShow one: weft plan NAME (its inputs, steps and calls); run one: weft run NAME")
			return nil
		},
	}
	jsonFlag(cmd, &asJSON, "print JSON")
	cmd.Flags().BoolVar(&packages, "packages", false, "list the installed workflow packages (weft install) instead: name, version, tier, description")
	return cmd
}
