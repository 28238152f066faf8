// Package netaddr classifies IP addresses: which belong to the public internet and which do not
// (private, loopback, link-local, shared, special-purpose, reserved, and the IPv6 forms that carry
// such an IPv4 address). The http tool's dial guard (activities/http.go) and `weft check` (which
// warns about http steps aimed at literal private addresses, internal/vaipkg) use this one copy.
//
// It is a leaf: it must not import any weft package or Temporal.
package netaddr
