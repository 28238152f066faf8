package mongostore

// SetOneByID makes s look embeddings up one _id at a time (as on FerretDB) or with one $in.
func SetOneByID(s *Store, one bool) { s.oneByID = one }

// OneByID reports how s looks embeddings up.
func OneByID(s *Store) bool { return s.oneByID }

// HoldWrites takes s's write turn (as a write in flight would) until release is called; ok is
// false when s has no gate (the server is not FerretDB).
func HoldWrites(s *Store) (release func(), ok bool) {
	if s.writes == nil {
		return func() {}, false
	}
	s.writes <- struct{}{}
	return func() { <-s.writes }, true
}

// SetWriteGate gives s a write gate (one write at a time) or takes it away.
func SetWriteGate(s *Store, on bool) {
	s.writes = nil
	if on {
		s.writes = make(chan struct{}, 1)
	}
}
