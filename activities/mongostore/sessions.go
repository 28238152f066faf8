package mongostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// MCPSessionCollection holds the MCP gateway's sessions (one document per Mcp-Session-Id), so a
// gateway restarted on the same store resumes them.
const MCPSessionCollection = "weft_mcp_sessions"

// MCPSession is what is kept of a gateway session: its id, the key (identity name) that opened it,
// the log level it chose, the runs it subscribed to, whether its client takes elicitation forms,
// and when it was last used.
type MCPSession struct {
	ID            string    `bson:"_id"`
	Key           string    `bson:"key"`
	Level         string    `bson:"level,omitempty"`
	Subscriptions []string  `bson:"subscriptions,omitempty"`
	Elicit        bool      `bson:"elicit,omitempty"`
	LastSeen      time.Time `bson:"lastSeen"`
}

// PutMCPSession writes session s. create says whether it may be created: a session's later
// writes replace only a document that is there, so one that races its own end (DELETE, idle)
// cannot bring the ended session back.
func (s *Store) PutMCPSession(ctx context.Context, db string, m MCPSession, create bool) error {
	c := s.client.Database(db).Collection(MCPSessionCollection)
	return s.write(ctx, db, func() error {
		_, err := c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: m.ID}}, m, options.Replace().SetUpsert(create))
		if err != nil {
			return fmt.Errorf("writing MCP session %s to %s.%s: %w", m.ID, db, MCPSessionCollection, err)
		}
		return nil
	})
}

// GetMCPSession reads session id; found is false when the store does not hold it.
func (s *Store) GetMCPSession(ctx context.Context, db, id string) (m MCPSession, found bool, err error) {
	err = s.client.Database(db).Collection(MCPSessionCollection).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&m)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return MCPSession{}, false, nil
	}
	if err != nil {
		return MCPSession{}, false, fmt.Errorf("reading MCP session %s from %s.%s: %w", id, db, MCPSessionCollection, err)
	}
	return m, true, nil
}

// DeleteMCPSession removes session id (ended: its id is unknown from then on).
func (s *Store) DeleteMCPSession(ctx context.Context, db, id string) error {
	c := s.client.Database(db).Collection(MCPSessionCollection)
	return s.write(ctx, db, func() error {
		if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
			return fmt.Errorf("removing MCP session %s from %s.%s: %w", id, db, MCPSessionCollection, err)
		}
		return nil
	})
}

// PruneMCPSessions removes the sessions last used before then (idle: no gateway ended them, as
// one that stopped could not) and returns how many.
func (s *Store) PruneMCPSessions(ctx context.Context, db string, before time.Time) (int64, error) {
	c := s.client.Database(db).Collection(MCPSessionCollection)
	var n int64
	err := s.write(ctx, db, func() error {
		res, err := c.DeleteMany(ctx, bson.D{{Key: "lastSeen", Value: bson.D{{Key: "$lt", Value: before.UTC()}}}})
		if err != nil {
			return fmt.Errorf("removing idle MCP sessions from %s.%s: %w", db, MCPSessionCollection, err)
		}
		n = res.DeletedCount
		return nil
	})
	return n, err
}
