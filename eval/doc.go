// Package eval is weft's eval engine: it runs a dataset of cases through a workflow on the
// workers of a task queue (the real interpreter and the configured model), decides the reviews
// each run waits for as its case says, grades the outputs and adds them up in a report.
//
// A dataset is JSONL, one Case a line (ReadDataset); CheckReviews checks before anything runs that
// every review key of the cases names a review the workflow may wait for (ReviewSteps). Run runs
// the cases through a client.Client, at most Options.Concurrency at a time; every case ends its run
// (a case that stops first cancels it). Grade and GradeFailure are the graders (equals, contains,
// matches, schema, max, min, judge, error); JudgeWorkflow is the judge grader's one-step workflow.
// Compare names what changed against a baseline report.
//
// The reports' types and where they are kept are package eval/report, below this one, so the
// console reads reports without linking the engine. `weft eval` (starter) is a thin command over
// this package: flags, printing, keeping the report. It talks to Temporal only through client/;
// it must not import the console, the gateway or the CLI.
package eval
