package mongostore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// MetaCollection holds one version document per chunk collection; every ingest bumps it so that
// search caches in every process know to reload.
const MetaCollection = "weft_meta"

// Store is a knowledge store.
type Store struct {
	client *mongo.Client
	mu     sync.Mutex
	caches map[string]*cache
	loads  atomic.Int64 // how many times a collection was read into its cache (for tests)
	// oneByID: the server finds documents by _id through its index only one _id at a time
	// (FerretDB: a filter of _id $in many reads the whole collection).
	oneByID bool
	// gated: the server is FerretDB on SQLite, whose writers to one database take turns (write).
	gated bool
	gmu   sync.Mutex
	gates map[string]chan struct{} // by database
}

// Open connects to uri and checks the server answers.
func Open(ctx context.Context, uri string) (*Store, error) {
	c, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(5 * time.Second).SetRetryWrites(false))
	if err != nil {
		return nil, fmt.Errorf("MongoDB at %s: %w (check MONGODB_URI)", redact(uri), err)
	}
	if err := c.Ping(ctx, nil); err != nil {
		_ = c.Disconnect(context.Background())
		return nil, fmt.Errorf("MongoDB at %s is unreachable: %w (check MONGODB_URI)", redact(uri), err)
	}
	s := &Store{client: c, caches: map[string]*cache{}, gates: map[string]chan struct{}{}}
	if isFerretDB(ctx, c) {
		s.oneByID = true
		s.gated = sqliteBackend(ferretDBBackend(ctx, c))
	}
	return s, nil
}

// Ping asks the server whether it answers (one round trip, however many collections it holds).
func (s *Store) Ping(ctx context.Context) error { return s.client.Ping(ctx, nil) }

// write runs f, which writes to database db, alone among this store's writes to db when the
// server is FerretDB on SQLite. That backend keeps a database in one SQLite file, which takes
// one writer at a time and has the others wait in SQLite's busy handler, sleeping 1 ms, then 2,
// 5, 10 ... 100 between tries: with 32 batch outputs stored at once, most of them slept while
// the processor stood idle (a goroutine dump of the 100,000-embed fan-out had 15 of 22 FerretDB
// connections asleep there). Waiting here, on a channel, hands the lock on the moment it is
// free. MongoDB and FerretDB on PostgreSQL take concurrent writes: no gate.
func (s *Store) write(ctx context.Context, db string, f func() error) error {
	if !s.gated {
		return f()
	}
	s.gmu.Lock()
	gate, ok := s.gates[db]
	if !ok {
		gate = make(chan struct{}, 1)
		s.gates[db] = gate
	}
	s.gmu.Unlock()
	select {
	case gate <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-gate }()
	return f()
}

// ferretDBBackend is the storage FerretDB names in its startup warnings ("Powered by FerretDB
// v1.24.2 and SQLite 3.46.1."), or "" before it has opened any. Listing the databases first
// makes a PostgreSQL backend connect, so that it is named.
func ferretDBBackend(ctx context.Context, c *mongo.Client) string {
	_, _ = c.ListDatabaseNames(ctx, bson.D{})
	var res struct {
		Log []string `bson:"log"`
	}
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "getLog", Value: "startupWarnings"}}).Decode(&res); err != nil {
		return ""
	}
	return backendIn(res.Log)
}

// backendIn finds the backend's name in FerretDB's startup warnings (each a JSON log entry).
func backendIn(lines []string) string {
	for _, l := range lines {
		var e struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal([]byte(l), &e) != nil || !strings.HasPrefix(e.Msg, "Powered by FerretDB") {
			continue
		}
		if _, after, ok := strings.Cut(e.Msg, " and "); ok {
			name, _, _ := strings.Cut(after, " ")
			return name
		}
	}
	return ""
}

// sqliteBackend: writes take turns on SQLite, and when FerretDB has not said (it names its
// backend once it has opened a database; `weft dev`'s fresh store has none yet).
func sqliteBackend(name string) bool { return name == "" || name == "SQLite" }

// isFerretDB reports whether the server is FerretDB (its buildInfo names its version).
func isFerretDB(ctx context.Context, c *mongo.Client) bool {
	raw, err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Raw()
	if err != nil {
		return false
	}
	_, err = raw.LookupErr("ferretdbVersion")
	return err == nil
}

func redact(uri string) string {
	if len(uri) > 60 {
		return uri[:60] + "…"
	}
	return uri
}

// Close disconnects.
func (s *Store) Close(ctx context.Context) error { return s.client.Disconnect(ctx) }

