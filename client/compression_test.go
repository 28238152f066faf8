package client_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"

	weftclient "github.com/weftworks/weft/client"
)

// TestGRPCCompression: a connection to this machine is not gzipped, any other is (the SDK's
// default), and WEFT_GRPC_COMPRESSION decides when set; a value it does not know is an error that
// names it.
func TestGRPCCompression(t *testing.T) {
	none, gzip := &tclient.GrpcCompressionNone{}, &tclient.GrpcCompressionGzip{}
	for _, tc := range []struct {
		env, address string
		want         tclient.GrpcCompression
	}{
		{"", "127.0.0.1:7233", none},
		{"", "127.8.9.10:7233", none},
		{"", "localhost:7233", none},
		{"", "LOCALHOST.:7233", none},
		{"", "[::1]:7233", none},
		{"", "[::ffff:127.0.0.1]:7233", none},
		{"", "127.0.0.1", none},
		{"", "10.0.0.5:7233", gzip},
		{"", "temporal.example.com:7233", gzip},
		{"", "localhost.example.com:7233", gzip},
		{"", "ns.a1b2c.tmprl.cloud:7233", gzip},
		{"", "[2001:db8::1]:7233", gzip},
		{"gzip", "127.0.0.1:7233", gzip},
		{"none", "temporal.example.com:7233", none},
		{" none ", "temporal.example.com:7233", none},
	} {
		t.Run(tc.env+"/"+tc.address, func(t *testing.T) {
			t.Setenv(weftclient.EnvGRPCCompression, tc.env)
			got, err := weftclient.GRPCCompression(tc.address)
			require.NoError(t, err)
			require.IsType(t, tc.want, got)
		})
	}
	t.Setenv(weftclient.EnvGRPCCompression, "zstd")
	_, err := weftclient.GRPCCompression("127.0.0.1:7233")
	require.EqualError(t, err, `WEFT_GRPC_COMPRESSION="zstd": write gzip or none, or unset it (then a loopback address is not compressed, any other is gzipped)`)
	_, err = weftclient.Dial(t.Context(), weftclient.Options{Address: "127.0.0.1:1"})
	require.True(t, weftclient.IsInvalid(err), "a bad setting is the caller's mistake: %v", err)
}
