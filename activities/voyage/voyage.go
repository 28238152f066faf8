package voyage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/weftworks/weft/activities/provider"
)

// DefaultBaseURL is Voyage AI's API.
const DefaultBaseURL = "https://api.voyageai.com/v1"

// BatchSize is how many texts one embeddings request carries (the API allows up to 1,000).
const BatchSize = 128

const name = "voyage"

// Client talks to the Voyage API.
type Client struct {
	BaseURL string
	APIKey  string
	HTTP    *http.Client
}

// New returns a client; baseURL "" means DefaultBaseURL.
func New(apiKey, baseURL string) *Client {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), APIKey: apiKey, HTTP: &http.Client{Timeout: 60 * time.Second}}
}

type apiError struct {
	Detail string `json:"detail"`
}

func (c *Client) post(ctx context.Context, path string, body, out any) error {
	if c.APIKey == "" {
		return &provider.Error{Provider: name, Msg: "no API key", Setting: "VOYAGE_API_KEY"}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.APIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return provider.Network(name, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return provider.Network(name, err)
	}
	if resp.StatusCode/100 != 2 {
		var ae apiError
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &ae) == nil && ae.Detail != "" {
			msg = ae.Detail
		}
		return provider.FromStatus(name, resp.StatusCode, resp.Header, truncate(msg, 300), "VOYAGE_API_KEY")
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &provider.Error{Provider: name, Status: resp.StatusCode, Retryable: true, Msg: "malformed response: " + err.Error(), Err: err}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

type embedRequest struct {
	Input           []string `json:"input"`
	Model           string   `json:"model"`
	InputType       string   `json:"input_type,omitempty"`
	OutputDimension int      `json:"output_dimension,omitempty"`
	// EncodingFormat "base64" asks for each vector as the base64 of its little-endian float32s:
	// 4 bytes a dimension instead of ~10 characters of JSON number, and no number parsing.
	EncodingFormat string `json:"encoding_format,omitempty"`
}

// vector is an embedding as the API answers it: base64 text (what Embed asks for) or, from a
// server that does not honour encoding_format, a list of numbers.
type vector []float32

func (v *vector) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		return json.Unmarshal(b, (*[]float32)(v))
	}
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return fmt.Errorf("embedding: %w", err)
	}
	if len(raw)%4 != 0 {
		return fmt.Errorf("embedding: %d bytes of base64 are not whole float32s", len(raw))
	}
	*v = make([]float32, len(raw)/4)
	for i := range *v {
		(*v)[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return nil
}

type embedResponse struct {
	Data []struct {
		Embedding vector `json:"embedding"`
		Index     int    `json:"index"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		TotalTokens int64 `json:"total_tokens"`
	} `json:"usage"`
}

// Embed embeds texts in batches of BatchSize.
func (c *Client) Embed(ctx context.Context, texts []string, inputType, model string, dimensions int) (*provider.Embeddings, error) {
	out := &provider.Embeddings{Model: model, Vectors: make([][]float32, len(texts))}
	for start := 0; start < len(texts); start += BatchSize {
		end := min(start+BatchSize, len(texts))
		var resp embedResponse
		if err := c.post(ctx, "/embeddings", embedRequest{Input: texts[start:end], Model: model, InputType: inputType, OutputDimension: dimensions, EncodingFormat: "base64"}, &resp); err != nil {
			return nil, err
		}
		if len(resp.Data) != end-start {
			return nil, &provider.Error{Provider: name, Retryable: true, Msg: fmt.Sprintf("asked for %d embeddings, got %d", end-start, len(resp.Data))}
		}
		for _, d := range resp.Data {
			if d.Index < 0 || d.Index >= end-start {
				return nil, &provider.Error{Provider: name, Retryable: true, Msg: fmt.Sprintf("embedding index %d out of range", d.Index)}
			}
			out.Vectors[start+d.Index] = []float32(d.Embedding)
		}
		out.Tokens += resp.Usage.TotalTokens
		if resp.Model != "" {
			out.Model = resp.Model
		}
	}
	return out, nil
}

type rerankRequest struct {
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	Model     string   `json:"model"`
	TopK      int      `json:"top_k,omitempty"`
}

type rerankResponse struct {
	Data []struct {
		Index          int     `json:"index"`
		RelevanceScore float64 `json:"relevance_score"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		TotalTokens int64 `json:"total_tokens"`
	} `json:"usage"`
}

// Rerank orders documents by relevance to query.
func (c *Client) Rerank(ctx context.Context, query string, documents []string, model string, topK int) (*provider.Ranking, error) {
	var resp rerankResponse
	if err := c.post(ctx, "/rerank", rerankRequest{Query: query, Documents: documents, Model: model, TopK: topK}, &resp); err != nil {
		return nil, err
	}
	out := &provider.Ranking{Model: model, Tokens: resp.Usage.TotalTokens}
	if resp.Model != "" {
		out.Model = resp.Model
	}
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(documents) {
			return nil, &provider.Error{Provider: name, Retryable: true, Msg: fmt.Sprintf("rerank index %d out of range", d.Index)}
		}
		out.Results = append(out.Results, provider.Ranked{Index: d.Index, Score: d.RelevanceScore})
	}
	sort.SliceStable(out.Results, func(i, j int) bool { return out.Results[i].Score > out.Results[j].Score })
	return out, nil
}
