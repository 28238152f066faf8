package starter

import (
	"errors"
	"fmt"
	"regexp"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/english"
)

func newMemoryCommand() *cobra.Command {
	var db string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "memory list|forget SCOPE [ID]",
		Short: "List or forget what agents remembered (the remember and recall tools) in a scope",
		Long: "Long-term memory lives in the knowledge store (collection " + activities.MemoryCollection + ", MONGODB_URI or a\n" +
			"running weft dev's database). `list SCOPE` shows the facts, newest first; `forget SCOPE ID` forgets\n" +
			"one, `forget SCOPE` all of the scope. Nothing is remembered unless an agent is asked to.",
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			action, scope := args[0], args[1]
			if !scopeRE.MatchString(scope) {
				return invalid(fmt.Errorf("scope %q: use letters, digits and . _ : @ / - (up to 200), e.g. support:ana", scope))
			}
			tools := activities.NewTools(activities.ConfigFromEnv(envFromDev))
			if db == "" {
				db = settingOr("WEFT_DB", "weft")
			}
			out := cmd.OutOrStdout()
			switch action {
			case "list":
				if len(args) == 3 {
					return invalid(errors.New("list takes a scope only"))
				}
				list, err := tools.Memories(cmd.Context(), db, scope)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, list)
				}
				if len(list) == 0 {
					fmt.Fprintf(out, "Nothing remembered in %s (db %s).\n", scope, db)
					return nil
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tREMEMBERED\tTEXT")
				for _, m := range list {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", m.ID, m.RememberedAt, truncate(m.Text, 100))
				}
				return tw.Flush()
			case "forget":
				id := ""
				if len(args) == 3 {
					id = args[2]
				}
				n, err := tools.Forget(cmd.Context(), db, scope, id)
				var ie *activities.InputError
				if errors.As(err, &ie) {
					return invalid(err)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "Forgot %s in %s.\n", english.Count(int(n), "fact"), scope)
				return nil
			}
			return invalid(fmt.Errorf("%q: use list or forget", action))
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database (env WEFT_DB, default weft)")
	jsonFlag(cmd, &asJSON, "print JSON")
	return cmd
}

var scopeRE = regexp.MustCompile(toolspec.ScopePattern)
