package starter

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// newServerCommand: the Temporal server weft embeds, on PostgreSQL, as a process of its own (the
// production shape: docker-compose.yml and `make cluster` run it).
func newServerCommand() *cobra.Command {
	var db, host, namespace, logFile string
	var port, uiPort int
	var shards int32
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the Temporal server (and its Web UI) on PostgreSQL, without a worker",
		Long: "Starts the Temporal server weft embeds, keeping its data in PostgreSQL (--db, env WEFT_TEMPORAL_DB):\n" +
			"the databases temporal and temporal_visibility are created if missing and their schemas set up or\n" +
			"updated with Temporal's own schema tool at every start. Run workers with `weft worker` and the\n" +
			"knowledge store with `weft store`. Stop with Ctrl-C or SIGTERM.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if db == "" {
				return invalid(errors.New("--db is required: postgres://USER:PASSWORD@HOST:5432/ (or set WEFT_TEMPORAL_DB)"))
			}
			ctx, stop, err := stackContext(cmd)
			if err != nil {
				return err
			}
			defer stop()
			srv, err := stack.Temporal(ctx, TemporalOptions{Postgres: db, Host: host, Port: port, UIPort: uiPort, Namespace: namespace,
				HistoryShards: shards, LogFile: logFile})
			if err != nil {
				return err
			}
			defer srv.Stop()
			fmt.Fprintf(cmd.OutOrStdout(), "weft server: Temporal on %s (namespace %s, PostgreSQL)\n", srv.Address, srv.Namespace)
			if srv.UIAddress != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "  Web UI %s\n", srv.UIAddress)
			}
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", os.Getenv("WEFT_TEMPORAL_DB"), "PostgreSQL, postgres://USER:PASSWORD@HOST:PORT/ (env WEFT_TEMPORAL_DB)")
	cmd.Flags().StringVar(&host, "host", envOr("WEFT_SERVER_HOST", "127.0.0.1"), "address to bind (env WEFT_SERVER_HOST; 0.0.0.0 in a container)")
	cmd.Flags().IntVar(&port, "port", 7233, "frontend gRPC port")
	cmd.Flags().IntVar(&uiPort, "ui-port", 8233, "Web UI port (0: no UI)")
	cmd.Flags().StringVar(&namespace, "namespace", envOr("TEMPORAL_NAMESPACE", "default"), "namespace to register")
	cmd.Flags().Int32Var(&shards, "history-shards", 4, "history shards, fixed when the database is first set up")
	cmd.Flags().StringVar(&logFile, "log-file", os.Getenv("WEFT_SERVER_LOG"), "the server's log (warnings and errors; default: discarded)")
	return cmd
}

// newStoreCommand: the knowledge store as a process of its own, FerretDB on PostgreSQL.
func newStoreCommand() *cobra.Command {
	var pg, host string
	var port int
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Serve the knowledge store: the MongoDB wire protocol on PostgreSQL (FerretDB)",
		Long: "Serves MongoDB's wire protocol with FerretDB keeping the data in PostgreSQL (--postgres, env\n" +
			"WEFT_STORE_POSTGRES). Workers and the gateway reach it with MONGODB_URI=mongodb://HOST:PORT/.\n" +
			"FerretDB has no $vectorSearch: searches are exact. Use MongoDB Atlas for vector indexes.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pg == "" {
				return invalid(errors.New("--postgres is required: postgres://USER:PASSWORD@HOST:5432/DATABASE (or set WEFT_STORE_POSTGRES)"))
			}
			ctx, stop, err := stackContext(cmd)
			if err != nil {
				return err
			}
			defer stop()
			db, err := stack.StorePostgres(ctx, pg, host, port)
			if err != nil {
				return err
			}
			defer db.Stop()
			fmt.Fprintf(cmd.OutOrStdout(), "weft store: %s (FerretDB on PostgreSQL)\n", db.URI)
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&pg, "postgres", os.Getenv("WEFT_STORE_POSTGRES"), "PostgreSQL, postgres://USER:PASSWORD@HOST:PORT/DATABASE (env WEFT_STORE_POSTGRES)")
	cmd.Flags().StringVar(&host, "host", envOr("WEFT_STORE_HOST", "127.0.0.1"), "address to bind (env WEFT_STORE_HOST; 0.0.0.0 in a container)")
	cmd.Flags().IntVar(&port, "port", 27017, "port")
	return cmd
}
