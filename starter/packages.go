package starter

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/internal/english"
	"github.com/weftworks/weft/internal/vaipkg"
	"github.com/weftworks/weft/workflows/dsl"
)

// packagesDir is where installed workflow packages live: WEFT_PACKAGES_DIR, else the project's
// .weft/packages (beside weft dev's data, ignored by git).
func packagesDir() string {
	if d := strings.TrimSpace(os.Getenv("WEFT_PACKAGES_DIR")); d != "" {
		return d
	}
	return filepath.Join(weftDir, "packages")
}

func packageStore() vaipkg.Store { return vaipkg.Store{Dir: packagesDir()} }

// readPackageWorkflow returns an installed package's workflow file, or ok false when arg names
// no installed package.
func readPackageWorkflow(arg string) (src workflowSource, ok bool, err error) {
	if vaipkg.CheckName(arg) != nil {
		return workflowSource{}, false, nil
	}
	st := packageStore()
	p, err := st.Get(arg)
	if errors.Is(err, vaipkg.ErrNotInstalled) {
		return workflowSource{}, false, nil
	}
	if err != nil {
		return workflowSource{}, false, err
	}
	name, data, err := st.Workflow(p.Name)
	if err != nil {
		return workflowSource{}, false, err
	}
	vai := p.VaiDialect()
	if vai != "" {
		// the text goes to the worker, which has nothing else to tell it the file is vai's
		data = vaipkg.MarkVai(data)
	}
	return workflowSource{name: name, data: data, vai: vai}, true, nil
}

func newInstallCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "install NAME[@VERSION|@TAG|@RANGE]|DIR|FILE.tgz",
		Short: "Install a vai workflow package (npm registry, directory or .tgz)",
		Long: "Installs a vai workflow package (vai-workflow-* or @vaicli/*: a package.json plus workflow.json)\n" +
			"so `weft run NAME` runs it. From the npm registry (WEFT_NPM_REGISTRY, else npm_config_registry,\n" +
			"else https://registry.npmjs.org: the latest version, or NAME@VERSION / NAME@TAG / NAME@RANGE such\n" +
			"as ^1.2.0, picked as npm picks it), checked against the registry's integrity hash; or from a\n" +
			"package directory or a .tgz. weft never runs npm or a package's scripts, refuses links, paths\n" +
			"leaving the package and oversized files, and installs only a package whose workflow is valid;\n" +
			"weft check's warnings and notes on it are printed to stderr.\n" +
			"Packages go to .weft/packages (WEFT_PACKAGES_DIR).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := packagesDir()
			if err := ignoreWeftDir(dir); err != nil {
				return err
			}
			p, err := packageStore().Install(cmd.Context(), args[0], vaipkg.Registry{URL: vaipkg.RegistryFromEnv()})
			if err != nil {
				return invalid(err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), p)
			}
			for _, w := range p.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			for _, f := range p.Findings { // weft check's warnings and notes, as vai prints them on install
				fmt.Fprintln(cmd.ErrOrStderr(), f.String())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed %s@%s (%s) in %s\nrun it: weft run %s; what it takes: weft info %s\n",
				p.Name, p.Version, p.Tier, p.Dir, p.Name, p.Name)
			return nil
		},
	}
	jsonFlag(cmd, &asJSON, "print the installed package as JSON")
	return cmd
}