// Chunk is one stored piece of a document.
type Chunk struct {
	ID         string         `bson:"_id"`
	Text       string         `bson:"text"`
	Source     string         `bson:"source"`
	ChunkIndex int            `bson:"chunkIndex"`
	Metadata   map[string]any `bson:"metadata,omitempty"`
	Model      string         `bson:"model"`
	Embedding  bson.Vector    `bson:"embedding"`
	CreatedAt  time.Time      `bson:"createdAt"`
	UpdatedAt  time.Time      `bson:"updatedAt"`
}

// ChunkID derives a chunk's id from (collection, source, chunk index, content hash), so a retried
// or replayed ingest overwrites instead of duplicating.
func ChunkID(collection, source string, index int, text string) string {
	h := sha256.Sum256([]byte(collection + "\x00" + source + "\x00" + strconv.Itoa(index) + "\x00" + text))
	return hex.EncodeToString(h[:16])
}

// Upsert writes chunks (replacing any with the same id) and bumps the collection's version.
func (s *Store) Upsert(ctx context.Context, db, coll string, chunks []Chunk) error {
	if len(chunks) == 0 {
		return nil
	}
	c := s.client.Database(db).Collection(coll)
	models := make([]mongo.WriteModel, len(chunks))
	for i := range chunks {
		ch := chunks[i]
		models[i] = mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: ch.ID}}).SetUpsert(true).SetUpdate(bson.D{
			{Key: "$set", Value: bson.D{{Key: "text", Value: ch.Text}, {Key: "source", Value: ch.Source}, {Key: "chunkIndex", Value: ch.ChunkIndex},
				{Key: "metadata", Value: ch.Metadata}, {Key: "model", Value: ch.Model}, {Key: "embedding", Value: ch.Embedding}, {Key: "updatedAt", Value: ch.UpdatedAt}}},
			{Key: "$setOnInsert", Value: bson.D{{Key: "createdAt", Value: ch.CreatedAt}}},
		})
	}
	return s.write(ctx, db, func() error {
		if _, err := c.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false)); err != nil {
			return fmt.Errorf("upserting %d chunks into %s.%s: %w", len(chunks), db, coll, err)
		}
		v, err := s.bump(ctx, db, coll)
		if err != nil {
			return err
		}
		s.patch(db, coll, v, func(c *cache) { c.upsert(chunks) })
		return nil
	})
}

// bump increments the collection's version and returns the new one.
func (s *Store) bump(ctx context.Context, db, coll string) (int64, error) {
	var m struct {
		Version int64 `bson:"version"`
	}
	err := s.client.Database(db).Collection(MetaCollection).FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: coll}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}}},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&m)
	if err != nil {
		return 0, fmt.Errorf("bumping the version of %s.%s: %w", db, coll, err)
	}
	return m.Version, nil
}

// patch brings this process's cache of db.coll to version v by applying change to a copy of it,
// when the cache holds the version just before v: then the write that made v is the only change
// since the cache was read, and a search after an ingest costs no reload of the collection (which
// on FerretDB takes seconds at 10,000 chunks and over a minute at 100,000). A cache of any other
// version (another process or a concurrent write got in between) is left as it is, and the next
// search reloads it. The copy is whole because searches read a cache without holding s.mu.
func (s *Store) patch(db, coll string, v int64, change func(*cache)) {
	key := db + "." + coll
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.caches[key]
	if c == nil || c.version != v-1 {
		return
	}
	nc := c.clone()
	nc.version = v
	change(nc)
	s.caches[key] = nc
}

