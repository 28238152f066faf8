// Package auth holds what weft's HTTP servers (the MCP gateway, the console, the codec server)
// share to decide who may talk to them: bearer keys stored hashed in a key file, a limit on
// failed attempts per client address, and a guard against DNS rebinding (the Host header must be
// one that is served).
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
	plain [][]byte

	mu     sync.Mutex
	stamp  string // size and modification time of the key file when last read
	hashes [][]byte
}

// KeyFile is where generated keys are stored (hashed).
func KeyFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "weft", "mcp-keys.json")
}

type keyStore struct {
	Keys []struct {
		ID      string    `json:"id"`
		SHA256  string    `json:"sha256"`
		Created time.Time `json:"created"`
	} `json:"keys"`
}

func readKeyStore(path string) (*keyStore, error) {
	ks := &keyStore{}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return ks, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, ks); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ks, nil
}

// LoadKeys reads the key file and the extra plain keys (WEFT_MCP_KEY).
func LoadKeys(path string, plain ...string) (*Keys, error) {
	k := &Keys{path: path}
	for _, p := range plain {
		if p != "" {
			h := sha256.Sum256([]byte(p))
			k.plain = append(k.plain, h[:])
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
	var hashes [][]byte
	for _, e := range ks.Keys {
		if h, err := hex.DecodeString(e.SHA256); err == nil {
			hashes = append(hashes, h)
		}
	}
	k.hashes, k.stamp = hashes, stamp
	return nil
}

func (k *Keys) current() [][]byte {
	if err := k.reload(); err != nil {
		slog.Warn("keeping the previous keys: the key file cannot be read", "file", k.path, "error", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return append(append([][]byte(nil), k.hashes...), k.plain...)
}

// Empty reports whether no key is configured.
func (k *Keys) Empty() bool { return len(k.current()) == 0 }

// Valid compares the presented key with every current hash in constant time.
func (k *Keys) Valid(key string) bool {
	h := sha256.Sum256([]byte(key))
	ok := 0
	for _, s := range k.current() {
		ok |= subtle.ConstantTimeCompare(h[:], s)
	}
	return ok == 1
}

// GenerateKey creates a key, stores its hash and returns the key (shown once) and its id.
func GenerateKey(path string) (key, id string, err error) {
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
	ks.Keys = append(ks.Keys, struct {
		ID      string    `json:"id"`
		SHA256  string    `json:"sha256"`
		Created time.Time `json:"created"`
	}{id, hex.EncodeToString(h[:]), time.Now().UTC()})
	return key, id, writeKeyStore(path, ks)
}

// RevokeKey removes the key with the given id (or the key itself).
func RevokeKey(path, idOrKey string) error {
	ks, err := readKeyStore(path)
	if err != nil {
		return err
	}
	h := sha256.Sum256([]byte(idOrKey))
	full := hex.EncodeToString(h[:])
	n := len(ks.Keys)
	kept := ks.Keys[:0]
	for _, e := range ks.Keys {
		if e.ID != idOrKey && e.SHA256 != full {
			kept = append(kept, e)
		}
	}
	if len(kept) == n {
		return fmt.Errorf("no key %q in %s", idOrKey, path)
	}
	ks.Keys = kept
	return writeKeyStore(path, ks)
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
