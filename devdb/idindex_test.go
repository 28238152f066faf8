package devdb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// startSQLite starts FerretDB on SQLite in a temporary directory, with idIndexer or without it.
func startSQLite(t testing.TB, indexed bool) (*mongo.Client, string) {
	t.Helper()
	dir := t.TempDir()
	sqliteDir := ""
	if indexed {
		sqliteDir = dir
	}
	db, err := start(context.Background(), "127.0.0.1", 0, &ferretdb.Config{Handler: "sqlite", SQLiteURL: "file:" + dir + "/"}, dir, sqliteDir)
	require.NoError(t, err)
	t.Cleanup(db.Stop)
	c, err := mongo.Connect(options.Client().ApplyURI(db.URI))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c, dir
}

// plan is SQLite's plan for FerretDB's lookup by _id in the table of collection coll of database
// db ("" while the table does not exist).
func plan(t testing.TB, dir, db, coll string) string {
	t.Helper()
	sdb, err := sql.Open("sqlite", "file:"+filepath.Join(dir, db+".sqlite")+"?mode=ro")
	require.NoError(t, err)
	defer sdb.Close()
	var table string
	if err := sdb.QueryRow(`SELECT table_name FROM _ferretdb_collections WHERE name = ?`, coll).Scan(&table); err != nil {
		return ""
	}
	rows, err := sdb.Query(`EXPLAIN QUERY PLAN SELECT _ferretdb_sjson FROM `+quoteIdent(table)+` WHERE _ferretdb_sjson->'$._id' = ?`, `"x"`)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		out = append(out, detail)
	}
	return strings.Join(out, "; ")
}

// TestIDLookupsUseAnIndex: a collection made while the database runs gets the index FerretDB's
// lookups by _id can use (without it SQLite scans the table), again when it is dropped and made
// anew; FerretDB still finds, refuses a duplicate _id and lists only its own index.
func TestIDLookupsUseAnIndex(t *testing.T) {
	ctx := context.Background()
	old := idIndexEvery
	idIndexEvery = 50 * time.Millisecond
	t.Cleanup(func() { idIndexEvery = old })

	for _, indexed := range []bool{false, true} {
		t.Run(fmt.Sprintf("indexer=%v", indexed), func(t *testing.T) {
			c, dir := startSQLite(t, indexed)
			coll := c.Database("kb").Collection("docs")
			for round := range 2 {
				_, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: 1}}, bson.D{{Key: "_id", Value: "b"}, {Key: "n", Value: 2}}})
				require.NoError(t, err)
				if !indexed {
					require.Contains(t, plan(t, dir, "kb", "docs"), "SCAN", "FerretDB's own index does not serve the lookup")
					break
				}
				require.Eventually(t, func() bool { return strings.Contains(plan(t, dir, "kb", "docs"), "USING INDEX") },
					10*time.Second, 20*time.Millisecond, "round %d: the lookup by _id uses an index", round)

				var got bson.M
				require.NoError(t, coll.FindOne(ctx, bson.D{{Key: "_id", Value: "b"}}).Decode(&got))
				require.EqualValues(t, 2, got["n"])
				_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}})
				require.True(t, mongo.IsDuplicateKeyError(err), "a duplicate _id is still refused: %v", err)
				specs, err := coll.Indexes().ListSpecifications(ctx)
				require.NoError(t, err)
				require.Len(t, specs, 1)
				require.Equal(t, "_id_", specs[0].Name)
				require.NoError(t, coll.Drop(ctx)) // the next round makes the collection anew
			}
		})
	}
}

// BenchmarkFindByID: FindOne by _id in a collection of 2,000 documents of 4 KB, on FerretDB's
// SQLite backend with idIndexer and without it, side by side.
//
//	go test ./devdb -run '^$' -bench FindByID
func BenchmarkFindByID(b *testing.B) {
	ctx := context.Background()
	for _, indexed := range []bool{true, false} {
		name := "scan"
		if indexed {
			name = "indexed"
		}
		b.Run(name, func(b *testing.B) {
			c, dir := startSQLite(b, indexed)
			coll := c.Database("kb").Collection("docs")
			pad := strings.Repeat("x", 4096)
			docs := make([]any, 2000)
			for i := range docs {
				docs[i] = bson.D{{Key: "_id", Value: fmt.Sprintf("doc-%d", i)}, {Key: "pad", Value: pad}}
			}
			_, err := coll.InsertMany(ctx, docs)
			require.NoError(b, err)
			if indexed {
				require.Eventually(b, func() bool { return strings.Contains(plan(b, dir, "kb", "docs"), "USING INDEX") }, 10*time.Second, 20*time.Millisecond)
			}
			i := 0
			for b.Loop() {
				var got bson.M
				require.NoError(b, coll.FindOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("doc-%d", i%2000)}}).Decode(&got))
				i += 7
			}
		})
	}
}
