// Package eval is weft's eval engine: it runs a dataset of cases through a workflow on the
// workers of a task queue (the real interpreter and the configured model), decides the reviews
// each run waits for as its case says, grades the outputs and adds them up in a report.
//
// A dataset is JSONL, one Case a line (ReadDataset); CheckReviews checks before anything runs that
// every review key of the cases names a review the workflow may wait for (ReviewSteps). Run runs
// the cases through a client.Client, at most Options.Concurrency at a time; every case ends its run
// (a case that stops first cancels it). Grade and GradeFailure are the graders (equals, contains,
// matches, schema, max, min, judge, error), GradeTrajectory those of the run's tool calls (tools,
// toolOrder, maxToolCalls, read from the run's Execution); JudgeWorkflow is the judge grader's
// one-step workflow. Compare names what changed against a baseline report.
//
// A replay case ({"replay": RUN}; ReplayCases, ReplaySince) re-runs a recorded run with its model
// steps live (Options.Model, or the changed definition Run is given) and every other step's output
// and agent tool call's result from the record (client.ReplayRecording); its report.Replay says
// which model answers changed and which calls went off the record (tool drift).
//
// The reports' types and where they are kept are package eval/report, below this one, so the
// console reads reports without linking the engine. `weft eval` (starter) is a thin command over
// this package: flags, printing, keeping the report. It talks to Temporal only through client/;
// it must not import the console, the gateway or the CLI.
package eval
