package activities

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftworks/weft/internal/safefile"
)

// PricesAsOf dates the built-in chat price table. Prices change: check them with the provider
// before budgeting with them, and override them with WEFT_PRICES_FILE.
const PricesAsOf = "2026-11"

// Price is what a model costs in US dollars per million tokens.
type Price struct {
	InputPerMTok  float64 `json:"inputPerMTok"`
	OutputPerMTok float64 `json:"outputPerMTok"`
}

// Prices maps model names to prices. A model name matches its entry exactly, or by the longest
// entry that is a prefix of it ("gpt-4o-mini-2024-07-18" uses "gpt-4o-mini").
type Prices map[string]Price

// DefaultPrices are list prices of common OpenAI models as recorded on PricesAsOf. Local models
// (Ollama, vLLM, llama.cpp) are free and absent.
func DefaultPrices() Prices {
	return Prices{
		"gpt-4o":       {2.50, 10.00},
		"gpt-4o-mini":  {0.15, 0.60},
		"gpt-4.1":      {2.00, 8.00},
		"gpt-4.1-mini": {0.40, 1.60},
		"gpt-4.1-nano": {0.10, 0.40},
		"gpt-5":        {1.25, 10.00},
		"gpt-5-mini":   {0.25, 2.00},
		"gpt-5-nano":   {0.05, 0.40},
		"o3":           {2.00, 8.00},
		"o4-mini":      {1.10, 4.40},
	}
}

// MaxPricesFileBytes bounds WEFT_PRICES_FILE (a price per model: a few KB in practice).
const MaxPricesFileBytes = 1 << 20

// LoadPrices reads a JSON file {"model": {"inputPerMTok": 1.0, "outputPerMTok": 2.0}} over the
// defaults.
func LoadPrices(path string) (Prices, error) {
	p := DefaultPrices()
	if path == "" {
		return p, nil
	}
	data, err := safefile.Read(path, MaxPricesFileBytes, "WEFT_PRICES_FILE")
	if err != nil {
		return nil, err
	}
	var over Prices
	if err := json.Unmarshal(data, &over); err != nil {
		return nil, fmt.Errorf("WEFT_PRICES_FILE %s: want {\"model\": {\"inputPerMTok\": N, \"outputPerMTok\": N}}: %w", path, err)
	}
	for k, v := range over {
		p[k] = v
	}
	return p, nil
}

// Lookup finds the price of a model.
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best := ""
	for k := range p {
		if strings.HasPrefix(model, k) && len(k) > len(best) {
			best = k
		}
	}
	if best == "" {
		return Price{}, false
	}
	return p[best], true
}

// Cost is the price of a call; the answering model is looked up first, then the requested one.
func (p Prices) Cost(answered, requested string, in, out int64) float64 {
	pr, ok := p.Lookup(answered)
	if !ok {
		if pr, ok = p.Lookup(requested); !ok {
			return 0
		}
	}
	return (float64(in)*pr.InputPerMTok + float64(out)*pr.OutputPerMTok) / 1e6
}

// parseAliases reads "fast=gpt-4o-mini,smart=gpt-4.1".
func parseAliases(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range splitList(s) {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.TrimSpace(k) != "" && strings.TrimSpace(v) != "" {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}
