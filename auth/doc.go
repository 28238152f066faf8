// Package auth holds what weft's HTTP servers (the MCP gateway, the console, the codec server)
// share to decide who may talk to them and what they may do: bearer keys stored hashed in a key
// file (LoadKeys, GenerateNamedKey, ListKeys, RevokeKey, KeyFile), re-read when the file changes so
// a revoked key is refused at once; identities with roles (Identity, the built-in roles reader,
// runner, reviewer and admin, WithIdentity and IdentityFrom to carry them in a context); OAuth 2.1
// access tokens beside the keys (oauth.go: OAuth validates bearer JWTs against an issuer, an
// audience and the issuer's JWKS, and serves the protected-resource metadata of RFC 9728; a Gate
// takes them WithOAuth); a limit on
// failed attempts per client address (FailureLimiter, ClientAddress); and a guard against DNS
// rebinding (HostGuard: the Host header must be one that is served).
//
// It is plain net/http: it must not import Temporal (go.temporal.io), client/, workflows/ or any
// server that uses it. What a role allows is decided by the servers (mcp/roles.go, the console);
// this package only says who the caller is.
package auth
