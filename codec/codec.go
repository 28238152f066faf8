package codec

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/weftworks/weft/internal/safefile"
)

// Metadata encodings of weft's codecs.
const (
	EncodingZstd      = "binary/zstd"
	EncodingEncrypted = "binary/encrypted"
	metaKeyID         = "encryption-key-id"
	metaEncoding      = "encoding"
)

// DefaultCompressAbove is the payload size from which payloads are compressed.
const DefaultCompressAbove = 4 << 10

// Options configure the codecs.
type Options struct {
	// Keys by id, 32 bytes each (AES-256). Empty: no encryption.
	Keys map[string][]byte
	// Current is the id new payloads are encrypted with (default: the only key, or the
	// first in WEFT_CODEC_KEYS).
	Current string
	// CompressAbove is the smallest payload compressed: 0 means DefaultCompressAbove when
	// encrypting and never otherwise (a plain payload stays readable by every Temporal tool);
	// <0 never.
	CompressAbove int
}

// FromEnv reads WEFT_CODEC_KEYS ("id=base64key,id2=base64key", the first encrypts) or
// WEFT_CODEC_KEY_FILE (JSON {"current": "id", "keys": {"id": "base64key"}}), and
// WEFT_CODEC_COMPRESS_ABOVE (bytes; -1 disables compression).
func FromEnv(getenv func(string) string) (Options, error) {
	o := Options{Keys: map[string][]byte{}}
	if v := getenv("WEFT_CODEC_COMPRESS_ABOVE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return o, fmt.Errorf("WEFT_CODEC_COMPRESS_ABOVE %q is not a number of bytes", v)
		}
		o.CompressAbove = n
	}
	add := func(id, b64, where string) error {
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		if err != nil || len(key) != 32 {
			return fmt.Errorf("%s: key %q must be 32 bytes in base64 (make one with: head -c 32 /dev/urandom | base64)", where, id)
		}
		o.Keys[id] = key
		return nil
	}
	if v := getenv("WEFT_CODEC_KEYS"); v != "" {
		for i, part := range strings.Split(v, ",") {
			id, b64, ok := strings.Cut(strings.TrimSpace(part), "=")
			if !ok || id == "" {
				return o, fmt.Errorf("WEFT_CODEC_KEYS: write id=base64key,id2=base64key (the first encrypts)")
			}
			if err := add(id, b64, "WEFT_CODEC_KEYS"); err != nil {
				return o, err
			}
			if i == 0 {
				o.Current = id
			}
		}
	}
	if p := getenv("WEFT_CODEC_KEY_FILE"); p != "" {
		data, err := safefile.Read(p, 1<<20, "WEFT_CODEC_KEY_FILE")
		if err != nil {
			return o, err
		}
		var f struct {
			Current string            `json:"current"`
			Keys    map[string]string `json:"keys"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			return o, fmt.Errorf("WEFT_CODEC_KEY_FILE %s: want {\"current\": \"id\", \"keys\": {\"id\": \"base64key\"}}: %w", p, err)
		}
		for id, b64 := range f.Keys {
			if err := add(id, b64, "WEFT_CODEC_KEY_FILE"); err != nil {
				return o, err
			}
		}
		if f.Current != "" {
			o.Current = f.Current
		}
	}
	if len(o.Keys) > 0 && o.Current == "" {
		ids := make([]string, 0, len(o.Keys))
		for id := range o.Keys {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		o.Current = ids[len(ids)-1]
	}
	if o.Current != "" {
		if _, ok := o.Keys[o.Current]; !ok {
			return o, fmt.Errorf("the current key %q is not among the keys", o.Current)
		}
	}
	return o, nil
}

// Codecs returns the payload codecs in the order NewCodecDataConverter wants them (encryption
// wraps compression).
func Codecs(o Options) ([]converter.PayloadCodec, error) {
	var out []converter.PayloadCodec
	if len(o.Keys) > 0 {
		enc := &Encryption{keys: map[string]cipher.AEAD{}, current: o.Current}
		for id, k := range o.Keys {
			block, err := aes.NewCipher(k)
			if err != nil {
				return nil, fmt.Errorf("key %s: %w", id, err)
			}
			gcm, err := cipher.NewGCM(block)
			if err != nil {
				return nil, fmt.Errorf("key %s: %w", id, err)
			}
			enc.keys[id] = gcm
		}
		out = append(out, enc)
	}
	threshold := o.CompressAbove
	if threshold == 0 && len(o.Keys) > 0 {
		threshold = DefaultCompressAbove
	}
	if threshold > 0 {
		out = append(out, &Compression{Above: threshold})
	}
	return out, nil
}

// DataConverter is Temporal's default converter with the codecs (the default alone when none).
func DataConverter(o Options) (converter.DataConverter, error) {
	codecs, err := Codecs(o)
	if err != nil {
		return nil, err
	}
	if len(codecs) == 0 {
		return converter.GetDefaultDataConverter(), nil
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), codecs...), nil
}

// Compression compresses payloads of at least Above bytes with zstd.
type Compression struct{ Above int }

var (
	zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	zdec, _ = zstd.NewReader(nil)
)

// Encode implements converter.PayloadCodec.
func (c *Compression) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		raw, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		if len(raw) < c.Above {
			out[i] = p
			continue
		}
		z := zenc.EncodeAll(raw, nil)
		if len(z) >= len(raw) {
			out[i] = p // incompressible: keep as is
			continue
		}
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{metaEncoding: []byte(EncodingZstd)}, Data: z}
	}
	return out, nil
}

// Decode implements converter.PayloadCodec.
func (c *Compression) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[metaEncoding]) != EncodingZstd {
			out[i] = p
			continue
		}
		raw, err := zdec.DecodeAll(p.GetData(), nil)
		if err != nil {
			return nil, fmt.Errorf("decompressing a payload: %w", err)
		}
		orig := &commonpb.Payload{}
		if err := proto.Unmarshal(raw, orig); err != nil {
			return nil, fmt.Errorf("decompressing a payload: %w", err)
		}
		out[i] = orig
	}
	return out, nil
}

// Encryption encrypts payloads with AES-256-GCM under the current key id.
type Encryption struct {
	keys    map[string]cipher.AEAD
	current string
}

// Encode implements converter.PayloadCodec.
func (e *Encryption) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	gcm := e.keys[e.current]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		raw, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, gcm.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		sealed := gcm.Seal(nonce, nonce, raw, []byte(e.current))
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{metaEncoding: []byte(EncodingEncrypted), metaKeyID: []byte(e.current)}, Data: sealed}
	}
	return out, nil
}

// ErrUnknownKey: a payload was encrypted with a key this process does not have.
var ErrUnknownKey = errors.New("unknown encryption key")

// Decode implements converter.PayloadCodec.
func (e *Encryption) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[metaEncoding]) != EncodingEncrypted {
			out[i] = p // written before encryption was turned on
			continue
		}
		id := string(p.GetMetadata()[metaKeyID])
		gcm, ok := e.keys[id]
		if !ok {
			return nil, fmt.Errorf("%w: a payload is encrypted with key %q, which this process does not have: add it to WEFT_CODEC_KEYS (old keys keep decrypting)", ErrUnknownKey, id)
		}
		data := p.GetData()
		if len(data) < gcm.NonceSize() {
			return nil, errors.New("an encrypted payload is too short")
		}
		raw, err := gcm.Open(nil, data[:gcm.NonceSize()], data[gcm.NonceSize():], []byte(id))
		if err != nil {
			return nil, fmt.Errorf("decrypting a payload with key %q: %w", id, err)
		}
		orig := &commonpb.Payload{}
		if err := proto.Unmarshal(raw, orig); err != nil {
			return nil, err
		}
		out[i] = orig
	}
	return out, nil
}

// IsEncrypted reports whether a payload is encrypted (tests, tools).
func IsEncrypted(p *commonpb.Payload) bool {
	return bytes.Equal(p.GetMetadata()[metaEncoding], []byte(EncodingEncrypted))
}
