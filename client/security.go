package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	tclient "go.temporal.io/sdk/client"

	"github.com/weftworks/weft/internal/safefile"
)

// Security is how a connection to Temporal is protected: TLS (with a client certificate for
// mTLS, and a CA for a private server certificate) and/or an API key, as Temporal Cloud asks.
type Security struct {
	TLS        bool   // TLS with the system's roots (implied by every other field)
	CertFile   string // client certificate (mTLS), PEM
	KeyFile    string // its private key, PEM
	CAFile     string // CA that signed the server's certificate, PEM (default: the system's roots)
	ServerName string // the server name to verify (default: the address's host)
	APIKey     string // sent as a bearer token
}

func (s Security) enabled() bool {
	return s.TLS || s.CertFile != "" || s.KeyFile != "" || s.CAFile != "" || s.ServerName != "" || s.APIKey != ""
}

// maxPEMBytes bounds each certificate, key and CA file (a CA bundle of every public root is
// about 200 KB).
const maxPEMBytes = 4 << 20

// tlsConfig builds the TLS settings; errors name the file and the flag to fix.
func (s Security) tlsConfig() (*tls.Config, error) {
	if !s.enabled() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.ServerName}
	if (s.CertFile == "") != (s.KeyFile == "") {
		return nil, errors.New("mTLS needs both --tls-cert-path and --tls-key-path (TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY)")
	}
	if s.CertFile != "" {
		certPEM, err := safefile.Read(s.CertFile, maxPEMBytes, "--tls-cert-path")
		if err != nil {
			return nil, err
		}
		keyPEM, err := safefile.Read(s.KeyFile, maxPEMBytes, "--tls-key-path")
		if err != nil {
			return nil, err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert-path %s / --tls-key-path %s: %w", s.CertFile, s.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if s.CAFile != "" {
		pem, err := safefile.Read(s.CAFile, maxPEMBytes, "--tls-ca-path")
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca-path %s: no PEM certificate in it", s.CAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// apply sets the connection options of o.
func (s Security) apply(o *tclient.Options) error {
	cfg, err := s.tlsConfig()
	if err != nil {
		return err
	}
	o.ConnectionOptions.TLS = cfg
	if s.APIKey != "" {
		o.Credentials = tclient.NewAPIKeyStaticCredentials(s.APIKey)
	}
	return nil
}