// Hit is one search result.
type Hit struct {
	ID       string         `json:"id"`
	Source   string         `json:"source"`
	Content  string         `json:"content"`
	Score    float64        `json:"score"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Search paths reported in result metadata.
const (
	PathVectorSearch = "$vectorSearch"
	PathExact        = "exact"
)

// IndexName is the vector search index weft creates and queries.
const IndexName = "weft_vector_index"

// Search returns the limit chunks nearest to vector (cosine), after the metadata pre-filter.
// It reports which path ran.
func (s *Store) Search(ctx context.Context, db, coll string, vector []float32, limit int, filter map[string]any) ([]Hit, string, error) {
	hits, err := s.vectorSearch(ctx, db, coll, vector, limit, filter)
	if err == nil {
		return hits, PathVectorSearch, nil
	}
	if !stageUnsupported(err) {
		return nil, "", fmt.Errorf("$vectorSearch on %s.%s: %w", db, coll, err)
	}
	hits, err = s.exact(ctx, db, coll, vector, limit, filter)
	return hits, PathExact, err
}

// stageUnsupported tells "this server has no $vectorSearch" from other failures.
func stageUnsupported(err error) bool {
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		switch ce.Code {
		case 40324, 40234, 238, 59, 31082:
			return true
		}
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		for _, code := range []int{40324, 40234, 238, 59, 31082} {
			if se.HasErrorCode(code) {
				return true
			}
		}
	}
	return false
}

func (s *Store) vectorSearch(ctx context.Context, db, coll string, vector []float32, limit int, filter map[string]any) ([]Hit, error) {
	stage := bson.D{{Key: "index", Value: IndexName}, {Key: "path", Value: "embedding"}, {Key: "queryVector", Value: bson.NewVector(vector)},
		{Key: "numCandidates", Value: max(limit*10, 100)}, {Key: "limit", Value: limit}}
	if len(filter) > 0 {
		stage = append(stage, bson.E{Key: "filter", Value: filter})
	}
	pipeline := mongo.Pipeline{
		{{Key: "$vectorSearch", Value: stage}},
		{{Key: "$project", Value: bson.D{{Key: "text", Value: 1}, {Key: "source", Value: 1}, {Key: "metadata", Value: 1},
			{Key: "score", Value: bson.D{{Key: "$meta", Value: "vectorSearchScore"}}}}}},
	}
	cur, err := s.client.Database(db).Collection(coll).Aggregate(ctx, pipeline)
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	var hits []Hit
	for cur.Next(ctx) {
		var d struct {
			ID       string         `bson:"_id"`
			Text     string         `bson:"text"`
			Source   string         `bson:"source"`
			Metadata map[string]any `bson:"metadata"`
			Score    float64        `bson:"score"`
		}
		if err := cur.Decode(&d); err != nil {
			return nil, err
		}
		hits = append(hits, Hit{ID: d.ID, Source: d.Source, Content: d.Text, Score: d.Score, Metadata: d.Metadata})
	}
	return hits, cur.Err()
}

// cache is one collection's chunks in memory, valid for one meta version.
type cache struct {
	version int64
	ids     []string
	texts   []string
	sources []string
	meta    []map[string]any
	vectors [][]float32
	norms   []float32
}

func (c *cache) clone() *cache {
	return &cache{version: c.version, ids: slices.Clone(c.ids), texts: slices.Clone(c.texts), sources: slices.Clone(c.sources),
		meta: slices.Clone(c.meta), vectors: slices.Clone(c.vectors), norms: slices.Clone(c.norms)}
}

// add appends one chunk as load reads it.
func (c *cache) add(id, text, source string, meta map[string]any, vec []float32) {
	c.ids = append(c.ids, id)
	c.texts = append(c.texts, text)
	c.sources = append(c.sources, source)
	c.meta = append(c.meta, meta)
	c.vectors = append(c.vectors, vec)
	c.norms = append(c.norms, norm(vec))
}

// upsert replaces the chunks with the same ids and adds the others, as Upsert stored them.
func (c *cache) upsert(chunks []Chunk) {
	at := make(map[string]int, len(c.ids))
	for i, id := range c.ids {
		at[id] = i
	}
	for _, ch := range chunks {
		vec, ok := ch.Embedding.Float32OK()
		if !ok {
			continue // load skips them too
		}
		meta := asStored(ch.Metadata)
		if i, ok := at[ch.ID]; ok {
			c.texts[i], c.sources[i], c.meta[i], c.vectors[i], c.norms[i] = ch.Text, ch.Source, meta, vec, norm(vec)
			continue
		}
		at[ch.ID] = len(c.ids)
		c.add(ch.ID, ch.Text, ch.Source, meta, vec)
	}
}

// remove drops the chunks drop picks.
func (c *cache) remove(drop func(i int) bool) {
	n := 0
	for i := range c.ids {
		if drop(i) {
			continue
		}
		c.ids[n], c.texts[n], c.sources[n], c.meta[n], c.vectors[n], c.norms[n] = c.ids[i], c.texts[i], c.sources[i], c.meta[i], c.vectors[i], c.norms[i]
		n++
	}
	c.ids, c.texts, c.sources, c.meta, c.vectors, c.norms = c.ids[:n], c.texts[:n], c.sources[:n], c.meta[:n], c.vectors[:n], c.norms[:n]
}

// asStored gives metadata the types a read from the store gives it (int32 and int64, bson.D
// for nested documents, bson.A for arrays), so a patched cache filters as a reloaded one does.
func asStored(meta map[string]any) map[string]any {
	if meta == nil {
		return nil
	}
	raw, err := bson.Marshal(bson.D{{Key: "m", Value: meta}})
	if err != nil {
		return meta // Upsert stored it, so this does not happen
	}
	var d struct {
		M map[string]any `bson:"m"`
	}
	if bson.Unmarshal(raw, &d) != nil {
		return meta
	}
	return d.M
}

func (s *Store) version(ctx context.Context, db, coll string) (int64, error) {
	var m struct {
		Version int64 `bson:"version"`
	}
	err := s.client.Database(db).Collection(MetaCollection).FindOne(ctx, bson.D{{Key: "_id", Value: coll}}).Decode(&m)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	return m.Version, err
}

// load returns the collection's cache, reloading it when another ingest changed the version.
func (s *Store) load(ctx context.Context, db, coll string) (*cache, error) {
	v, err := s.version(ctx, db, coll)
	if err != nil {
		return nil, fmt.Errorf("reading the version of %s.%s: %w", db, coll, err)
	}
	key := db + "." + coll
	s.mu.Lock()
	c := s.caches[key]
	s.mu.Unlock()
	if c != nil && c.version == v {
		return c, nil
	}
	s.loads.Add(1)
	cur, err := s.client.Database(db).Collection(coll).Find(ctx, bson.D{},
		options.Find().SetProjection(bson.D{{Key: "text", Value: 1}, {Key: "source", Value: 1}, {Key: "metadata", Value: 1}, {Key: "embedding", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("loading %s.%s: %w", db, coll, err)
	}
	defer cur.Close(ctx)
	nc := &cache{version: v}
	for cur.Next(ctx) {
		var d struct {
			ID        string         `bson:"_id"`
			Text      string         `bson:"text"`
			Source    string         `bson:"source"`
			Metadata  map[string]any `bson:"metadata"`
			Embedding bson.Vector    `bson:"embedding"`
		}
		if err := cur.Decode(&d); err != nil {
			return nil, fmt.Errorf("decoding a chunk of %s.%s: %w", db, coll, err)
		}
		vec, ok := d.Embedding.Float32OK()
		if !ok {
			continue
		}
		nc.add(d.ID, d.Text, d.Source, d.Metadata, vec)
	}
	if err := cur.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.caches[key] = nc
	s.mu.Unlock()
	return nc, nil
}

func norm(v []float32) float32 {
	var s float32
	for _, x := range v {
		s += x * x
	}
	return sqrt32(s)
}

// exact ranks every chunk by cosine similarity.
func (s *Store) exact(ctx context.Context, db, coll string, vector []float32, limit int, filter map[string]any) ([]Hit, error) {
	c, err := s.load(ctx, db, coll)
	if err != nil {
		return nil, err
	}
	mismatch := 0
	for _, v := range c.vectors {
		if len(v) != len(vector) {
			mismatch++
		}
	}
	if mismatch > 0 && mismatch == len(c.vectors) {
		return nil, &DimensionError{Collection: db + "." + coll, Stored: len(c.vectors[0]), Query: len(vector)}
	}
	all := TopK(c.vectors, c.norms, vector, limit, func(i int) bool {
		return len(filter) == 0 || Matches(filter, map[string]any{"metadata": c.meta[i], "source": c.sources[i]})
	})
	hits := make([]Hit, len(all))
	for k, sc := range all {
		hits[k] = Hit{ID: c.ids[sc.Index], Source: c.sources[sc.Index], Content: c.texts[sc.Index], Score: float64(sc.Score), Metadata: c.meta[sc.Index]}
	}
	return hits, nil
}

// DimensionError means the query was embedded with another model than the collection.
type DimensionError struct {
	Collection    string
	Stored, Query int
}

func (e *DimensionError) Error() string {
	return fmt.Sprintf("%s holds %d-dimensional embeddings but the query has %d: search with the model the collection was ingested with",
		e.Collection, e.Stored, e.Query)
}

// Scored is a vector's index and its cosine similarity to a query.
type Scored struct {
	Index int
	Score float32
}

// TopK returns the k vectors most similar (cosine) to query, best first, among those keep
// accepts; vectors of another length are skipped. It keeps a small sorted list instead of
// sorting every score.
func TopK(vectors [][]float32, norms []float32, query []float32, k int, keep func(int) bool) []Scored {
	if k <= 0 {
		return nil
	}
	qn := norm(query)
	best := make([]Scored, 0, k+1)
	for i, v := range vectors {
		if len(v) != len(query) || (keep != nil && !keep(i)) {
			continue
		}
		dot := dot(v, query)
		score := float32(0)
		if qn > 0 && norms[i] > 0 {
			score = dot / (qn * norms[i])
		}
		if len(best) == k && score <= best[k-1].Score {
			continue
		}
		pos := sort.Search(len(best), func(j int) bool { return best[j].Score < score })
		best = append(best, Scored{})
		copy(best[pos+1:], best[pos:])
		best[pos] = Scored{i, score}
		if len(best) > k {
			best = best[:k]
		}
	}
	return best
}

// dot is a dot product with four independent accumulators, so the loop is bound by memory
// rather than by the latency of one long chain of additions.
func dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	n := len(a) &^ 3
	b = b[:len(a)]
	for i := 0; i < n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for i := n; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
