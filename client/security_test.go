package client

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"
)

func writePEM(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "weft-test"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &k.PublicKey, k)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(k)
	require.NoError(t, err)
	cert, key = filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	require.NoError(t, os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	return cert, key
}

func TestSecurity(t *testing.T) {
	dir := t.TempDir()
	cert, key := writePEM(t, dir)
	for _, tc := range []struct {
		name    string
		s       Security
		tls     bool
		certs   int
		ca, api bool
		err     string
	}{
		{name: "plain"},
		{name: "tls with the system roots", s: Security{TLS: true}, tls: true},
		{name: "mTLS with a private CA", s: Security{CertFile: cert, KeyFile: key, CAFile: cert}, tls: true, certs: 1, ca: true},
		{name: "API key implies TLS", s: Security{APIKey: "k"}, tls: true, api: true},
		{name: "certificate without key", s: Security{CertFile: cert}, err: "both --tls-cert-path and --tls-key-path"},
		{name: "missing file", s: Security{CertFile: filepath.Join(dir, "nope.pem"), KeyFile: key}, err: "--tls-cert-path"},
		{name: "CA file without PEM", s: Security{CAFile: filepath.Join(dir, "k.pem")}, err: "no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o tclient.Options
			err := tc.s.apply(&o)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.tls, o.ConnectionOptions.TLS != nil)
			if tc.tls {
				require.Len(t, o.ConnectionOptions.TLS.Certificates, tc.certs)
				require.Equal(t, tc.ca, o.ConnectionOptions.TLS.RootCAs != nil)
			}
			require.Equal(t, tc.api, o.Credentials != nil)
		})
	}
}
