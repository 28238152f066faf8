package runwire

import weftv1 "github.com/weftworks/weft/proto/weft/v1"

// ChatTokens is u's model tokens: its total, or prompt and completion when a provider's total
// says less. client.UsageOf reads it and a run's budget counts it (workflows/budget.go), so the
// tokens every surface shows are the ones a budget stops at.
func ChatTokens(u *weftv1.TokenUsage) int64 {
	chat := u.GetTotalTokens()
	if chat < u.GetPromptTokens()+u.GetCompletionTokens() {
		chat = u.GetPromptTokens() + u.GetCompletionTokens()
	}
	return chat
}

// BilledTokens is every token u billed: ChatTokens and the embedding tokens (client.Usage.Tokens).
func BilledTokens(u *weftv1.TokenUsage) int64 { return ChatTokens(u) + u.GetEmbeddingTokens() }
