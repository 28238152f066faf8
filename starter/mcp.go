package starter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/weftworks/weft/auth"
	"go.temporal.io/sdk/interceptor"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/mcp"
)

func newMCPCommand() *cobra.Command {
	var conn connFlags
	var transport, host, workflowsDir, keyFile, metricsAddr string
	var port int
	var noBuiltins bool
	var wait time.Duration
	var allowedHosts []string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve weft to MCP clients (Claude Desktop, Cursor, Claude Code, VS Code) over stdio or HTTP",
		Long: "The gateway offers the knowledge tools (weft_query, weft_search, ...), tools to run and steer\n" +
			"durable executions (weft_run_workflow, weft_execution, weft_review, ...) and exposed workflows\n" +
			"as wf_<name>. stdio is the default; --transport http serves POST /mcp with bearer keys\n" +
			"(weft mcp generate-key, or WEFT_MCP_KEY) and GET /health.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			dc, err := dataConverter()
			if err != nil {
				return err
			}
			serveMetrics(metricsAddr, cmd.ErrOrStderr()) // the gateway's process metrics; tool calls run on workers
			icpt, err := startTracing(cmd.Context())
			if err != nil {
				return err
			}
			var icpts []interceptor.ClientInterceptor
			if icpt != nil {
				icpts = append(icpts, icpt)
			}
			g := mcp.New(mcp.Options{Interceptors: icpts, Version: Version, Address: conn.address, Namespace: conn.namespace, TaskQueue: conn.taskQueue, Security: conn.security,
				Config: activities.ConfigFromEnv(envFromDev), WorkflowsDir: workflowsDir, NoBuiltins: noBuiltins, Wait: wait, Log: log, DataConverter: dc})
			go g.WatchWorkflows(ctx, 2*time.Second)
			switch transport {
			case "stdio":
				return g.ServeStdio(ctx)
			case "http":
			default:
				return invalid(fmt.Errorf("--transport %q: use stdio or http", transport))
			}
			keys, err := auth.LoadKeys(keyFile, os.Getenv("WEFT_MCP_KEY"))
			if err != nil {
				return err
			}
			if keys.Empty() {
				return invalid(errors.New("no API key: create one with `weft mcp generate-key` or set WEFT_MCP_KEY"))
			}
			hosts := append([]string{"127.0.0.1", "localhost", "::1", host}, allowedHosts...)
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			srv := &http.Server{Addr: addr, Handler: g.HTTPHandler(keys, hosts, log), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", addr, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "weft mcp: http://%s/mcp (health: http://%s/health)\n", l.Addr(), l.Addr())
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(l) }()
			select {
			case err := <-errc:
				return err
			case <-ctx.Done():
			}
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return srv.Shutdown(sctx) // in-flight calls finish
		},
	}
	conn.register(cmd)
	cmd.Flags().StringVar(&transport, "transport", "stdio", "stdio or http")
	cmd.Flags().StringVar(&metricsAddr, "metrics", "", "serve Prometheus metrics on this address (/metrics)")
	cmd.Flags().StringVar(&host, "host", "127.0.0.1", "HTTP address to bind (another host must be asked for explicitly)")
	cmd.Flags().IntVar(&port, "port", 3100, "HTTP port")
	cmd.Flags().StringArrayVar(&allowedHosts, "allowed-host", nil, "Host header values to accept besides localhost (DNS-rebinding protection)")
	cmd.Flags().StringVar(&workflowsDir, "workflows-dir", "", "workflow files to offer (those with \"mcp\": {\"expose\": true} become wf_ tools)")
	cmd.Flags().BoolVar(&noBuiltins, "no-builtins", false, "do not offer the built-in templates")
	cmd.Flags().DurationVar(&wait, "wait", 60*time.Second, "how long wf_ tools wait for a result")
	cmd.PersistentFlags().StringVar(&keyFile, "key-file", auth.KeyFile(), "where generated keys are stored, hashed")
	cmd.AddCommand(&cobra.Command{
		Use:   "generate-key",
		Short: "Create an API key for the HTTP transport (printed once; only its hash is stored)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, id, err := auth.GenerateKey(keyFile)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n(id %s; stored hashed in %s; revoke with: weft mcp revoke-key %s)\n", key, id, keyFile, id)
			return nil
		},
	}, &cobra.Command{
		Use:   "revoke-key ID|KEY",
		Short: "Revoke an API key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := auth.RevokeKey(keyFile, args[0]); err != nil {
				return invalid(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "revoked")
			return nil
		},
	})
	return cmd
}
