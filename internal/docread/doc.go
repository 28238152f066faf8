// Package docread reads the files `weft ingest` is given and turns each into the text that is
// chunked and embedded: Markdown, plain text, reStructuredText and source code as they are, CSV
// and TSV as one "column: value" line per row, HTML as its visible text (no tags, scripts or
// styles), PDF as its text (github.com/ledongthuc/pdf) and JSON or JSON Lines as one field of
// each record.
//
// Entry points: Read (paths, folders and globs to Documents, with a Problem for each file that
// cannot be read, saying why), Text (one file's content to text) and Options.
//
// It runs in the CLI process, which reads the files and sends their text as data: a workflow
// definition never names a path (the trust model). It is a leaf: no weft imports and nothing
// from Temporal.
package docread
