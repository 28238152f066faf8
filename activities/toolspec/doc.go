// Package toolspec declares every tool a weft workflow step can name: its name, domain, kind,
// title and description, MCP annotations, aliases (vai's input names), which inputs the tool
// evaluates itself (per item), how many external calls a step of it makes, how a forEach over it
// batches, and the Go types of its input and output; and the plain types that cross the activity
// boundary (Result, Usage, the evaluate and blob activities' requests, BlobKey).
//
// It is the single source of truth for those facts. The workflow language (workflows/dsl)
// validates step inputs against the schemas, the worker registers one activity per
// activity-kind spec, the MCP gateway and the console show the same entries, and `weft tools`
// prints them. Entry points: All, Lookup, Names and Spec's methods (ValidateInputs, Canonical,
// Defaults, ...).
//
// A tool is declared once, with Declare:
//
//	var Search = Declare[SearchIn, Results](&Spec{Name: "search", Domain: "retrieval", ...})
//
// Declare registers the Spec and returns a Tool[In, Out], whose Decode turns a step's validated
// inputs (aliases renamed, declared defaults filled in) into In; package activities binds each
// handler to its Tool, so the compiler checks that the handler takes In and returns Out. The
// input and output JSON Schemas are derived from In and Out (derive.go, on
// google/jsonschema-go): JSON names, types, required fields (those without omitempty) and the
// `jsonschema` tag's description, plus weft's own tags on the same field:
//
//	weft:"min=1,max=50,default=5"  minimum, maximum, default, minLength, maxLength, minItems,
//	                               maxItems, enum=a|b|c, type=... and itemType=... (for an any
//	                               field or its items), nullable, open, content (the field
//	                               carries what the tool works on or gives: Spec.Content);
//	                               item.KEY=V constrains each item of a list
//	pattern:"^[a-z]+$"             a regular expression (apart, because patterns hold commas)
//	itemPattern:"..."              the same for each item of a list
//
// A field no Go type can describe (an array or an object; anyOf) takes its schema from
// Spec.RawInput. SchemaOf derives the same schema for any struct; the Go API's weft.Tool declares a Go
// program's own tools with Declare too. Output schemas describe, they do not check: they drop required and
// additionalProperties; `weft test` checks a fixture's mocks against them.
//
// The declarations are plain data: this package must not import provider or store clients,
// go.temporal.io/sdk or workflows/ (internal/layers: floor 0).
//
// Files: spec.go (the Spec type and the registry), derive.go (Declare, Tool, the schema
// derivation and its tags), one file per domain (retrieval.go, embedding.go, management.go,
// utility.go, generate.go, agent.go, memory.go, control.go, code.go, dedupe.go), batch.go (how a
// forEach batches a tool's items; its limits are replayed, so changing one needs a GetVersion
// in workflows/step_providerbatch.go), evaluate.go (the claim-check and evaluate contracts),
// duration.go (the duration syntax files use) and namespace.go (MongoDB's own databases, refused
// to client definitions).
package toolspec