func newSearchCommand() *cobra.Command {
	var (
		asJSON bool
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "search [QUERY...]",
		Short: "Search the npm registry for vai workflow packages",
		Long: "Searches the npm registry (WEFT_NPM_REGISTRY, else npm_config_registry, else\n" +
			"https://registry.npmjs.org) for workflow packages matching QUERY: vai's official ones (@vaicli/*)\n" +
			"first, then community ones (vai-workflow-*), with version, tier and description. Without QUERY\n" +
			"it lists what the registry has. Install one with weft install NAME.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 || limit > vaipkg.MaxSearchResults {
				return invalid(fmt.Errorf("--limit %d: give 1 to %d", limit, vaipkg.MaxSearchResults))
			}
			reg := vaipkg.Registry{URL: vaipkg.RegistryFromEnv()}
			query := strings.Join(args, " ")
			found, err := reg.Search(cmd.Context(), query, limit)
			if err != nil {
				return err
			}
			if asJSON {
				if found == nil {
					found = []vaipkg.SearchResult{}
				}
				return writeJSON(cmd.OutOrStdout(), found)
			}
			out := cmd.OutOrStdout()
			what := "workflow packages (@vaicli/*, vai-workflow-*)"
			if query != "" {
				what += fmt.Sprintf(" matching %q", query)
			}
			if len(found) == 0 {
				fmt.Fprintf(out, "No %s on %s\n", what, reg.URL)
				return nil
			}
			fmt.Fprintf(out, "%s on %s:\n", strings.ToUpper(what[:1])+what[1:], reg.URL)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			for _, p := range found {
				desc, _, _ := strings.Cut(p.Description, "\n")
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Name, p.Version, p.Tier, desc)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(out, "Install one: weft install NAME (weft check NAME after, to see its findings)")
			return nil
		},
	}
	jsonFlag(cmd, &asJSON, "print the packages found as JSON")
	cmd.Flags().IntVar(&limit, "limit", 20, fmt.Sprintf("the most packages to list (1-%d)", vaipkg.MaxSearchResults))
	return cmd
}

func newCreateCommand() *cobra.Command {
	var (
		from, output string
		o            vaipkg.CreateOptions
		asJSON       bool
	)
	cmd := &cobra.Command{
		Use:   "create --from FILE|TEMPLATE [--name NAME] [--output DIR]",
		Short: "Make a vai workflow package from a workflow file",
		Long: "Makes a package in vai's layout from a valid workflow file (or template, or installed package):\n" +
			"DIR/package.json (vai-workflow-NAME, version, description, keywords, author, license MIT, and the\n" +
			"\"vai\" field: workflowVersion 1.0, the category weft infers from the tools, the tools the steps use),\n" +
			"DIR/workflow.json (the file as written) and DIR/README.md (its inputs, steps and commands).\n" +
			"NAME defaults to the workflow's name, DIR to ./vai-workflow-NAME. The package is checked as\n" +
			"weft install reads it; nothing is published. Add a LICENSE file before you publish it (npm publish DIR).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return invalid(errors.New("--from FILE is required: the workflow file to package"))
			}
			name, data, err := readWorkflow(from)
			if err != nil {
				return invalid(err)
			}
			o.Dir = output
			c, err := vaipkg.Create(name, data, o)
			if err != nil {
				return invalid(err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), c)
			}
			for _, w := range c.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s in %s: %s (category %s; tools %s)\ncheck it: weft check %s; try it: weft install %s; publish it, with a LICENSE added: npm publish %s\n",
				c.Name, c.Dir, strings.Join(c.Files, ", "), c.Category, strings.Join(c.Tools, ", "), c.Dir, c.Dir, c.Dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the workflow file (or template, or installed package) to package")
	cmd.Flags().StringVar(&o.Name, "name", "", "the package's name without vai-workflow- (default: the workflow's name)")
	cmd.Flags().StringVar(&o.Author, "author", "", "package.json's author")
	cmd.Flags().StringVar(&o.Version, "version", "1.0.0", "package.json's version")
	cmd.Flags().StringVar(&output, "output", "", "the package's directory (default: ./vai-workflow-NAME)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "replace the package's files when the directory has them (a link at one of their names is refused, never followed)")
	jsonFlag(cmd, &asJSON, "print what was made as JSON")
	return cmd
}

func newUninstallCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "uninstall NAME",
		Short: "Remove an installed workflow package",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := packageStore().Uninstall(args[0])
			if err != nil {
				return invalid(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "uninstalled %s@%s\n", p.Name, p.Version)
			return nil
		},
	}
}

