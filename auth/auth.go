package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Keys checks bearer keys: the hashes stored by `weft mcp generate-key` plus WEFT_MCP_KEY. The key
// file is re-read whenever its size or modification time changes (one stat per check), so a key
// revoked with `weft mcp revoke-key` is refused by every running gateway at its next request.
type Keys struct {
	path  string
	plain []entry

	mu      sync.Mutex
	stamp   string // size and modification time of the key file when last read
	entries []entry
}

// entry is one accepted key: its hash and who it stands for.
type entry struct {
	hash []byte
	id   Identity
}

// KeyFile is where generated keys are stored (hashed).
func KeyFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "weft", "mcp-keys.json")
}

// StoredKey is one key of the key file. Name and Roles are absent from files written before keys
// had them: such a key is an admin (everything), named after its id.
type StoredKey struct {
	ID      string    `json:"id"`
	SHA256  string    `json:"sha256"`
	Created time.Time `json:"created"`
	Name    string    `json:"name,omitempty"`
	Roles   []string  `json:"roles,omitempty"`
}

// Identity is who a key stands for.
func (e StoredKey) Identity() Identity {
	id := Identity{Name: e.Name, Roles: e.Roles}
	if id.Name == "" {
		id.Name = "key-" + e.ID
	}
	if len(id.Roles) == 0 {
		id.Roles = []string{RoleAdmin}
	}
	return id
}

type keyStore struct {
	Keys []StoredKey `json:"keys"`
}

// MaxKeyFileBytes bounds the key file: it is checked before it is read.
const MaxKeyFileBytes = 1 << 20

func readKeyStore(path string) (*keyStore, error) {
	ks := &keyStore{}
	f, err := openKeyFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return ks, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: point --key-file at the JSON file `weft mcp generate-key` writes", path)
	}
	if st.Size() > MaxKeyFileBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than a key file's %d: point --key-file at the JSON file `weft mcp generate-key` writes", path, st.Size(), MaxKeyFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxKeyFileBytes+1))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, ks); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ks, nil
}

// ListKeys returns the keys of the key file (hashes, ids, names and roles; never a key).
func ListKeys(path string) ([]StoredKey, error) {
	ks, err := readKeyStore(path)
	if err != nil {
		return nil, err
	}
	return ks.Keys, nil
}

// EnvKeyName is the identity of WEFT_MCP_KEY (an admin).
const EnvKeyName = "env-key"

// LoadKeys reads the key file and the extra plain keys (WEFT_MCP_KEY), which are admins named
// EnvKeyName.
func LoadKeys(path string, plain ...string) (*Keys, error) {
	k := &Keys{path: path}
	for _, p := range plain {
		if p != "" {
			h := sha256.Sum256([]byte(p))
			k.plain = append(k.plain, entry{hash: h[:], id: Identity{Name: EnvKeyName, Roles: []string{RoleAdmin}}})
		}
	}
	if err := k.reload(); err != nil {
		return nil, err
	}
	return k, nil
}

func fileStamp(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "absent"
	}
	return fmt.Sprintf("%d/%d", st.Size(), st.ModTime().UnixNano())
}

// reload reads the key file when it changed since the last read. Callers hold no lock.
func (k *Keys) reload() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	stamp := fileStamp(k.path)
	if stamp == k.stamp && k.stamp != "" {
		return nil
	}
	ks, err := readKeyStore(k.path)
	if err != nil {
		return err
	}
	var entries []entry
	for _, e := range ks.Keys {
		if h, err := hex.DecodeString(e.SHA256); err == nil {
			entries = append(entries, entry{hash: h, id: e.Identity()})
		}
	}
	k.entries, k.stamp = entries, stamp
	return nil
}

