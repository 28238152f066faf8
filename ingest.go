package weft

import (
	"context"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/client"
)

// IngestOptions say what Ingest reads and where it stores it (client.IngestOptions: paths,
// include/exclude, collection, chunking, prune, dry run, progress).
type IngestOptions = client.IngestOptions

// IngestProgress is how far an ingest's runs are (documents done of total).
type IngestProgress = client.IngestProgress

// IngestReport is what Ingest did: files read, new, changed, unchanged and failed, chunks,
// estimated tokens and cost, the runs and their usage, the documents pruned.
type IngestReport = client.IngestReport

// Ingest is `weft ingest` from Go: this process reads the files and sends their text as the
// data of durable runs of the batched ingest tool; a file whose content is stored already costs
// no embedding request, a changed one replaces its chunks, and Prune removes the documents of
// deleted files. The store compared with is the Engine's (Options.Config, else the
// environment's MONGODB_URI), and the estimate prices the model the Engine's configuration
// embeds with unless EstimateModel says otherwise.
//
//	rep, err := e.Ingest(ctx, weft.IngestOptions{Paths: []string{"docs"}, Collection: "docs"})
func (e *Engine) Ingest(ctx context.Context, o IngestOptions) (*IngestReport, error) {
	tools := activities.NewTools(e.cfg)
	defer func() { _ = tools.CloseStore(context.WithoutCancel(ctx)) }()
	if o.Store == nil {
		o.Store = tools
	}
	if o.EstimateModel == "" {
		o.EstimateModel = tools.EmbeddingModel(o.Model)
		o.PricePerMillion, _ = activities.PricePerMillion(o.EstimateModel)
	}
	return e.c.Ingest(ctx, o)
}
