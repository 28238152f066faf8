package client

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	tclient "go.temporal.io/sdk/client"
)

// EnvGRPCCompression sets the gRPC compression of weft's connections to Temporal: gzip or none.
// Unset, a connection to a loopback address is not compressed and any other is gzipped.
const EnvGRPCCompression = "WEFT_GRPC_COMPRESSION"

// GRPCCompression is the gRPC compression for a connection to address. The Temporal SDK gzips
// every request by default, and the server answers in kind. Across a network that saves bytes;
// to a server on the same machine (weft dev, a worker beside its server) the bytes never leave
// it, and gzip is only CPU: a third of the CPU of a forEach of 10,000 embeds in batches, most of
// it compressing the batches' vectors. WEFT_GRPC_COMPRESSION decides instead when set.
func GRPCCompression(address string) (tclient.GrpcCompression, error) {
	switch v := strings.TrimSpace(os.Getenv(EnvGRPCCompression)); v {
	case "gzip":
		return &tclient.GrpcCompressionGzip{}, nil
	case "none":
		return &tclient.GrpcCompressionNone{}, nil
	case "":
	default:
		return nil, fmt.Errorf("%s=%q: write gzip or none, or unset it (then a loopback address is not compressed, any other is gzipped)", EnvGRPCCompression, v)
	}
	if loopback(address) {
		return &tclient.GrpcCompressionNone{}, nil
	}
	return &tclient.GrpcCompressionGzip{}, nil
}

// loopback reports whether address (host:port, or a host) names this machine: localhost or a
// loopback IP. A name that resolves to one is not looked up: it is compressed.
func loopback(address string) bool {
	host := address
	if h, _, err := net.SplitHostPort(address); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.Unmap().IsLoopback()
}
