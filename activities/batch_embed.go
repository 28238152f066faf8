package activities

import (
	"context"

	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/toolspec"
)

func init() {
	bindBatch(toolspec.Embed, (*Tools).embedBatch)
	bindBatch(toolspec.Similarity, (*Tools).similarityBatch)
}

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
	var failed itemErrors
	for _, g := range order {
		idx := members[g]
		texts := make([]string, len(idx))
		for n, i := range idx {
			texts[n] = ins[i].Text
		}
		emb, err := t.embedTexts(ctx, texts, g.inputType, g.model, g.dims)
		if err != nil {
			if err := groupFailed(toolspec.Embed.Spec, &failed, idx, len(order), err); err != nil {
				return nil, usage, err
			}
			continue
		}
		for n, i := range idx {
			vec := emb.Vectors[n]
			outs[i] = toolspec.EmbedOut{Text: ins[i].Text, Model: emb.Model, Vector: vec, Dimensions: len(vec), InputType: ins[i].InputType}
		}
		usage = sumUsage(usage, &toolspec.Usage{EmbeddingTokens: emb.Tokens})
	}
	if failed != nil {
		return outs, usage, failed
	}
	return outs, usage, nil
}

// similarityBatch compares many items' pairs of texts: both texts of every item that names the
// same model go out in one request (text1, text2, text1, text2, ...), as one item's call sends
// its two.
func (t *Tools) similarityBatch(ctx context.Context, ins []toolspec.SimilarityIn) ([]toolspec.SimilarityOut, *toolspec.Usage, error) {
	var order []string
	members := map[string][]int{}
	for i, in := range ins {
		if _, seen := members[in.Model]; !seen {
			order = append(order, in.Model)
		}
		members[in.Model] = append(members[in.Model], i)
	}
	outs := make([]toolspec.SimilarityOut, len(ins))
	var usage *toolspec.Usage
	var failed itemErrors
	for _, model := range order {
		idx := members[model]
		texts := make([]string, 0, 2*len(idx))
		for _, i := range idx {
			texts = append(texts, ins[i].Text1, ins[i].Text2)
		}
		emb, err := t.embedTexts(ctx, texts, "document", model, 0)
		if err != nil {
			if err := groupFailed(toolspec.Similarity.Spec, &failed, idx, len(order), err); err != nil {
				return nil, usage, err
			}
			continue
		}
		for n, i := range idx {
			outs[i] = toolspec.SimilarityOut{Text1: ins[i].Text1, Text2: ins[i].Text2, Model: emb.Model,
				Similarity: embedder.Cosine(emb.Vectors[2*n], emb.Vectors[2*n+1])}
		}
		usage = sumUsage(usage, &toolspec.Usage{EmbeddingTokens: emb.Tokens})
	}
	if failed != nil {
		return outs, usage, failed
	}
	return outs, usage, nil
}
