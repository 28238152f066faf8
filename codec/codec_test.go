package codec_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/weftworks/weft/codec"
)

func key(b byte) string {
	return base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(rune('a'+b)), 32)))
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestRoundTripRotationAndPlainPayloads(t *testing.T) {
	o1, err := codec.FromEnv(env(map[string]string{"WEFT_CODEC_KEYS": "k1=" + key(1)}))
	require.NoError(t, err)
	dc1, err := codec.DataConverter(o1)
	require.NoError(t, err)
	secret := map[string]any{"text": "private document " + strings.Repeat("lorem ipsum ", 1000)}
	p, err := dc1.ToPayload(secret)
	require.NoError(t, err)
	require.True(t, codec.IsEncrypted(p))
	require.NotContains(t, string(p.Data), "private document", "nothing readable in history")

	// Rotation: k2 encrypts new payloads; k1 still decrypts old ones.
	o2, err := codec.FromEnv(env(map[string]string{"WEFT_CODEC_KEYS": "k2=" + key(2) + ",k1=" + key(1)}))
	require.NoError(t, err)
	require.Equal(t, "k2", o2.Current)
	dc2, err := codec.DataConverter(o2)
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, dc2.FromPayload(p, &back))
	require.Equal(t, secret, back)
	p2, err := dc2.ToPayload("new")
	require.NoError(t, err)
	require.Equal(t, "k2", string(p2.Metadata["encryption-key-id"]))

	// Payloads written before encryption was turned on still read.
	plain, err := converter.GetDefaultDataConverter().ToPayload("from before")
	require.NoError(t, err)
	var s string
	require.NoError(t, dc2.FromPayload(plain, &s))
	require.Equal(t, "from before", s)

	// A process without the key says which key it lacks.
	o3, err := codec.FromEnv(env(map[string]string{"WEFT_CODEC_KEYS": "k3=" + key(3)}))
	require.NoError(t, err)
	dc3, err := codec.DataConverter(o3)
	require.NoError(t, err)
	err = dc3.FromPayload(p, &back)
	require.ErrorIs(t, err, codec.ErrUnknownKey)
	require.ErrorContains(t, err, `key "k1"`)
}

func TestCompression(t *testing.T) {
	c := &codec.Compression{Above: 1024}
	small := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"hi"`)}
	big := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"` + strings.Repeat("abc", 10000) + `"`)}
	out, err := c.Encode([]*commonpb.Payload{small, big})
	require.NoError(t, err)
	require.Same(t, small, out[0], "small payloads stay as they are")
	require.Equal(t, codec.EncodingZstd, string(out[1].Metadata["encoding"]))
	require.Less(t, len(out[1].Data), len(big.Data)/10)
	dec, err := c.Decode(out)
	require.NoError(t, err)
	require.Equal(t, big.Data, dec[1].Data)
}

func TestBadKeys(t *testing.T) {
	for _, v := range []string{"k1", "k1=short", "=" + key(1)} {
		_, err := codec.FromEnv(env(map[string]string{"WEFT_CODEC_KEYS": v}))
		require.Error(t, err, v)
	}
	_, err := codec.FromEnv(env(map[string]string{"WEFT_CODEC_COMPRESS_ABOVE": "lots"}))
	require.ErrorContains(t, err, "WEFT_CODEC_COMPRESS_ABOVE")
}

func TestNoCodecsByDefault(t *testing.T) {
	o, err := codec.FromEnv(env(nil))
	require.NoError(t, err)
	cs, err := codec.Codecs(o)
	require.NoError(t, err)
	require.Empty(t, cs, "without keys or a compression setting, payloads stay plain for every Temporal tool")
	o, err = codec.FromEnv(env(map[string]string{"WEFT_CODEC_COMPRESS_ABOVE": "1024"}))
	require.NoError(t, err)
	cs, err = codec.Codecs(o)
	require.NoError(t, err)
	require.Len(t, cs, 1)
}
