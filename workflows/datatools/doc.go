// Package datatools runs the pure data tools (merge, filter, transform, template, conditional) that
// the interpreter executes inline in workflow code: no activity, no history event.
//
// Entry points: Run (one compiled step on its resolved inputs) and Items (a step input as a list);
// InputError is a problem no retry can fix.
//
// Everything here is deterministic and does no I/O, because it runs inside workflow code: it uses
// only the pure language packages (workflows/dsl, workflows/expr), must not import go.temporal.io
// or activities/, must not read the clock, randomness or the network, and no result may depend on
// map iteration order. Output shapes match the vai workflow engine so existing files keep working:
// merge, filter and transform return {results, resultCount}; template {text, charCount};
// conditional {conditionResult, branchTaken, enabledSteps, skippedSteps}. A merge or transform
// step of a file in vai's dialect (dsl.VaiSemantics) computes what vai's own merge and transform
// compute where weft's differ (vai.go): merge drops duplicates only with dedup and dedup_field
// both set; transform's fields win over mapping, and mapping writes a value the item lacks as is.
package datatools
