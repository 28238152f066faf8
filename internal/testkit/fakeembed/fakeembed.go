package fakeembed

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is a running fake.
type Server struct {
	// MaxInputChars: an input longer than this makes the request fail with a 400 (the real
	// API's context limit, counted in characters here).
	MaxInputChars int
	// Latency is how long each answer takes.
	Latency time.Duration
	// IgnoreEncodingFormat answers JSON numbers even when base64 is asked for, as some
	// OpenAI-compatible servers do.
	IgnoreEncodingFormat bool

	srv *http.Server
	url string

	mu       sync.Mutex
	requests int
	inputs   int
	base64   int              // requests that asked for base64 vectors
	fail     func(n int) bool // the nth request (from 1) gets a 500
}

// Start serves the fake on a local port until Close.
func Start(latency time.Duration) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Latency: latency, MaxInputChars: 32_000, url: "http://" + l.Addr().String() + "/v1"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// URL is the base URL to give as OPENAI_BASE_URL.
func (s *Server) URL() string { return s.url }

// Close stops the server.
func (s *Server) Close() { _ = s.srv.Close() }

// FailWhen makes the requests for which f(n) is true (n counts from 1) fail with a 500.
func (s *Server) FailWhen(f func(n int) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = f
}

// Base64Requests returns how many requests so far asked for base64 vectors.
func (s *Server) Base64Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base64
}

// Counts returns the requests answered or refused so far and the inputs they carried.
func (s *Server) Counts() (requests, inputs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.inputs
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input          any    `json:"input"`
		Model          string `json:"model"`
		Dimensions     int    `json:"dimensions"`
		EncodingFormat string `json:"encoding_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		refuse(w, http.StatusBadRequest, "We could not parse the JSON body of your request.", "invalid_request_error", "")
		return
	}
	var inputs []string
	switch v := req.Input.(type) {
	case string:
		inputs = []string{v}
	case []any:
		for _, x := range v {
			str, ok := x.(string)
			if !ok {
				refuse(w, http.StatusBadRequest, "'input' must be a string or a list of strings", "invalid_request_error", "")
				return
			}
			inputs = append(inputs, str)
		}
	}
	switch req.EncodingFormat {
	case "", "float", "base64":
	default:
		refuse(w, http.StatusBadRequest, fmt.Sprintf("'%s' is not one of ['float', 'base64'] - 'encoding_format'", req.EncodingFormat), "invalid_request_error", "")
		return
	}
	b64 := req.EncodingFormat == "base64" && !s.IgnoreEncodingFormat
	s.mu.Lock()
	s.requests++
	s.inputs += len(inputs)
	if req.EncodingFormat == "base64" {
		s.base64++
	}
	n, fail := s.requests, s.fail
	s.mu.Unlock()
	if s.Latency > 0 {
		time.Sleep(s.Latency)
	}
	if fail != nil && fail(n) {
		refuse(w, http.StatusInternalServerError, "The server had an error while processing your request.", "server_error", "")
		return
	}
	if len(inputs) == 0 {
		refuse(w, http.StatusBadRequest, "'input' is empty", "invalid_request_error", "")
		return
	}
	for _, in := range inputs {
		if len(in) > s.MaxInputChars {
			refuse(w, http.StatusBadRequest, fmt.Sprintf("This model's maximum context length is %d tokens, however you requested more. Please reduce your prompt.", s.MaxInputChars/4),
				"invalid_request_error", "context_length_exceeded")
			return
		}
	}
	dims := req.Dimensions
	if dims <= 0 {
		dims = 1536
	}
	data := make([]map[string]any, len(inputs))
	tokens := 0
	for i, in := range inputs {
		var emb any = vector(in, dims)
		if b64 {
			emb = Base64Vector(emb.([]float32))
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
		tokens += len(strings.Fields(in)) + 1
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

// vector is a deterministic unit vector of the text.
func vector(text string, dims int) []float32 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, text)
	x := h.Sum64() | 1
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x ^= x << 13 // xorshift64: cheap, deterministic
		x ^= x >> 7
		x ^= x << 17
		f := float64(x)/math.MaxUint64*2 - 1
		v[i] = float32(f)
		norm += f * f
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

// Base64Vector is v as the API sends it for "encoding_format": "base64": its float32s,
// little-endian, in standard base64.
func Base64Vector(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func refuse(w http.ResponseWriter, status int, msg, typ, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"message": msg, "type": typ}
	if code != "" {
		body["code"] = code
	}
	b, _ := json.Marshal(map[string]any{"error": body})
	_, _ = w.Write(b)
}
