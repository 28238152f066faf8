package auth

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Built-in roles. Any other role name is a routing role: review steps name it in their
// reviewers ("role:finance"); it grants nothing by itself.
const (
	// RoleReader sees and calls the read-only tools (state, listings, validation, resources).
	RoleReader = "reader"
	// RoleRunner is a reader that starts, cancels and retries runs, chats and calls write tools.
	RoleRunner = "runner"
	// RoleReviewer is a reader that decides reviews.
	RoleReviewer = "reviewer"
	// RoleAdmin may do everything. Keys without roles (made before keys had them) and
	// WEFT_MCP_KEY are admins. A run's review validator knows it as runwire.RoleAdmin, the
	// same string (auth is below runwire and does not import it; TestRoleAdminIsAuths in
	// runwire holds them equal).
	RoleAdmin = "admin"
)

// BuiltinRoles lists the roles that grant something, weakest first.
var BuiltinRoles = []string{RoleReader, RoleRunner, RoleReviewer, RoleAdmin}

// Identity is who an authenticated caller is: a key's name and roles. The zero Identity is
// nobody: the operator on this machine (stdio, loopback without login), who is not limited.
type Identity struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
}

// Has reports whether the identity holds role: admin holds every role, runner and reviewer
// include reader; routing roles are held only when listed.
func (id Identity) Has(role string) bool {
	if slices.Contains(id.Roles, RoleAdmin) || slices.Contains(id.Roles, role) {
		return true
	}
	if role == RoleReader {
		return slices.Contains(id.Roles, RoleRunner) || slices.Contains(id.Roles, RoleReviewer)
	}
	return false
}

// String names the identity with its roles: "ana (reviewer, finance)".
func (id Identity) String() string {
	return fmt.Sprintf("%s (%s)", id.Name, strings.Join(id.Roles, ", "))
}

// Refusal says that id lacks role to do what, and how the operator grants it.
func (id Identity) Refusal(what, role string) string {
	roles, flags := "no role", ""
	if len(id.Roles) > 0 {
		roles = "the roles " + strings.Join(id.Roles, ", ")
	}
	for _, r := range id.Roles {
		if r != role {
			flags += " --role " + r
		}
	}
	return fmt.Sprintf("%s needs the role %q; %s has %s. The operator grants it with a key that has the role: weft mcp generate-key --name %s%s --role %s (then revoke the old key: weft mcp revoke-key ID)",
		what, role, id.Name, roles, id.Name, flags, role)
}

type identityKey struct{}

// WithIdentity returns ctx carrying the authenticated identity.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the authenticated identity ctx carries; ok is false when nobody
// authenticated (the operator on this machine).
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

var (
	namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$`)
	rolePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
)

// CheckName refuses names that could not be told apart in a review's reviewers list.
func CheckName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("--name %q: use letters, digits and . _ @ + - (at most 64, no spaces or colons), e.g. --name ana", name)
	}
	return nil
}

// CheckRole refuses role names that are not lower-case words.
func CheckRole(role string) error {
	if !rolePattern.MatchString(role) {
		return fmt.Errorf("--role %q: use lower-case letters, digits and . _ - (built-in: %s; any other name is a routing role for review steps)", role, strings.Join(BuiltinRoles, ", "))
	}
	return nil
}

func dedupe(roles []string) []string {
	var out []string
	for _, r := range roles {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
