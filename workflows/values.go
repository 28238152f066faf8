package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftworks/weft/activities/toolspec"
)

// toValue converts a JSON-shaped Go value to a protobuf Value (via JSON, so any number type and
// nested slices of it work).
func toValue(v any) (*structpb.Value, error) {
	if v == nil {
		return structpb.NewNullValue(), nil
	}
	if pv, err := structpb.NewValue(v); err == nil {
		return pv, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("value is not JSON: %w", err)
	}
	out := &structpb.Value{}
	if err := out.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	return out, nil
}

// jsonSize returns the size of v as JSON, or -1.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return -1
	}
	return len(b)
}

// failedUsage is the usage a failed tool activity reported in its error's details (the calls
// it, and the attempts retried before it, billed), or nil.
func failedUsage(err error) *toolspec.Usage {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !ae.HasDetails() {
		return nil
	}
	var u toolspec.Usage
	if ae.Details(&u) != nil {
		return nil
	}
	if u.PromptTokens == 0 && u.CompletionTokens == 0 && u.TotalTokens == 0 && u.EmbeddingTokens == 0 && u.CostUSD == 0 {
		return nil
	}
	return &u
}

// requestsOf is how many calls a tool activity's usage counts (TokenUsage.calls): the provider
// requests that billed it, its retried attempts' included (toolspec.Usage.Requests), or one, for
// a call that billed nothing or ran on a worker that did not count its requests.
func requestsOf(u *toolspec.Usage) int64 {
	if u != nil && u.Requests > 0 {
		return u.Requests
	}
	return 1
}

// BatchUsage is what the items of a failed forEach batch billed (the failure's details).
type BatchUsage struct {
	Calls int64          `json:"calls"`
	Usage toolspec.Usage `json:"usage"`
}

// failedBatchUsage reads the BatchUsage a failed batch reported, or nil.
func failedBatchUsage(err error) *BatchUsage {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !ae.HasDetails() {
		return nil
	}
	var bu BatchUsage
	if ae.Details(&bu) != nil || bu.Calls == 0 {
		return nil
	}
	return &bu
}

// addWarnings appends to list the warnings of ws it does not hold yet.
func addWarnings(list *[]string, ws []string) {
	for _, w := range ws {
		if !slices.Contains(*list, w) {
			*list = append(*list, w)
		}
	}
}

// addToolUsage adds u to total.
func addToolUsage(total *toolspec.Usage, u *toolspec.Usage) {
	total.PromptTokens += u.PromptTokens
	total.CompletionTokens += u.CompletionTokens
	total.TotalTokens += u.TotalTokens
	total.EmbeddingTokens += u.EmbeddingTokens
	total.CostUSD += u.CostUSD
}
