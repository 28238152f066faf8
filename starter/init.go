package starter

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
)

// scaffold is one kind of step `weft init` knows how to write.
type scaffold struct {
	key, label, tool string
	collection       bool // asks for a collection
}

var scaffolds = []scaffold{
	{"query", "Query a collection (embed, search, rerank)", toolspec.Query.Name, true},
	{"search", "Vector search a collection (no rerank)", toolspec.Search.Name, true},
	{"rerank", "Rerank the previous results", toolspec.Rerank.Name, false},
	{"merge", "Merge the results of all previous searches", toolspec.Merge.Name, false},
	{"filter", "Keep results scoring above 0.25 (the offline embedder's right answers score 0.28 and up; raise it for OpenAI or Voyage)", toolspec.Filter.Name, false},
	{"generate", "Generate text from the results (needs an LLM)", toolspec.Generate.Name, false},
	{"review", "Ask a person to approve the results", toolspec.Review.Name, false},
}

type initOptions struct {
	name, description, output string
	db                        string // defaults.db: the database the collections are in
	steps                     []string
	force                     bool
}

func newInitCommand() *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Scaffold a new workflow file (interactive, or from flags)",
		Long: "Asks for a name, a description and steps, then writes NAME.weft.json.\n" +
			"Without a terminal, give everything as flags:\n" +
			"  weft init --name \"Docs QA\" --step query:docs --step generate --db mydb\n" +
			"Step kinds: " + scaffoldKeys() + " (query and search take :collection).\n" +
			"--db writes defaults.db, the database the collections are in (weft dev's demo: weft_demo);\n" +
			"without it the steps search the worker's default database (WEFT_DB, else weft).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.name == "" {
				if err := promptInit(cmd.InOrStdin(), cmd.OutOrStdout(), &o); err != nil {
					return err
				}
			}
			return writeInit(cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().StringVar(&o.name, "name", "", "workflow name (skips the questions)")
	cmd.Flags().StringVar(&o.description, "description", "", "what the workflow does")
	cmd.Flags().StringVar(&o.db, "db", "", "database the collections are in, written as defaults.db (the demo's: weft_demo; default: the worker's WEFT_DB, else weft)")
	cmd.Flags().StringArrayVar(&o.steps, "step", nil, "a step: "+scaffoldKeys()+"; query/search as query:COLLECTION (repeatable, in order)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "file to write (default: NAME.weft.json)")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite an existing file")
	return cmd
}

func scaffoldKeys() string {
	keys := make([]string, len(scaffolds))
	for i, s := range scaffolds {
		keys[i] = s.key
	}
	return strings.Join(keys, ", ")
}

func promptInit(in io.Reader, out io.Writer, o *initOptions) error {
	r := bufio.NewReader(in)
	ask := func(q string) (string, error) {
		fmt.Fprint(out, q)
		line, err := r.ReadString('\n')
		if err != nil && !(errors.Is(err, io.EOF) && line != "") {
			if errors.Is(err, io.EOF) {
				return "", invalid(errors.New("no answer on standard input; without a terminal use --name and --step flags"))
			}
			return "", err
		}
		return strings.TrimSpace(line), nil
	}
	var err error
	for o.name == "" {
		if o.name, err = ask("? Workflow name: "); err != nil {
			return err
		}
	}
	if o.description, err = ask("? Description: "); err != nil {
		return err
	}
	for {
		fmt.Fprintln(out, "? Add a step:")
		for i, s := range scaffolds {
			fmt.Fprintf(out, "  %d. %s\n", i+1, s.label)
		}
		choice, err := ask(fmt.Sprintf("? Select 1-%d (empty to finish): ", len(scaffolds)))
		if err != nil {
			return err
		}
		if choice == "" {
			if len(o.steps) == 0 {
				fmt.Fprintln(out, "  a workflow needs at least one step")
				continue
			}
			if o.db == "" && searchesCollection(o.steps) {
				if o.db, err = ask("? Database of the collections (empty: the worker's WEFT_DB, else weft; weft dev's demo: weft_demo): "); err != nil {
					return err
				}
			}
			return nil
		}
		n, convErr := strconv.Atoi(choice)
		if convErr != nil || n < 1 || n > len(scaffolds) {
			fmt.Fprintf(out, "  %q is not a choice; type a number from 1 to %d\n", choice, len(scaffolds))
			continue
		}
		s := scaffolds[n-1]
		step := s.key
		if s.collection {
			coll, err := ask("? Collection: ")
			if err != nil {
				return err
			}
			if coll != "" {
				step += ":" + coll
			}
		}
		o.steps = append(o.steps, step)
	}
}

