package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/weftworks/weft"
)

type Word struct{ Word string }

var shout = weft.Tool("shout", "Upper-cases a word", func(_ context.Context, in Word) (Word, error) { return Word{strings.ToUpper(in.Word)}, nil })

func main() {
	ctx := context.Background()
	e := weft.Must(weft.Start(ctx, weft.Options{}))
	defer e.Close()
	wf := weft.New("brief").Input("topic", weft.String, weft.Required()).
		Agent("facts", "Gather facts about {{ inputs.topic }}; shout its name", weft.Tools(shout)).
		Parallel(weft.LLM("pros", "List the pros"), weft.LLM("cons", "List the cons")).
		LLM("verdict", "Weigh them in one sentence")
	res := weft.Must(weft.Stream[string](ctx, e, wf, weft.Inputs{"topic": "Temporal"}, func(ev weft.Event) { fmt.Println(ev.Type, ev.Step) }))
	fmt.Printf("%s\n%d tokens, $%.6f\n", res.Output, res.Usage.Tokens, res.Usage.CostUSD)
}
