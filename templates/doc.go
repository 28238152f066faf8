// Package templates holds weft's built-in workflow files (workflows/*.json) and the sample corpus
// with its labelled queries (corpus/*.json), embedded in the binary. `weft list` shows the
// workflows, every command that takes a FILE also takes a template name, and `weft dev --demo`
// ingests the corpus. The fixtures in tests/ are not embedded: `weft test templates/tests` runs
// them (see starter's CLI tests).
//
// Entry points: All and Get (the workflows), Corpus, CorpusInputs and Queries.
//
// It is data: it must not import any weft package (client/, the CLI and internal/ops/cluster import it,
// not the other way) and does no I/O beyond the embedded files.
package templates
