package mongostore

// SetOneByID makes s look embeddings up one _id at a time (as on FerretDB) or with one $in.
func SetOneByID(s *Store, one bool) { s.oneByID = one }

// OneByID reports how s looks embeddings up.
func OneByID(s *Store) bool { return s.oneByID }
