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
// conditional {conditionResult, branchTaken, enabledSteps, skippedSteps}.
package datatools
