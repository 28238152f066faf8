package activities

import (
	"context"

	"github.com/weftworks/weft/activities/toolspec"
)

func init() { bindBatch(toolspec.Embed, (*Tools).embedBatch) }

// embedBatch embeds many items' texts: one request per model, input type and dimensions the
// items ask for (one request in all when they agree, as a forEach's items do).
func (t *Tools) embedBatch(ctx context.Context, ins []toolspec.EmbedIn) ([]toolspec.EmbedOut, *toolspec.Usage, error) {
	type group struct {
		inputType, model string
		dims             int
	}
	var order []group
	members := map[group][]int{}
	for i, in := range ins {
		g := group{in.InputType, in.Model, in.Dimensions}
		if _, seen := members[g]; !seen {
			order = append(order, g)
		}
		members[g] = append(members[g], i)
	}
	outs := make([]toolspec.EmbedOut, len(ins))
	var usage *toolspec.Usage
	for _, g := range order {
		idx := members[g]
		texts := make([]string, len(idx))
		for n, i := range idx {
			texts[n] = ins[i].Text
		}
		emb, err := t.embedTexts(ctx, texts, g.inputType, g.model, g.dims)
		if err != nil {
			return nil, usage, err
		}
		for n, i := range idx {
			vec := emb.Vectors[n]
			outs[i] = toolspec.EmbedOut{Text: ins[i].Text, Model: emb.Model, Vector: vec, Dimensions: len(vec), InputType: ins[i].InputType}
		}
		usage = sumUsage(usage, &toolspec.Usage{EmbeddingTokens: emb.Tokens})
	}
	return outs, usage, nil
}
