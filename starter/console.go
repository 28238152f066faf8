package starter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/eval/report"
)

// consoleFlags are the console's settings, shared by `weft console` and `weft dev`.
type consoleFlags struct {
	listen       string
	workflowsDir string
	keyFile      string
	allowedHosts []string
	temporalUI   string
	evalsDir     string
}

func (f *consoleFlags) register(cmd *cobra.Command, listenFlag string) {
	cmd.Flags().StringVar(&f.listen, listenFlag, console.DefaultAddress, "where the console listens, host:port (\"off\": no console); beyond 127.0.0.1 people log in with a key")
	cmd.Flags().StringVar(&f.workflowsDir, "workflows-dir", envOr("WEFT_WORKFLOWS_DIR", "."), "workflow files shown in the console's playground, beside the built-in templates")
	cmd.Flags().StringVar(&f.keyFile, "console-key-file", auth.KeyFile(), "the keys people log in with when the console is served beyond this machine (weft mcp generate-key)")
	cmd.Flags().StringSliceVar(&f.allowedHosts, "allowed-host", nil, "Host headers the console answers (default: 127.0.0.1, localhost and the listen host)")
	cmd.Flags().StringVar(&f.evalsDir, "reports-dir", envOr("WEFT_EVAL_REPORTS", report.DefaultDir), "the weft eval reports the console's Evals page lists (weft eval --reports-dir; env WEFT_EVAL_REPORTS)")
}

// serveConsole starts the console in the background and returns its URL; it stops with ctx.
func (f *consoleFlags) serveConsole(ctx context.Context, c *weftclient.Client, namespace string, errOut io.Writer) (string, error) {
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return "", invalid(fmt.Errorf("console address %q: want host:port, e.g. %s", f.listen, console.DefaultAddress))
	}
	o := console.Options{Client: c, WorkflowsDir: f.workflowsDir, TemporalUI: f.temporalUI, Namespace: namespace,
		Reviewer: defaultReviewer(), AllowedHosts: f.allowedHosts, EvalsDir: f.evalsDir,
		Log: slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if len(o.AllowedHosts) == 0 {
		o.AllowedHosts = []string{"127.0.0.1", "localhost", "::1"}
		if host != "" && host != "0.0.0.0" && host != "::" {
			o.AllowedHosts = append(o.AllowedHosts, host)
		}
	}
	if !isLoopback(host) {
		keys, err := auth.LoadKeys(f.keyFile, os.Getenv("WEFT_MCP_KEY"))
		if err != nil {
			return "", err
		}
		if keys.Empty() {
			return "", invalid(errors.New("serving the console beyond this machine needs a key to log in with: weft mcp generate-key, or WEFT_MCP_KEY"))
		}
		o.Keys, o.RequireLogin = keys, true
	}
	s, err := console.New(o)
	if err != nil {
		return "", err
	}
	l, err := net.Listen("tcp", f.listen)
	if err != nil {
		return "", fmt.Errorf("the console cannot listen on %s (another weft dev or console running? choose one with --console): %w", f.listen, err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(errOut, "weft console: %v\n", err)
		}
	}()
	return "http://" + l.Addr().String(), nil
}

func newConsoleCommand() *cobra.Command {
	var conn connFlags
	var cf consoleFlags
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Serve the weft console: runs drawn live, reviews decided in the browser, a workflow playground",
		Long: "Serves the console against any Temporal (the connection flags of every command). It reads and\n" +
			"acts through the same client as the CLI and the MCP gateway. Bound to 127.0.0.1 by default; on\n" +
			"another address people log in with a key from `weft mcp generate-key` (or WEFT_MCP_KEY).\n" +
			"`weft dev` serves it too, at " + console.DefaultAddress + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return conn.with(ctx, func(c *weftclient.Client) error {
				url, err := cf.serveConsole(ctx, c, conn.namespace, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "weft console on %s (Temporal %s, namespace %s)\n", url, conn.address, conn.namespace)
				<-ctx.Done()
				return nil
			})
		},
	}
	conn.register(cmd)
	cf.register(cmd, "listen")
	cmd.Flags().StringVar(&cf.temporalUI, "temporal-ui", os.Getenv("TEMPORAL_UI"), "the Temporal Web UI's URL, for links to each execution (env TEMPORAL_UI)")
	return cmd
}
