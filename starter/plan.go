package starter

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/workflows/dsl"
)

// runFlags are the options shared by plan and (later) run.
type runFlags struct {
	inputs     []string
	inputFile  string
	db         string
	collection string
	asJSON     bool
}

func (f *runFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&f.inputs, "input", "i", nil, "workflow input as name=value (repeatable); arrays and objects as JSON; name=@file reads the value from a file")
	cmd.Flags().StringVar(&f.inputFile, "input-file", "", "a JSON object of inputs ({\"name\": value}); --input flags win")
	cmd.Flags().StringVar(&f.db, "db", "", "override defaults.db")
	cmd.Flags().StringVar(&f.collection, "collection", "", "override defaults.collection")
	jsonFlag(cmd, &f.asJSON, "print JSON")
}

// overrides returns the defaults the flags override.
func (f *runFlags) overrides() map[string]any {
	out := map[string]any{}
	if f.db != "" {
		out["db"] = f.db
	}
	if f.collection != "" {
		out["collection"] = f.collection
	}
	return out
}

// unreadOverrides says which --db/--collection flags no step of w reads: every step whose tool
// takes the setting sets its own (often from an input, as weft init writes it), so the flag
// would do nothing. Each line names the flag and what to pass instead.
func (f *runFlags) unreadOverrides(w *dsl.Workflow) []string {
	var out []string
	for _, k := range []string{"db", "collection"} {
		v, set := f.overrides()[k]
		if !set {
			continue
		}
		takers, reads := 0, false
		for _, cs := range w.Steps {
			if cs.Spec == nil || !cs.Spec.HasInput(k) {
				continue
			}
			takers++
			if _, own := cs.Inputs[k]; !own {
				reads = true
			}
		}
		if takers == 0 || reads {
			continue
		}
		hint := "set it in the file's steps"
		if _, ok := w.Def.Inputs[k]; ok {
			hint = fmt.Sprintf("the file takes it as an input: --input %s=%v", k, v)
		}
		out = append(out, fmt.Sprintf("--%s %v: no step reads defaults.%s (each step that takes a %s sets its own); %s", k, v, k, k, hint))
	}
	return out
}

// resolveInputs coerces --input values against the workflow's declared inputs.
func (f *runFlags) resolveInputs(w *dsl.Workflow) (map[string]any, error) {
	raw, typed, err := f.inputsFromFlags()
	if err != nil {
		return nil, invalid(err)
	}
	in, err := dsl.ResolveInputs(w.Def, raw, typed)
	if err != nil {
		return nil, invalid(err)
	}
	return in, nil
}

// planInputs is resolveInputs with placeholders for required inputs not given.
func (f *runFlags) planInputs(w *dsl.Workflow) (map[string]any, error) {
	raw, typed, err := f.inputsFromFlags()
	if err != nil {
		return nil, invalid(err)
	}
	in, err := dsl.PlanInputs(w.Def, raw, typed)
	if err != nil {
		return nil, invalid(err)
	}
	return in, nil
}

func newPlanCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "plan FILE|TEMPLATE [--input name=value]...",
		Short: "Show what a run would do: steps, parallelism, resolved inputs, output shape, external calls",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, err := loadWorkflow(args[0])
			if err != nil {
				return err
			}
			in, err := f.planInputs(w)
			if err != nil {
				return err
			}
			p := dsl.NewPlan(w, in, f.overrides())
			if f.asJSON {
				return writeJSON(cmd.OutOrStdout(), p)
			}
			for _, d := range w.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), d.String())
			}
			for _, warn := range f.unreadOverrides(w) {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", warn)
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), p.Text())
			return err
		},
	}
	f.register(cmd)
	return cmd
}
