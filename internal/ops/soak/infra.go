package soak

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weftworks/weft/internal/ops/proc"
	"github.com/weftworks/weft/internal/testkit/fakeembed"
)

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs a weft process of the campaign, its output in DIR/NAME.log.
func (e *env) start(name string, extraEnv []string, args ...string) (*proc.Proc, error) {
	env := append(append(os.Environ(), e.baseEnv()...), extraEnv...)
	return proc.Start(name, e.o.Weft, filepath.Join(e.dir, name+".log"), env, args...)
}

// storeProxy sits between the workers and the database, so the campaign can make the store
// unreachable without touching the process that serves it: Block closes every connection and
// refuses new ones until Unblock.
type storeProxy struct {
	l      net.Listener
	target string

	mu      sync.Mutex
	blocked bool
	conns   map[net.Conn]bool
}

func newStoreProxy(target string) (*storeProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &storeProxy{l: l, target: target, conns: map[net.Conn]bool{}}
	go p.serve()
	return p, nil
}

func (p *storeProxy) addr() string { return p.l.Addr().String() }

func (p *storeProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		blocked := p.blocked
		p.mu.Unlock()
		if blocked {
			c.Close()
			continue
		}
		go p.pipe(c)
	}
}

func (p *storeProxy) pipe(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

func (p *storeProxy) block() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked = true
	for c := range p.conns {
		c.Close()
	}
}

func (p *storeProxy) unblock() {
	p.mu.Lock()
	p.blocked = false
	p.mu.Unlock()
}

func (p *storeProxy) close() { p.l.Close(); p.block() }

// Fault is what the fake provider answers instead of embeddings.
type Fault string

const (
	FaultNone      Fault = ""
	Fault429       Fault = "429 with Retry-After"
	Fault500       Fault = "500"
	FaultTimeout   Fault = "no answer (timeout)"
	FaultReset     Fault = "connection reset"
	FaultMalformed Fault = "malformed JSON"
	Fault400       Fault = "400 (non-retryable)"
)

// provider is an OpenAI-compatible embeddings endpoint that behaves like the real one (usage,
// index order, model name) with latency and scripted faults, and counts what it answered.
type provider struct {
	srv     *http.Server
	url     string
	latency time.Duration

	mu       sync.Mutex
	faults   map[string][]Fault // by the first input's prefix: what the next requests get
	answered map[string]int     // successful answers per input text
}

func newProvider(latency time.Duration) (*provider, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &provider{latency: latency, faults: map[string][]Fault{}, answered: map[string]int{}, url: "http://" + l.Addr().String() + "/v1"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", p.embeddings)
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

// script makes the requests whose first input starts with prefix get faults, in order.
func (p *provider) script(prefix string, faults ...Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults[prefix] = append(p.faults[prefix], faults...)
}

func (p *provider) count(text string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.answered[text]
}

func (p *provider) embeddings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input          any    `json:"input"`
		Model          string `json:"model"`
		Dimensions     int    `json:"dimensions"`
		EncodingFormat string `json:"encoding_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad body","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	var inputs []string
	switch v := req.Input.(type) {
	case string:
		inputs = []string{v}
	case []any:
		for _, x := range v {
			inputs = append(inputs, fmt.Sprint(x))
		}
	}
	p.mu.Lock()
	fault := FaultNone
	if len(inputs) > 0 {
		for prefix, fs := range p.faults {
			if strings.HasPrefix(inputs[0], prefix) && len(fs) > 0 {
				fault, p.faults[prefix] = fs[0], fs[1:]
				break
			}
		}
	}
	p.mu.Unlock()
	time.Sleep(p.latency)
	switch fault {
	case Fault429:
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`)
		return
	case Fault500:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`)
		return
	case Fault400:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`)
		return
	case FaultTimeout:
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Minute):
		}
		return
	case FaultReset:
		if hj, ok := w.(http.Hijacker); ok {
			c, _, err := hj.Hijack()
			if err == nil {
				if tc, ok := c.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				c.Close()
			}
		}
		return
	case FaultMalformed:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,`)
		return
	}
	dims := req.Dimensions
	if dims == 0 {
		dims = 1536
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"` // numbers, or base64 when the request asks for it
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Model: req.Model}
	tokens := 0
	for i, text := range inputs {
		var emb any = vector(text, dims)
		if req.EncodingFormat == "base64" {
			emb = fakeembed.Base64Vector(vector(text, dims))
		}
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: emb})
		tokens += len(strings.Fields(text)) + 1
	}
	out.Usage.PromptTokens, out.Usage.TotalTokens = tokens, tokens
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(out); err == nil {
		p.mu.Lock()
		for _, text := range inputs {
			p.answered[text]++
		}
		p.mu.Unlock()
	}
}

// vector is a deterministic unit vector for text.
func vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	h := sha256.Sum256([]byte(text))
	seed := binary.LittleEndian.Uint64(h[:8])
	var norm float64
	for i := range v {
		seed = seed*6364136223846793005 + 1442695040888963407
		x := float64(int64(seed>>11))/float64(1<<52) - 1
		v[i] = float32(x)
		norm += x * x
	}
	n := float32(math.Sqrt(norm))
	for i := range v {
		v[i] /= n
	}
	return v
}

// metricValue reads one unlabelled value from a Prometheus text endpoint.
func metricValue(ctx context.Context, url, name string) (float64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("%s: no metric %s", url, name)
}

func durations(ds []time.Duration) (p50, max time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[len(s)-1]
}