// listPackages prints the installed packages (weft list --packages).
func listPackages(cmd *cobra.Command, asJSON bool) error {
	ps, err := packageStore().List()
	if err != nil {
		return err
	}
	if asJSON {
		if ps == nil {
			ps = []*vaipkg.Package{}
		}
		return writeJSON(cmd.OutOrStdout(), ps)
	}
	out := cmd.OutOrStdout()
	if len(ps) == 0 {
		fmt.Fprintf(out, "No workflow packages installed in %s (weft install NAME|DIR|FILE.tgz adds one)\n", packagesDir())
		return nil
	}
	fmt.Fprintf(out, "Workflow packages in %s:\n", packagesDir())
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, p := range ps {
		desc, _, _ := strings.Cut(p.Description, "\n") // the first line: the table keeps one row a package
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Name, p.Version, p.Tier, desc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nShow one: weft info NAME; run one: weft run NAME")
	return nil
}

type packageInfo struct {
	*vaipkg.Package
	Workflow string               `json:"workflow"`
	Inputs   map[string]dsl.Input `json:"inputs"`
	Steps    []packageStep        `json:"steps"`
}

type packageStep struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	Tool string `json:"tool"`
}

func newInfoCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info NAME",
		Short: "Show an installed workflow package: metadata, inputs, steps and their tools",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st := packageStore()
			p, err := st.Get(args[0])
			if err != nil {
				return invalid(err)
			}
			file, data, err := st.Workflow(p.Name)
			if err != nil {
				return invalid(err)
			}
			w, err := vaipkg.LoadWorkflow(file, data, p.VaiDialect())
			if err != nil {
				return invalid(err)
			}
			info := packageInfo{Package: p, Workflow: w.Def.Name, Inputs: w.Def.Inputs, Steps: []packageStep{}}
			for _, s := range w.Def.Steps {
				info.Steps = append(info.Steps, packageStep{s.ID, s.Name, s.Tool})
			}
			if asJSON {
				// The data as written, not cleaned: programs get the exact text, with every
				// control and bidi control escaped (writeJSON), so none reaches a terminal raw.
				return writeJSON(cmd.OutOrStdout(), info)
			}
			printPackageInfo(cmd, info, w)
			return nil
		},
	}
	jsonFlag(cmd, &asJSON, "print JSON")
	return cmd
}

