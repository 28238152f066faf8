package activities

import (
	"context"
	"time"

	"github.com/weftworks/weft/activities/provider"
)

// EmbedTexts exposes embedTexts, the one place every tool embeds through, to the external tests.
func (t *Tools) EmbedTexts(ctx context.Context, texts []string, inputType, model string, dims int) (*provider.Embeddings, error) {
	return t.embedTexts(ctx, texts, inputType, model, dims)
}

// CollectWarnings returns a context whose warnings (as the activity adapter collects them) the
// returned function reads.
func CollectWarnings(ctx context.Context) (context.Context, func() []string) {
	ctx, s := withWarnings(ctx)
	return ctx, s.take
}

// SetEmbedCacheTimeout bounds cache reads and writes to d until the returned function restores it.
func SetEmbedCacheTimeout(d time.Duration) (restore func()) {
	old := embedCacheTimeout
	embedCacheTimeout = d
	return func() { embedCacheTimeout = old }
}
