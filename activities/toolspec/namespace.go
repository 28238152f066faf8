package toolspec

import (
	"fmt"
	"strings"
)

// systemDatabases are MongoDB's own databases: admin holds users, roles and the server's
// version, local the replication state and startup log, config the sharding metadata.
var systemDatabases = map[string]bool{"admin": true, "local": true, "config": true}

// SystemNamespace refuses a database or collection that is MongoDB's own: the admin, local and
// config databases and every system.* collection (admin.system.users, weft.system.js). A
// definition sent by a client may not read or write them — with a privileged MONGODB_URI on a
// real MongoDB they are the server's users and state; an operator's workflow file may
// (docs/security.md). tool names the step's tool in the message; db and collection are the
// step's inputs after defaults ("" is not checked).
func SystemNamespace(tool, db, collection string) error {
	const allow = "a definition sent by a client may not read or write MongoDB's own databases (admin, local, config) or system.* collections: use a database and collection of your own, or ask the operator to put the workflow in the workflows directory"
	if systemDatabases[strings.ToLower(db)] {
		return fmt.Errorf("%s: database %q is MongoDB's own: %s", tool, db, allow)
	}
	if strings.HasPrefix(strings.ToLower(collection), "system.") {
		return fmt.Errorf("%s: collection %q is in MongoDB's system namespace: %s", tool, collection, allow)
	}
	return nil
}
