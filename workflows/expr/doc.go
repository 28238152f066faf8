// Package expr resolves weft's {{ }} templates and evaluates condition and filter expressions.
//
// Expressions are parsed and run by github.com/expr-lang/expr with a closed environment: the
// only names are the roots the interpreter provides (inputs, defaults, step ids, item, index,
// a loop's "as" name), the only functions are the whitelist in Functions, and the AST is patched
// so that operators follow the JavaScript semantics existing vai workflow files rely on:
//
//   - member access and indexing never fail: a path through a missing value is null;
//   - `.length` of an array or string is its length;
//   - `&&`, `||` and `!` use truthiness, and `a || b` yields a (when truthy) or b, so it works as
//     a fallback value; `a ? b : c` tests truthiness too;
//   - `<`, `<=`, `>`, `>=` with a null side are false; `+` concatenates when either side is a string;
//   - `===`/`!==` are accepted as `==`/`!=`, `null` and `undefined` as nil.
//
// A template value that is exactly one {{ }} keeps the type of its result; text mixed with
// templates becomes a string in which null renders as "null" and objects as JSON (sorted keys).
// Simple paths ({{ inputs.query }}, {{ step.output.results[0].content }}) skip the VM entirely.
//
// Everything here is deterministic and does no I/O, so the interpreter calls it inside workflow
// code. Compile once per definition; Program and Template are safe for concurrent use.
package expr