// printPackageInfo prints weft info's text. The package's text was cleaned where package.json was
// read; the workflow file's (names, descriptions, types, defaults, step ids and tools) is its
// author's too and is cleaned here, each string with vaipkg.Line: one line, no terminal controls.
func printPackageInfo(cmd *cobra.Command, info packageInfo, w *dsl.Workflow) {
	out := cmd.OutOrStdout()
	p := info.Package
	clean := vaipkg.Line
	fmt.Fprintf(out, "%s %s (%s)\n", p.Name, p.Version, p.Tier)
	if p.Description != "" {
		fmt.Fprintf(out, "  %s\n", strings.ReplaceAll(p.Description, "\n", "\n  "))
	}
	line := func(label, v string) {
		if v != "" {
			fmt.Fprintf(out, "  %-10s %s\n", label+":", v)
		}
	}
	line("author", p.Author)
	line("license", p.License)
	line("keywords", strings.Join(p.Keywords, ", "))
	var vai []string
	for _, kv := range [][2]string{{"workflowVersion", p.Vai.WorkflowVersion}, {"category", p.Vai.Category},
		{"tags", strings.Join(p.Vai.Tags, ", ")}, {"minVaiVersion", p.Vai.MinVaiVersion}, {"tools", strings.Join(p.Vai.Tools, ", ")}} {
		if kv[1] != "" {
			vai = append(vai, kv[0]+" "+kv[1])
		}
	}
	line("vai", strings.Join(vai, "; "))
	if len(p.Scripts) > 0 {
		line("scripts", strings.Join(p.Scripts, ", ")+" (never run)")
	}
	line("source", p.Source)
	line("integrity", p.Integrity)
	line("installed", p.Dir)
	fmt.Fprintf(out, "\nWorkflow %q", clean(info.Workflow))
	if d := clean(w.Def.Description); d != "" {
		fmt.Fprintf(out, ": %s", d)
	}
	fmt.Fprintln(out)
	names := make([]string, 0, len(info.Inputs))
	for n := range info.Inputs {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if len(names) > 0 {
		fmt.Fprintln(tw, "Inputs:")
		for _, n := range names {
			in := info.Inputs[n]
			var extra []string
			if in.Required {
				extra = append(extra, "required")
			}
			if in.Default != nil {
				// its strings cleaned first: json.Marshal escapes C0 controls but writes C1 and
				// bidi controls as they are
				d, _ := json.Marshal(vaipkg.CleanJSON(in.Default))
				extra = append(extra, "default "+string(d))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", clean(n), clean(in.Type), strings.Join(extra, ", "), clean(in.Description))
		}
	}
	fmt.Fprintln(tw, "Steps:")
	for i, s := range info.Steps {
		fmt.Fprintf(tw, "  %d. %s\t%s\t%s\n", i+1, clean(s.ID), clean(s.Tool), clean(s.Name))
	}
	_ = tw.Flush()
	fmt.Fprintf(out, "\nRun it: weft run %s; check it: weft check %s\n", p.Name, p.Name)
}

func newCheckCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check FILE|TEMPLATE|PACKAGE|DIR...",
		Short: "Security and quality checks on workflow files (vai's check)",
		Long: "Checks what `weft validate` does not: a step that writes to the knowledge store (ingest,\n" +
			"code_index, remember) with no review step before it, and an http step aimed at a literal\n" +
			"private, loopback or link-local address (or a code_index step cloning a repo from one), are\n" +
			"warnings; a workflow, step or input without a description is a note; an unknown tool or an\n" +
			"invalid file is an error. One line per finding:\n" +
			"FILE: severity: step \"ID\": what (what to change). Exit status 1 when an error is found, 0 otherwise.\n" +
			"A package directory (DIR with a package.json) is checked as weft install would read it: what install\n" +
			"warns about in package.json (scripts, name, vai's compatibility fields), then its workflow file.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			type result struct {
				File     string           `json:"file"`
				Findings []vaipkg.Finding `json:"findings"`
			}
			var results []result
			failed := false
			for _, arg := range args {
				if st, err := os.Stat(filepath.Join(arg, "package.json")); err == nil && !st.IsDir() { // a package directory
					fs := vaipkg.CheckPackage(arg)
					if fs == nil {
						fs = []vaipkg.Finding{}
					}
					failed = failed || vaipkg.Failed(fs)
					results = append(results, result{arg, fs})
					continue
				}
				src, err := readWorkflowSource(arg)
				name := src.name
				var fs []vaipkg.Finding
				if err != nil {
					name = arg
					fs = []vaipkg.Finding{{File: arg, Severity: vaipkg.SeverityError, Check: "invalid", Message: err.Error()}}
				} else {
					fs = vaipkg.CheckAs(name, src.data, src.vai)
				}
				if fs == nil {
					fs = []vaipkg.Finding{}
				}
				failed = failed || vaipkg.Failed(fs)
				results = append(results, result{name, fs})
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, results); err != nil {
					return err
				}
			} else {
				for _, r := range results {
					count := map[string]int{}
					for _, f := range r.Findings {
						fmt.Fprintln(out, f.String())
						count[f.Severity]++
					}
					if len(r.Findings) == 0 {
						fmt.Fprintf(out, "%s: ok\n", r.File)
					} else {
						fmt.Fprintf(out, "%s: %s, %s, %s\n", r.File, english.Count(count[vaipkg.SeverityError], "error"),
							english.Count(count[vaipkg.SeverityWarning], "warning"), english.Count(count[vaipkg.SeverityNote], "note"))
					}
				}
			}
			if failed {
				return &ExitError{Code: ExitFailed, Silent: true}
			}
			return nil
		},
	}
	jsonFlag(cmd, &asJSON, "print the findings as JSON")
	return cmd
}
