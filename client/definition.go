package client

import (
	"context"
	"fmt"

	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// Workflow returns the definition a run was started with, compiled: it is read from the first
// event of the run's history, so it is what the run executes even when the file changed since.
func (c *Client) Workflow(ctx context.Context, runID string) (*dsl.Workflow, error) {
	req, err := c.startRequest(ctx, runID)
	if err != nil {
		return nil, err
	}
	w, err := runwire.RequestWorkflow(req)
	if err != nil {
		return nil, fmt.Errorf("the run's own definition: %w", err)
	}
	return w, nil
}
