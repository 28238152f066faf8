// Package weft is the Go API of weft: build a workflow in Go, give agents tools written as Go
// functions, run it durably on Temporal and read its typed result, its events and its usage.
//
//	type City struct{ Name string `json:"name"` }
//	var weather = weft.Tool("weather", "Today's weather in a city", func(ctx context.Context, c City) (string, error) { ... })
//
//	wf := weft.New("trip").Input("city", weft.String, weft.Required()).
//		Agent("facts", "What should a visitor of {{ inputs.city }} know today?", weft.Tools(weather)).
//		Parallel(weft.LLM("pack", "What to pack"), weft.LLM("see", "What to see")).
//		LLM("plan", "A one-paragraph plan")
//	e, _ := weft.Start(ctx, weft.Options{}) // Temporal at TEMPORAL_ADDRESS (`weft dev`), a worker in this process
//	defer e.Close()
//	res, _ := weft.Run[string](ctx, e, wf, weft.Inputs{"city": "Lisbon"})
//	fmt.Println(res.Output, res.Usage.TotalTokens, res.Usage.CostUSD)
//
// The builder (Workflow) produces the same definition a workflow file holds (Export writes it;
// `weft run FILE` runs it), on top of workflows/dsl. Steps run in the order they are added, and
// LLM and Agent steps get the outputs of the steps before them as their context ("context":
// "auto"); Parallel adds steps that run at the same time. Options are typed (Model, System, Tools,
// Approve, ResponseJSON, When, Timeout, ...).
//
// Tool declares a tool from a func(context.Context, In) (Out, error): its input schema is derived
// from In by the same deriver as weft's own tools (activities/toolspec), and its calls are
// activities run by the worker the Engine starts. Run and Stream return a Result[T] whose Output
// is decoded into T (a model's text into a string, JSON into a struct) with the run's Usage;
// Execution.Stream follows the run's event model (client.Stream) and Execution.Review decides
// its review gates (client.Review).
package weft
