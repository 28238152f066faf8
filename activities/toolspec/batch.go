package toolspec

// A forEach over a tool that declares Batch groups its items into calls of the tool's batch
// activity (BatchActivity), each carrying up to MaxItems items and MaxTokens estimated input
// tokens, instead of one activity per item: embeddings are priced and rate-limited per request,
// and providers take hundreds of inputs per request. Per-item semantics are those of one
// activity per item: each item is validated on its own, an item the provider rejects is isolated
// (the call is split until the bad item stands alone) and reports its own error, and outputs map
// back to items by position.

// Batch is how a tool batches. Workflow code groups the items with these limits, so the
// groups a running workflow made are replayed from them: changing a limit (or a tool's Batch)
// changes the activities a replay expects, and needs a new version of the provider-batches
// change in workflows/step_providerbatch.go that keeps the old limits for older runs.
type Batch struct {
	// MaxItems is the most items one call carries (the provider's limit on inputs per request,
	// or less).
	MaxItems int
	// MaxTokens is the most estimated input tokens one call carries.
	MaxTokens int
	// Tokens estimates one item's input tokens from its resolved inputs (nil: 1 per item).
	Tokens func(inputs map[string]any) int
}

// ItemTokens is the estimate of an item's input tokens (at least 1).
func (b *Batch) ItemTokens(inputs map[string]any) int {
	if b.Tokens == nil {
		return 1
	}
	return max(1, b.Tokens(inputs))
}

// TextTokens estimates a text input's tokens at ~3 bytes a token (an overestimate rather than
// exceed a provider's limit). A value stored out of history arrives at a batch as its reference
// ({"$weftBlob": id, "size": bytes}) and counts by its size, so a call never takes many large
// documents because their references are short. (embed and similarity keep the estimate they
// were recorded with: batchSpans cuts requests in workflow code, so it must not change under a
// recorded run.)
func TextTokens(v any) int {
	switch v := v.(type) {
	case string:
		return len(v)/3 + 1
	case map[string]any:
		if _, ok := v[BlobKey]; ok {
			if n, ok := v["size"].(float64); ok && n > 0 {
				return int(n)/3 + 1
			}
			if n, ok := v["size"].(int); ok && n > 0 {
				return n/3 + 1
			}
		}
	}
	return 1
}

// BatchActivity is the name of the activity that runs a batch of the tool's items.
func (s *Spec) BatchActivity() string { return s.Name + ".batch" }

// BatchIn is what a batch activity receives: the items' resolved inputs, in forEach order.
type BatchIn struct {
	Items []map[string]any `json:"items"`
	// StoreAbove: when the items' outputs together take more bytes than this, each output is
	// kept in the knowledge store and the item's result is a reference to it (0: never), so a
	// fan-out's outputs do not outgrow its history.
	StoreAbove int `json:"storeAbove,omitempty"`
}

// BatchOut is what a batch activity returns: one result per item, in order.
type BatchOut struct {
	Items   []BatchItem `json:"items"`
	Attempt int32       `json:"attempt"`
	// Usage is the batch's total; Requests the provider calls the batch made (a split after a
	// rejected item makes more than one).
	Usage    *Usage   `json:"usage,omitempty"`
	Requests int      `json:"requests,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// BatchItem is one item's result: its output, or its own error.
type BatchItem struct {
	Output any `json:"output,omitempty"`
	// Error is the item's own error (its inputs are invalid, or the provider rejected it);
	// ErrorType its type (InvalidInput, ProviderRejected).
	Error     string `json:"error,omitempty"`
	ErrorType string `json:"errorType,omitempty"`
	// Usage is the item's share of the batch's usage (in proportion to its estimated tokens).
	Usage *Usage `json:"usage,omitempty"`
}

// Batchable returns the tools that declare Batch.
func Batchable() []*Spec {
	var out []*Spec
	for _, s := range All() {
		if s.Batch != nil {
			out = append(out, s)
		}
	}
	return out
}
