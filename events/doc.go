// Package events is the one definition of a weft run's events: their types (RunStarted,
// StepCompleted, …), the Event that carries one, and the Page the run's events query answers
// (Query). The interpreter (workflows) records Events where things happen; the client (client)
// reads them, adds the ones only a follower makes (LLMDelta, SkippedEvents, ContinuedAsNew) and
// hands the same type to the CLI, the gateway, the console and Go programs (weft.Event).
//
// It is plain data: it imports the wire contracts (proto) and the protobuf runtime, never Temporal,
// the interpreter or the client.
package events