// buildInit turns the answers into a definition. Each step reads the results of the ones before.
func buildInit(o initOptions) (*dsl.Builder, error) {
	if len(o.steps) == 0 {
		o.steps = []string{"query"}
	}
	b := dsl.New(o.name).Describe(o.description).Version("1.0.0").
		Input("query", "string", dsl.Required(), dsl.Described("The question or search text"))
	if o.db != "" {
		b.Default("db", o.db)
	}
	var searches []string // steps producing results
	last, lastText := "", false
	collectionInput := false
	used := map[string]int{}
	for i, spec := range o.steps {
		key, coll, _ := strings.Cut(spec, ":")
		var sc *scaffold
		for j := range scaffolds {
			if scaffolds[j].key == key {
				sc = &scaffolds[j]
			}
		}
		if sc == nil {
			return nil, invalid(fmt.Errorf("--step %q: unknown step kind (use one of %s)", spec, scaffoldKeys()))
		}
		used[key]++
		id := key
		if used[key] > 1 {
			id = fmt.Sprintf("%s_%d", key, used[key])
		}
		needPrev := func() error {
			if last == "" {
				return invalid(fmt.Errorf("--step %q (step %d) needs an earlier step whose results it uses", spec, i+1))
			}
			return nil
		}
		prevResults := "{{ " + last + ".output.results }}"
		switch key {
		case "query", "search":
			in := dsl.In{"query": "{{ inputs.query }}", "limit": 10}
			if coll != "" {
				in["collection"] = coll
			} else {
				// Without a collection the step could not run: it becomes an input, so the file
				// runs as written and the person running it says where to search.
				in["collection"] = "{{ inputs.collection }}"
				if !collectionInput {
					b.Input("collection", "string", dsl.WithDefault("docs"), dsl.Described("Collection to search (in db weft unless --db or defaults.db say otherwise)"))
					collectionInput = true
				}
			}
			b.Step(id, sc.tool, in, dsl.Named(sc.label))
			searches = append(searches, id)
		case "rerank":
			if err := needPrev(); err != nil {
				return nil, err
			}
			b.Step(id, sc.tool, dsl.In{"query": "{{ inputs.query }}", "documents": prevResults}, dsl.Named("Rerank"))
		case "merge":
			if len(searches) == 0 {
				return nil, invalid(fmt.Errorf("--step %q (step %d) needs earlier query or search steps to merge", spec, i+1))
			}
			arrays := make([]any, len(searches))
			for j, s := range searches {
				arrays[j] = "{{ " + s + ".output.results }}"
			}
			b.Step(id, sc.tool, dsl.In{"arrays": arrays, "dedup": true, "dedup_field": "source"}, dsl.Named("Merge results"))
		case "filter":
			if err := needPrev(); err != nil {
				return nil, err
			}
			b.Step(id, sc.tool, dsl.In{"array": prevResults, "condition": "item.score > 0.25"}, dsl.Named("Keep relevant results"))
		case "generate":
			in := dsl.In{"prompt": "Answer using the context: {{ inputs.query }}"}
			if last != "" {
				in["context"] = prevResults
			}
			b.Step(id, sc.tool, in, dsl.Named("Generate an answer"))
		case "review":
			in := dsl.In{"title": "Approve the results for {{ inputs.query }}", "instructions": "Approve, edit or reject."}
			if last != "" {
				in["data"] = "{{ " + last + ".output }}"
			}
			b.Step(id, sc.tool, in, dsl.Named("Human review"))
		}
		last, lastText = id, key == "generate"
		if key == "review" {
			lastText = false
		}
	}
	if lastText {
		b.Output(dsl.In{"answer": "{{ " + last + ".output.text }}", "query": "{{ inputs.query }}"})
	} else {
		b.Output(dsl.In{"result": "{{ " + last + ".output }}", "query": "{{ inputs.query }}"})
	}
	return b, nil
}

func writeInit(out io.Writer, o initOptions) error {
	b, err := buildInit(o)
	if err != nil {
		return err
	}
	if _, err := b.Compile(); err != nil {
		return fmt.Errorf("internal: the scaffolded workflow does not validate: %w", err)
	}
	data, err := b.ToJSON()
	if err != nil {
		return err
	}
	path := o.output
	if path == "" {
		path = dsl.Slug(o.name, "workflow") + ".weft.json"
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !o.force {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return invalid(fmt.Errorf("%s already exists (use --force to overwrite, or --output to choose another file)", path))
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(out, "Created: %s\nCheck it: weft plan %s --input query=\"your question\"\n", path, path)
	if o.db == "" && searchesCollection(o.steps) {
		fmt.Fprintln(out, "Its steps search the worker's default database (WEFT_DB, else weft); if the collections are in another\n"+
			"one, give it with --db when you run it, or write it into the file: weft init ... --db NAME (weft dev's demo: weft_demo).")
	}
	return nil
}

// searchesCollection reports whether any step spec reads a collection (query, search).
func searchesCollection(steps []string) bool {
	if len(steps) == 0 {
		return true // the default step is a query
	}
	for _, spec := range steps {
		key, _, _ := strings.Cut(spec, ":")
		for _, sc := range scaffolds {
			if sc.key == key && sc.collection {
				return true
			}
		}
	}
	return false
}