func (k *Keys) current() []entry {
	if err := k.reload(); err != nil {
		slog.Warn("keeping the previous keys: the key file cannot be read", "file", k.path, "error", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return append(append([]entry(nil), k.entries...), k.plain...)
}

// Empty reports whether no key is configured.
func (k *Keys) Empty() bool { return len(k.current()) == 0 }

// Identify returns who the presented key stands for. The key's hash is compared with every
// current hash in constant time (the loop never stops early).
func (k *Keys) Identify(key string) (Identity, bool) {
	h := sha256.Sum256([]byte(key))
	entries := k.current()
	found := -1
	for i, e := range entries {
		if subtle.ConstantTimeCompare(h[:], e.hash) == 1 && found < 0 {
			found = i
		}
	}
	if found < 0 {
		return Identity{}, false
	}
	return entries[found].id, true
}

// GenerateKey creates an admin key without a name; see GenerateNamedKey.
func GenerateKey(path string) (key, id string, err error) {
	return GenerateNamedKey(path, "", nil)
}

// GenerateNamedKey creates a key for name with roles, stores its hash and returns the key (shown
// once) and its id. No roles means admin.
func GenerateNamedKey(path, name string, roles []string) (key, id string, err error) {
	if name != "" {
		if err := CheckName(name); err != nil {
			return "", "", err
		}
	}
	for _, r := range roles {
		if err := CheckRole(r); err != nil {
			return "", "", err
		}
	}
	if len(roles) == 0 {
		roles = []string{RoleAdmin}
	}
	ks, err := readKeyStore(path)
	if err != nil {
		return "", "", err
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	key = "weft-mcp-" + hex.EncodeToString(b)
	h := sha256.Sum256([]byte(key))
	id = hex.EncodeToString(h[:4])
	ks.Keys = append(ks.Keys, StoredKey{ID: id, SHA256: hex.EncodeToString(h[:]), Created: time.Now().UTC(), Name: name, Roles: dedupe(roles)})
	return key, id, writeKeyStore(path, ks)
}

// RevokeKey removes the key with the given id (or the key itself) and returns what it was.
func RevokeKey(path, idOrKey string) (StoredKey, error) {
	ks, err := readKeyStore(path)
	if err != nil {
		return StoredKey{}, err
	}
	h := sha256.Sum256([]byte(idOrKey))
	full := hex.EncodeToString(h[:])
	var gone []StoredKey
	kept := ks.Keys[:0]
	for _, e := range ks.Keys {
		if e.ID != idOrKey && e.SHA256 != full {
			kept = append(kept, e)
		} else {
			gone = append(gone, e)
		}
	}
	if len(gone) == 0 {
		return StoredKey{}, fmt.Errorf("no key %q in %s: list the keys with `weft mcp list-keys`", idOrKey, path)
	}
	ks.Keys = kept
	return gone[0], writeKeyStore(path, ks)
}

func writeKeyStore(path string, ks *keyStore) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(ks, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// Failed authentications allowed per client address: a burst, then this many per second.
const (
	FailureBurst = 20
	FailureRate  = 2.0
)

// FailureLimiter is a token bucket per client address, spent by failed authentications only:
// guessing keys gets slow while the right key keeps working at once.
type FailureLimiter struct {
	mu      sync.Mutex
	burst   float64
	rate    float64
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// NewFailureLimiter allows burst failures, then rate failures per second, per client address.
func NewFailureLimiter(burst int, rate float64) *FailureLimiter {
	return &FailureLimiter{burst: float64(burst), rate: rate, buckets: map[string]*bucket{}}
}

// Fail records a failed attempt of client (an address); ok is false, with how long to wait, when
// the client is over its limit.
func (l *FailureLimiter) Fail(client string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets) > 10000 { // forget clients that have been quiet for a while
		for k, b := range l.buckets {
			if now.Sub(b.last) > time.Minute {
				delete(l.buckets, k)
			}
		}
	}
	b, ok := l.buckets[client]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[client] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) / l.rate * float64(time.Second)), false
	}
	b.tokens--
	return 0, true
}

// ClientAddress is the address part of r.RemoteAddr: what the failure limit is kept per.
func ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// HostGuard serves only requests whose Host header names one of allowed ("*" allows any):
// protection against DNS rebinding. flag is the command-line flag that adds a host, named in the
// refusal.
func HostGuard(allowed []string, flag string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		for _, a := range allowed {
			if a == "*" || strings.EqualFold(a, host) {
				next.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = fmt.Fprintf(w, `{"error":"forbidden host","message":"host %q is not served; start the server with %s"}`, host, flag)
	})
}

// Equal compares two secrets in constant time; an empty presented value never matches.
func Equal(presented, want string) bool {
	return presented != "" && subtle.ConstantTimeCompare([]byte(presented), []byte(want)) == 1
}
