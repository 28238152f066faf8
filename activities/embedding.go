package activities

import (
	"context"
	"fmt"

	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/toolspec"
)

// localEmbedder adapts the offline embedder to provider.Embedder.
type localEmbedder struct{}

func (localEmbedder) Embed(ctx context.Context, texts []string, inputType, model string, dimensions int) (*provider.Embeddings, error) {
	if dimensions != 0 && dimensions != embedder.Dimensions {
		return nil, &InputError{Msg: fmt.Sprintf("%s has %d dimensions; remove \"dimensions\" or set it to %d", embedder.Model, embedder.Dimensions, embedder.Dimensions)}
	}
	e, err := embedder.Load()
	if err != nil {
		return nil, err
	}
	out := &provider.Embeddings{Model: embedder.Model}
	for _, t := range texts {
		out.Vectors = append(out.Vectors, e.Embed(t))
		out.Tokens += int64(len(embedder.Tokens(t)))
	}
	return out, nil
}

func str(in map[string]any, k string) string {
	s, _ := in[k].(string)
	return s
}

// embedTexts embeds texts with model (when "", the default) in one provider request, through the
// embedding cache (embedcache.go): texts embedded before with the same model, input type and
// dimensions cost no request, and Tokens counts only what the provider embedded.
func (t *Tools) embedTexts(ctx context.Context, texts []string, inputType, model string, dims int) (*provider.Embeddings, error) {
	if model == "" {
		model = t.defaultEmbeddingModel()
	}
	p, err := t.embedderFor(model)
	if err != nil {
		return nil, err
	}
	if len(texts) == 0 || !t.embedCacheFor(model) {
		countRequests(ctx, 1)
		return p.Embed(ctx, texts, inputType, model, dims)
	}
	return t.embedCached(ctx, p, texts, inputType, model, dims)
}

func init() {
	bind(toolspec.Embed, (*Tools).embed)
	bind(toolspec.Similarity, (*Tools).similarity)
}

func (t *Tools) embed(ctx context.Context, in toolspec.EmbedIn) (toolspec.EmbedOut, *toolspec.Usage, error) {
	emb, err := t.embedTexts(ctx, []string{in.Text}, in.InputType, in.Model, in.Dimensions)
	if err != nil {
		return toolspec.EmbedOut{}, nil, err
	}
	vec := emb.Vectors[0]
	return toolspec.EmbedOut{Text: in.Text, Model: emb.Model, Vector: vec, Dimensions: len(vec), InputType: in.InputType},
		&toolspec.Usage{EmbeddingTokens: emb.Tokens}, nil
}

func (t *Tools) similarity(ctx context.Context, in toolspec.SimilarityIn) (toolspec.SimilarityOut, *toolspec.Usage, error) {
	emb, err := t.embedTexts(ctx, []string{in.Text1, in.Text2}, "document", in.Model, 0)
	if err != nil {
		return toolspec.SimilarityOut{}, nil, err
	}
	return toolspec.SimilarityOut{Text1: in.Text1, Text2: in.Text2, Similarity: embedder.Cosine(emb.Vectors[0], emb.Vectors[1]), Model: emb.Model},
		&toolspec.Usage{EmbeddingTokens: emb.Tokens}, nil
}
