package activities

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHTTPGuardRefusesWhatIsNotPublic: the http tool's dial-time guard lets through public
// addresses only; every other range (cloud metadata services included, however written) needs
// WEFT_HTTP_ALLOW.
func TestHTTPGuardRefusesWhatIsNotPublic(t *testing.T) {
	tools := NewTools(Config{})
	for _, tc := range []struct {
		addr   string
		public bool
	}{
		{"93.184.215.14", true}, {"2606:4700::6810:85e5", true}, {"64:ff9b::5db8:d70e", true}, // NAT64 of a public address
		{"127.0.0.1", false}, {"10.1.2.3", false}, {"172.16.0.1", false}, {"192.168.1.1", false},
		{"169.254.169.254", false}, {"0.0.0.0", false}, {"::1", false}, {"::", false}, {"fe80::1", false},
		{"fc00::1", false}, {"::ffff:127.0.0.1", false},
		{"100.100.100.200", false}, // a cloud's metadata service (shared address space)
		{"100.64.0.1", false}, {"192.0.0.192", false}, {"198.18.0.1", false}, {"240.0.0.1", false},
		{"255.255.255.255", false}, {"192.0.2.1", false},
		{"64:ff9b::a9fe:a9fe", false}, {"64:ff9b::7f00:1", false}, // NAT64 of 169.254.169.254 and 127.0.0.1
		{"2002:7f00:1::", false}, {"2002:a9fe:a9fe::", false}, // 6to4 of loopback and metadata
		{"::7f00:1", false}, {"fec0::1", false}, {"2001:db8::1", false},
	} {
		require.Equal(t, tc.public, tools.httpAllowed(netip.MustParseAddr(tc.addr)), tc.addr)
	}
	allowed := NewTools(Config{HTTPAllow: []string{"100.64.0.0/10", "127.0.0.1"}})
	require.True(t, allowed.httpAllowed(netip.MustParseAddr("100.100.100.200")), "the operator allows a range on purpose")
	require.True(t, allowed.httpAllowed(netip.MustParseAddr("127.0.0.1")))
	require.False(t, allowed.httpAllowed(netip.MustParseAddr("127.0.0.2")))
}
