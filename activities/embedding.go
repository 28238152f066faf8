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

func num(in map[string]any, k string, def int) int {
	if f, ok := in[k].(float64); ok {
		return int(f)
	}
	return def
}

func (t *Tools) embedTexts(ctx context.Context, texts []string, inputType, model string, dims int) (*provider.Embeddings, error) {
	if model == "" {
		model = t.defaultEmbeddingModel()
	}
	p, err := t.embedderFor(model)
	if err != nil {
		return nil, err
	}
	return p.Embed(ctx, texts, inputType, model, dims)
}

func (t *Tools) embed(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	inputType := str(in, "inputType")
	if inputType == "" {
		inputType = "query"
	}
	emb, err := t.embedTexts(ctx, []string{str(in, "text")}, inputType, str(in, "model"), num(in, "dimensions", 0))
	if err != nil {
		return nil, nil, err
	}
	vec := emb.Vectors[0]
	return map[string]any{"text": str(in, "text"), "model": emb.Model, "vector": vec, "dimensions": len(vec), "inputType": inputType},
		&toolspec.Usage{EmbeddingTokens: emb.Tokens}, nil
}

func (t *Tools) similarity(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	emb, err := t.embedTexts(ctx, []string{str(in, "text1"), str(in, "text2")}, "document", str(in, "model"), 0)
	if err != nil {
		return nil, nil, err
	}
	return map[string]any{"text1": str(in, "text1"), "text2": str(in, "text2"), "similarity": embedder.Cosine(emb.Vectors[0], emb.Vectors[1]), "model": emb.Model},
		&toolspec.Usage{EmbeddingTokens: emb.Tokens}, nil
}
