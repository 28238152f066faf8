package embedder

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strings"
	"sync"
	"unicode"
)

// Model is the name the embedder reports wherever a model name appears.
const Model = "local-glove-sif-100d"

// Dimensions of every vector.
const Dimensions = 100

//go:embed glove100k.bin.gz
var asset []byte

// sifA is SIF's smoothing constant: weight(w) = a / (a + p(w)).
const sifA = 1e-3

// Embedder embeds texts. It is safe for concurrent use.
type Embedder struct {
	index   map[string]int32
	vectors []int8
	scales  []float32
	common  []float32
	weights []float32 // SIF weight by frequency rank
	oovW    float32
	norm    float32 // typical word-vector norm, for scaling trigram vectors
}

var (
	once   sync.Once
	shared *Embedder
	errLd  error
)

// Load returns the shared embedder, decoding the embedded asset on first use (~0.3 s).
func Load() (*Embedder, error) {
	once.Do(func() { shared, errLd = decode(asset) })
	return shared, errLd
}

func decode(data []byte) (*Embedder, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("embedder asset: %w", err)
	}
	r := bufio.NewReader(zr)
	magic := make([]byte, 4)
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != "WGV1" {
		return nil, errors.New("embedder asset: not a WGV1 file")
	}
	var n, dims uint32
	le := binary.LittleEndian
	if err := binary.Read(r, le, &n); err != nil {
		return nil, err
	}
	if err := binary.Read(r, le, &dims); err != nil {
		return nil, err
	}
	if dims != Dimensions {
		return nil, fmt.Errorf("embedder asset: %d dimensions, want %d", dims, Dimensions)
	}
	e := &Embedder{index: make(map[string]int32, n), common: make([]float32, dims), scales: make([]float32, n),
		vectors: make([]int8, int(n)*int(dims)), weights: make([]float32, n)}
	if err := binary.Read(r, le, e.common); err != nil {
		return nil, err
	}
	buf := make([]byte, 256)
	for i := uint32(0); i < n; i++ {
		l, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(r, buf[:l]); err != nil {
			return nil, err
		}
		e.index[string(buf[:l])] = int32(i)
	}
	if err := binary.Read(r, le, e.scales); err != nil {
		return nil, err
	}
	raw := make([]byte, len(e.vectors))
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, err
	}
	for i, b := range raw {
		e.vectors[i] = int8(b)
	}
	// Zipf estimate of word probability by rank.
	h := math.Log(1.78 * float64(n))
	for i := range e.weights {
		p := 1 / (float64(i+10) * h)
		e.weights[i] = float32(sifA / (sifA + p))
	}
	e.oovW = 1
	var total float64
	for i := 0; i < 1000; i++ {
		total += float64(e.wordNorm(int32(i)))
	}
	e.norm = float32(total / 1000)
	return e, nil
}

func (e *Embedder) wordNorm(i int32) float32 {
	var s float32
	for _, q := range e.vectors[int(i)*Dimensions : int(i+1)*Dimensions] {
		x := float32(q) * e.scales[i]
		s += x * x
	}
	return float32(math.Sqrt(float64(s)))
}

// Tokens splits text into lower-case words.
func Tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'')
	})
}

// Embed returns the unit-length embedding of text (all zeros when it has no words).
func (e *Embedder) Embed(text string) []float32 {
	acc := make([]float32, Dimensions)
	for _, tok := range Tokens(text) {
		if i, ok := e.index[tok]; ok {
			w := e.weights[i] * e.scales[i]
			for d, q := range e.vectors[int(i)*Dimensions : int(i+1)*Dimensions] {
				acc[d] += w * float32(q)
			}
			continue
		}
		trigrams(tok, func(v []float32) {
			for d := range acc {
				acc[d] += e.oovW * e.norm * v[d]
			}
		})
	}
	// Remove the common direction every text shares.
	var dot float32
	for d := range acc {
		dot += acc[d] * e.common[d]
	}
	for d := range acc {
		acc[d] -= dot * e.common[d]
	}
	return unit(acc)
}

// trigrams calls fn with a unit pseudo-random vector derived from the character trigrams of an
// unknown word, so unknown words that share spelling land near each other.
func trigrams(tok string, fn func([]float32)) {
	w := []rune("<" + tok + ">")
	sum := make([]float32, Dimensions)
	count := 0
	for i := 0; i+3 <= len(w); i++ {
		h := fnv.New64a()
		_, _ = h.Write([]byte(string(w[i : i+3])))
		s := h.Sum64()
		for d := range sum {
			s += 0x9E3779B97F4A7C15
			z := s
			z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
			z = (z ^ (z >> 27)) * 0x94D049BB133111EB
			z ^= z >> 31
			sum[d] += float32(z>>11)/float32(1<<53)*2 - 1
		}
		count++
	}
	if count > 0 {
		fn(unit(sum))
	}
}

func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// Cosine returns the cosine similarity of two vectors of the same length (0 when either is zero).
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
