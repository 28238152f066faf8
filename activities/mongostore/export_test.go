package mongostore

import "sync"

// SetOneByID makes s look embeddings up one _id at a time (as on FerretDB) or with one $in.
func SetOneByID(s *Store, one bool) { s.oneByID = one }

// OneByID reports how s looks embeddings up.
func OneByID(s *Store) bool { return s.oneByID }

// HoldWrites takes s's write turn for database db (as a write in flight would) until release
// is called; ok is false when s has no gate (the server is not FerretDB on SQLite).
func HoldWrites(s *Store, db string) (release func(), ok bool) {
	if !s.gated {
		return func() {}, false
	}
	s.gmu.Lock()
	gate := s.gates[db]
	if gate == nil {
		gate = make(chan struct{}, 1)
		s.gates[db] = gate
	}
	s.gmu.Unlock()
	gate <- struct{}{}
	return sync.OnceFunc(func() { <-gate }), true
}

// SetWriteGate makes s's writes take turns (as on FerretDB on SQLite) or not.
func SetWriteGate(s *Store, on bool) { s.gated = on }

// BackendIn and SQLiteBackend expose the backend detection to tests.
var (
	BackendIn     = backendIn
	SQLiteBackend = sqliteBackend
)

// Loads reports how many times s read a collection into its search cache.
func Loads(s *Store) int64 { return s.loads.Load() }

// BlobPart is the most bytes PutBlob puts in one part.
func BlobPart() int { return blobPart }

// SetBlobPart makes PutBlob split blobs into parts of n bytes until the returned func is called
// (tests in this package do not run in parallel).
func SetBlobPart(n int) (restore func()) {
	before := blobPart
	blobPart = n
	return func() { blobPart = before }
}
