package devserver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	pgplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Databases Temporal keeps in PostgreSQL, and the embedded schemas that set them up.
const (
	PostgresDB           = "temporal"
	PostgresVisibilityDB = "temporal_visibility"
)

// postgresConfigs turns postgres://user:password@host:port/?sslmode=disable into the SQL configs
// of Temporal's two databases. The database in the URL's path is the one to connect to when
// creating them (default "postgres").
func postgresConfigs(raw string) (main, visibility *config.SQL, adminDB string, err error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return nil, nil, "", fmt.Errorf("--db %q: want postgres://USER:PASSWORD@HOST:PORT/", raw)
	}
	host := u.Host
	if !strings.Contains(host, ":") {
		host += ":5432"
	}
	pw, _ := u.User.Password()
	attrs := map[string]string{}
	for k, v := range u.Query() {
		attrs[k] = v[0]
	}
	if _, ok := attrs["sslmode"]; !ok {
		attrs["sslmode"] = "disable"
	}
	mk := func(db string) *config.SQL {
		return &config.SQL{PluginName: pgplugin.PluginName, ConnectAddr: host, ConnectProtocol: "tcp", User: u.User.Username(),
			Password: pw, DatabaseName: db, ConnectAttributes: attrs, MaxConns: 20, MaxIdleConns: 20}
	}
	adminDB = strings.TrimPrefix(u.Path, "/")
	if adminDB == "" {
		adminDB = "postgres"
	}
	return mk(PostgresDB), mk(PostgresVisibilityDB), adminDB, nil
}

// setupPostgres creates Temporal's databases when they are missing and brings their schemas to
// the version this server needs, with Temporal's own schema tool (its Go packages). It is safe
// to run at every start.
func setupPostgres(cfgs map[string]*config.SQL, adminDB string, logger log.Logger) error {
	for schemaName, cfg := range cfgs {
		c := *cfg
		if err := sqltool.DoCreateDatabase(&c, adminDB, logger); err != nil && !strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("creating database %s on %s: %w", cfg.DatabaseName, cfg.ConnectAddr, err)
		}
		conn, err := sqltool.NewConnection(cfg, logger)
		if err != nil {
			return fmt.Errorf("connecting to %s on %s: %w", cfg.DatabaseName, cfg.ConnectAddr, err)
		}
		if _, err := conn.ReadSchemaVersion(); err != nil {
			if err := schema.NewSetupSchemaTask(conn, &schema.SetupConfig{InitialVersion: "0.0"}, logger).Run(); err != nil {
				conn.Close()
				return fmt.Errorf("setting up the schema of %s: %w", cfg.DatabaseName, err)
			}
		}
		err = schema.NewUpdateSchemaTask(conn, &schema.UpdateConfig{DBName: cfg.DatabaseName, SchemaName: schemaName}, logger).Run()
		conn.Close()
		if err != nil {
			return fmt.Errorf("updating the schema of %s: %w", cfg.DatabaseName, err)
		}
	}
	return nil
}

func quietServerLogger() log.Logger { return log.NewNoopLogger() }

// ensureNamespace registers the namespace on a PostgreSQL-backed server (SQLite data directories
// get it when the database is created).
func (s *Server) ensureNamespace(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		nc, err := client.NewNamespaceClient(client.Options{HostPort: s.Address, Logger: quietLogger()})
		if err == nil {
			err = nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: s.Namespace,
				WorkflowExecutionRetentionPeriod: durationpb.New(72 * time.Hour)})
			nc.Close()
			var exists *serviceerror.NamespaceAlreadyExists
			if errors.As(err, &exists) {
				return nil
			}
			if err == nil {
				return s.awaitNamespace(ctx)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("registering namespace %s on %s: %w", s.Namespace, s.Address, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// awaitNamespace waits until a namespace registered a moment ago takes runs: every service of
// the server learns of it when its namespace cache refreshes, and until then starting a run fails
// with "namespace not found". It starts and terminates one probe run (a workflow type no worker
// has, so nothing executes; weft's listings show only weft runs).
func (s *Server) awaitNamespace(ctx context.Context) error {
	c, err := client.DialContext(ctx, client.Options{HostPort: s.Address, Namespace: s.Namespace, Logger: quietLogger()})
	if err != nil {
		return err
	}
	defer c.Close()
	id := fmt.Sprintf("weft-namespace-probe-%d", time.Now().UnixNano())
	for {
		_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "weft-namespace-probe"}, "weft-namespace-probe")
		var nf *serviceerror.NamespaceNotFound
		if err == nil || !errors.As(err, &nf) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("namespace %s registered but not usable on %s: %w", s.Namespace, s.Address, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("namespace %s: a probe run failed: %w", s.Namespace, err)
	}
	return c.TerminateWorkflow(ctx, id, "", "namespace probe of weft server")
}
