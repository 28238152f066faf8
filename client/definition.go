package client

import (
	"context"

	"github.com/weftworks/weft/workflows/dsl"
)

// Workflow returns the definition a run was started with, compiled: it is read from the first
// event of the run's history, so it is what the run executes even when the file changed since.
func (c *Client) Workflow(ctx context.Context, runID string) (*dsl.Workflow, error) {
	req, err := c.startRequest(ctx, runID)
	if err != nil {
		return nil, err
	}
	def, err := definitionOf(req.Definition)
	if err != nil {
		return nil, err
	}
	return dsl.FromDefinition(def)
}
