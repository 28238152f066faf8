package starter

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/english"
	"github.com/weftworks/weft/workflows/dsl"
)

type validateResult struct {
	File        string          `json:"file"`
	Valid       bool            `json:"valid"`
	Steps       int             `json:"steps,omitempty"`
	Errors      int             `json:"errors"`
	Warnings    int             `json:"warnings"`
	Diagnostics dsl.Diagnostics `json:"diagnostics"`
	// Dialect is the format the file was read in (weft or vai), DialectReason why; valid files only.
	Dialect       dsl.Dialect `json:"dialect,omitempty"`
	DialectReason string      `json:"dialectReason,omitempty"`
}

func newValidateCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate FILE|TEMPLATE...",
		Short: "Check workflow files without running them",
		Long: "Checks JSON syntax, the file schema, step ids, tools and their inputs, references, cycles,\n" +
			"expressions and the output. Every problem is printed as FILE:LINE:COL: where: what (hint).\n" +
			"A file read in vai's dialect (docs/workflows.md: vai's dialect) says so, and why.\n" +
			"With WEFT_MCP_SERVERS set, a server the file trusts and the operator declares untrusted is a warning.\n" +
			"Exit status 0 when every file is valid, 2 otherwise.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var results []validateResult
			for _, arg := range args {
				results = append(results, validateOne(arg))
			}
			out := cmd.OutOrStdout()
			failed := false
			for _, r := range results {
				failed = failed || !r.Valid
			}
			if asJSON {
				if err := writeJSON(out, results); err != nil {
					return err
				}
			} else {
				for _, r := range results {
					for _, d := range r.Diagnostics {
						fmt.Fprintln(out, d.String())
					}
					if r.Dialect == dsl.DialectVai {
						fmt.Fprintf(out, "%s: read in vai's dialect: %s\n", r.File, r.DialectReason)
					}
					switch {
					case r.Valid && r.Warnings > 0:
						fmt.Fprintf(out, "%s: valid, %s, %s\n", r.File, english.Count(r.Steps, "step"), english.Count(r.Warnings, "warning"))
					case r.Valid:
						fmt.Fprintf(out, "%s: valid, %s\n", r.File, english.Count(r.Steps, "step"))
					default:
						fmt.Fprintf(out, "%s: invalid, %s, %s\n", r.File, english.Count(r.Errors, "error"), english.Count(r.Warnings, "warning"))
					}
				}
			}
			if failed {
				return &ExitError{Code: ExitInvalid, Silent: true}
			}
			return nil
		},
	}
	jsonFlag(cmd, &asJSON, "print a machine-readable list of results")
	return cmd
}

func validateOne(arg string) validateResult {
	res := validateResult{File: arg, Diagnostics: dsl.Diagnostics{}}
	fail := func(file string, err error) validateResult {
		var ds dsl.Diagnostics
		if !errors.As(err, &ds) {
			ds = dsl.Diagnostics{{File: file, Line: 1, Col: 1, Message: err.Error(), Severity: dsl.SeverityError}}
		}
		res.Diagnostics, res.Errors, res.Warnings = ds, len(ds.Errors()), len(ds.Warnings())
		return res
	}
	src, err := readWorkflowSource(arg)
	if err != nil {
		return fail(arg, err)
	}
	name := src.name
	res.File = name
	w, err := src.load()
	if err != nil {
		return fail(name, err)
	}
	// the workflows it calls, resolved as weft run resolves them, and what it gives them,
	// checked as the run checks them when it starts (client.Validate: /v1 and MCP check so too)
	v := weftclient.ValidateWorkflow(name, w, weftclient.SourceResolver(arg))
	res.Valid, res.Steps, res.Errors, res.Warnings, res.Diagnostics = v.Valid, v.Steps, v.Errors, v.Warnings, v.Diagnostics
	if !v.Valid {
		return res
	}
	res.Dialect, res.DialectReason = w.Dialect, w.DialectReason
	if d, ok := llmEndpointWarning(w); ok {
		res.Diagnostics = append(res.Diagnostics, d)
	}
	res.Diagnostics = append(res.Diagnostics, operatorServerWarnings(w, os.Getenv("WEFT_MCP_SERVERS"))...)
	res.Warnings = len(res.Diagnostics.Warnings())
	return res
}

// llmEndpointWarning: a file with model steps, checked in a shell where no OpenAI-compatible
// endpoint is configured, would fail at its first model call if the worker has none either. Only
// the worker's environment counts (weft dev's worker inherits the shell that started it): the
// warning says what it checked and that the worker's setting is what matters.
func llmEndpointWarning(w *dsl.Workflow) (dsl.Diagnostic, bool) {
	if os.Getenv("OPENAI_BASE_URL") != "" || os.Getenv("OPENAI_API_KEY") != "" {
		return dsl.Diagnostic{}, false
	}
	for _, cs := range w.Steps {
		if cs.Spec != nil && cs.Spec.EstimateCalls(nil).LLM > 0 { // the tools that call a model
			d := w.Source.At(cs.Pointer+"/tool", cs.Tool+" steps need an OpenAI-compatible endpoint, and this shell sets no OPENAI_BASE_URL or OPENAI_API_KEY",
				"only the worker's environment counts: if the worker has OPENAI_BASE_URL (and OPENAI_API_KEY, WEFT_CHAT_MODEL), ignore this; if not, set them where it runs, or the step fails at once")
			d.Severity = dsl.SeverityWarning
			return d, true
		}
	}
	return dsl.Diagnostic{}, false
}

// operatorServerWarnings: a server the file declares with its own command or url and "trust":
// true, which the operator's file (WEFT_MCP_SERVERS, as this shell names it) declares too without
// trust, runs as the operator declares it: its tools that may change things wait for approval.
// Only the worker's WEFT_MCP_SERVERS counts; a policy this shell cannot read is the worker's to
// report when it starts. (A reference to the operator's server, without command or url, is the
// compiler's warning.)
func operatorServerWarnings(w *dsl.Workflow, policyFile string) []dsl.Diagnostic {
	if policyFile == "" || len(w.Def.MCPServers) == 0 {
		return nil
	}
	p, err := activities.LoadMCPPolicy(policyFile)
	if err != nil {
		return nil
	}
	var out []dsl.Diagnostic
	for _, name := range slices.Sorted(maps.Keys(w.Def.MCPServers)) {
		s := w.Def.MCPServers[name]
		op, declared := p.Servers[name]
		if !declared || !s.Trust || op.Trust || (s.Command == "" && s.URL == "") {
			continue
		}
		d := w.Source.At("/mcpServers/"+name+"/trust",
			fmt.Sprintf(`"trust": true is ignored: the operator declares %q too (WEFT_MCP_SERVERS, %s), without trust, and the worker runs the operator's declaration, not this file's command or url; its tools that may change things wait for approval`, name, policyFile),
			fmt.Sprintf(`set "trust": true on %q in %s to run its write tools without approval, or give this file's server another name to run its own`, name, policyFile))
		d.Severity = dsl.SeverityWarning
		out = append(out, d)
	}
	return out
}
