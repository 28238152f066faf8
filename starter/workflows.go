package starter

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/safefile"
	"github.com/weftworks/weft/workflows/dsl"
)

// The saved versions of the operator's workflow files: thin commands over
// weftclient.WorkflowFiles, the operation PUT /v1/workflows/{name} and the console's builder call.

// workflowsDirFlag is the folder the workflows commands work in.
type workflowsDirFlag struct{ dir string }

func (f *workflowsDirFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "workflows-dir", "", "the operator's workflows folder (env WEFT_WORKFLOWS_DIR, default .): the one the gateway's --workflows-dir names")
}

func (f *workflowsDirFlag) files() *weftclient.WorkflowFiles {
	dir := f.dir
	if dir == "" {
		dir = envOr("WEFT_WORKFLOWS_DIR", ".")
	}
	return weftclient.NewWorkflowFiles(dir)
}

// author is who a save from the CLI is recorded as: WEFT_USER, else the OS user. It is a label,
// as a typed --reviewer is: the operator's shell is trusted with the folder anyway.
func author() string {
	if u := os.Getenv("WEFT_USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "operator"
}

// versionsError is err of a workflows command, exit 2 when it is the caller's input.
func versionsError(err error) error {
	var bn *weftclient.BadWorkflowNameError
	var vc *weftclient.VersionConflictError
	var iw *weftclient.InvalidWorkflowError
	var vn *weftclient.VersionNotFoundError
	var tl *weftclient.ContentTooLargeError
	if errors.As(err, &bn) || errors.As(err, &vc) || errors.As(err, &iw) || errors.As(err, &vn) || errors.As(err, &tl) ||
		weftclient.IsInvalid(err) || errors.Is(err, weftclient.ErrNoWorkflowsDir) {
		return invalid(err)
	}
	return err
}

func versionArg(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, invalid(fmt.Errorf("version %q: give a version's number (weft workflows versions NAME lists them)", s))
	}
	return n, nil
}

func newWorkflowsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflows save|versions|diff|restore",
		Short: "Save the operator's workflow files with versions (who, when, a diff) and restore them",
		Long: "A save writes a workflow file into the workflows folder (--workflows-dir, WEFT_WORKFLOWS_DIR) after\n" +
			"validating it, and records a version in .versions/NAME/ beside it: who (WEFT_USER, else the OS user),\n" +
			"when, its SHA-256 and a message. The same operation serves PUT /v1/workflows/{name} and the console's\n" +
			"builder, so every save is in one history; a restore is a new version with an old one's content.",
	}
	cmd.AddCommand(newWorkflowsSaveCommand(), newWorkflowsVersionsCommand(), newWorkflowsDiffCommand(), newWorkflowsRestoreCommand())
	return cmd
}

func printSaved(cmd *cobra.Command, res weftclient.SaveResult, asJSON bool) error {
	out := cmd.OutOrStdout()
	if asJSON {
		return writeJSON(out, res)
	}
	if !res.Created {
		fmt.Fprintf(out, "%s holds version %d already (by %s): nothing written.\n", res.File, res.Version.ID, res.Version.Who)
		return nil
	}
	fmt.Fprintf(out, "Saved %s as version %d (by %s).\n  see the change: weft workflows diff %s %d %d\n", res.File, res.Version.ID, res.Version.Who,
		res.Name, max(res.Version.Previous, 1), res.Version.ID)
	return nil
}

func newWorkflowsSaveCommand() *cobra.Command {
	var dir workflowsDirFlag
	var base int
	var message string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "save NAME FILE",
		Short: "Save FILE as the workflow NAME in the workflows folder, as a new version",
		Long: "Validates FILE and writes it as NAME.json in the workflows folder, recording a version by WEFT_USER\n" +
			"(else the OS user). With --base N the save is refused when the current version is not N (someone saved\n" +
			"since); without it the save is over whatever the current version is. A file that does not validate is\n" +
			"refused with its problems; saving what the file holds already writes nothing.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			content, err := safefile.Read(args[1], dsl.MaxFileSize, "workflow file")
			if err != nil {
				return invalid(err)
			}
			if !cmd.Flags().Changed("base") {
				base = weftclient.BaseCurrent
			} else if base < 0 {
				return invalid(fmt.Errorf("--base %d: give the version the file was made from (0 for a workflow never saved)", base))
			}
			res, err := dir.files().SaveWorkflow(cmd.Context(), args[0], content, base, author(), message)
			if err != nil {
				return versionsError(err)
			}
			return printSaved(cmd, res, asJSON)
		},
	}
	dir.register(cmd)
	cmd.Flags().IntVar(&base, "base", 0, "the version FILE was made from: refuse the save when the current version is another (default: no check)")
	cmd.Flags().StringVarP(&message, "message", "m", "", "what changed, in a few words")
	jsonFlag(cmd, &asJSON, "print the saved version as JSON (weftclient.SaveResult)")
	return cmd
}

func newWorkflowsVersionsCommand() *cobra.Command {
	var dir workflowsDirFlag
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "versions NAME",
		Short: "List the saved versions of workflow NAME, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			vs, err := dir.files().WorkflowVersions(args[0])
			if err != nil {
				return versionsError(err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, vs)
			}
			if len(vs) == 0 {
				fmt.Fprintf(out, "%s has no saved version: weft workflows save %s FILE makes version 1.\n", args[0], args[0])
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tWHEN\tWHO\tSIZE\tSHA256\tMESSAGE")
			for _, v := range vs {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\n", v.ID, v.When.Local().Format(time.DateTime), v.Who, v.Size, v.SHA256[:12], truncate(v.Message, 60))
			}
			return tw.Flush()
		},
	}
	dir.register(cmd)
	jsonFlag(cmd, &asJSON, "print the versions as JSON (id, who, when, sha256, message, size, previous)")
	return cmd
}

func newWorkflowsDiffCommand() *cobra.Command {
	var dir workflowsDirFlag
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "diff NAME A B",
		Short: "Show what changed in workflow NAME from version A to version B (a unified diff)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := versionArg(args[1])
			if err != nil {
				return err
			}
			b, err := versionArg(args[2])
			if err != nil {
				return err
			}
			diff, err := dir.files().DiffWorkflowVersions(args[0], a, b)
			if err != nil {
				return versionsError(err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, map[string]any{"name": args[0], "from": a, "to": b, "diff": diff})
			}
			if diff == "" {
				fmt.Fprintf(out, "Versions %d and %d of %s are the same.\n", a, b, args[0])
				return nil
			}
			_, err = out.Write(escapeControls([]byte(diff)))
			return err
		},
	}
	dir.register(cmd)
	jsonFlag(cmd, &asJSON, "print {name, from, to, diff} as JSON")
	return cmd
}

func newWorkflowsRestoreCommand() *cobra.Command {
	var dir workflowsDirFlag
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "restore NAME VERSION",
		Short: "Save an old version's content of workflow NAME as a new version",
		Long:  "History is never rewritten: the restore is a new version (by WEFT_USER, else the OS user) whose content is VERSION's.",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := versionArg(args[1])
			if err != nil {
				return err
			}
			res, err := dir.files().RestoreWorkflow(cmd.Context(), args[0], id, author())
			if err != nil {
				return versionsError(err)
			}
			return printSaved(cmd, res, asJSON)
		},
	}
	dir.register(cmd)
	jsonFlag(cmd, &asJSON, "print the new version as JSON (weftclient.SaveResult)")
	return cmd
}
