package starter

import (
	"github.com/spf13/cobra"

	"github.com/weftworks/weft/workflows/dsl"
)

func newSchemaCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of workflow files (point your editor's $schema at it)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(dsl.SchemaJSON())
			return err
		},
	}
}
