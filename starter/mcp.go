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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/weftworks/weft/auth"
	"go.temporal.io/sdk/interceptor"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/httpapi"
	"github.com/weftworks/weft/mcp"
)

// GatewayHTTP is the gateway's HTTP handler: /mcp, /health and the HTTP API under /v1 (httpapi),
// behind one host guard and one auth.Gate over keys, so both surfaces take the same keys, roles,
// failure limit and body limit.
// o says what the API offers (WorkflowsDir, NoBuiltins, Hooks, Version, Log); its Client is the
// gateway's, and its Gate one over keys unless o.Gate is set (a Gate that takes OAuth tokens too).
func GatewayHTTP(g *mcp.Gateway, keys *auth.Keys, hosts []string, o httpapi.Options) (http.Handler, error) {
	if o.Gate == nil {
		o.Gate = auth.NewGate(keys)
	}
	o.Client, o.WorkflowTools, o.Memory = g.Client, g.WorkflowTools, g
	api, err := httpapi.New(o)
	if err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return g.HTTPHandlerWith(o.Gate, hosts, log, mcp.Mount{Pattern: httpapi.Prefix, Handler: api}), nil
}

// parseHooks reads --hook NAME=WORKFLOW bindings; their secret is WEFT_HOOK_SECRET.
func parseHooks(flags []string, secret string) (map[string]httpapi.Hook, error) {
	hooks := map[string]httpapi.Hook{}
	for _, f := range flags {
		name, wf, ok := strings.Cut(f, "=")
		if !ok || name == "" || wf == "" {
			return nil, fmt.Errorf("--hook %q: write NAME=WORKFLOW (the name requests post to, /v1/hooks/NAME, and the workflow it starts)", f)
		}
		if _, dup := hooks[name]; dup {
			return nil, fmt.Errorf("--hook %q: the name %s is bound twice", f, name)
		}
		if secret == "" {
			return nil, fmt.Errorf("--hook %q: set WEFT_HOOK_SECRET, the secret hook requests are signed with", f)
		}
		hooks[name] = httpapi.Hook{Workflow: wf, Secret: secret}
	}
	return hooks, nil
}

func newMCPCommand() *cobra.Command {
	var conn connFlags
	var transport, host, workflowsDir, keyFile, metricsAddr string
	var port int
	var noBuiltins bool
	var wait time.Duration
	var allowedHosts, hookFlags []string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve weft to MCP clients (Claude Desktop, Cursor, Claude Code, VS Code) over stdio or HTTP",
		Long: "The gateway offers the knowledge tools (weft_query, weft_search, ...), tools to run and steer\n" +
			"durable executions (weft_run_workflow, weft_execution, weft_review, ...) and exposed workflows\n" +
			"as wf_<name>. stdio is the default; --transport http serves POST /mcp with bearer keys\n" +
			"(weft mcp generate-key, or WEFT_MCP_KEY), the HTTP API for programs under /v1 with the same keys\n" +
			"(docs/http.md; its OpenAPI document at GET /v1/openapi.json) and GET /health. With\n" +
			"WEFT_OAUTH_ISSUER, WEFT_OAUTH_AUDIENCE and WEFT_OAUTH_JWKS_URL it also takes OAuth access tokens\n" +
			"from that issuer and serves /.well-known/oauth-protected-resource (docs/mcp.md).",
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
			build := CurrentBuild()
			g := mcp.New(mcp.Options{Interceptors: icpts, Version: build.Version, Revision: build.Revision, Modified: build.Modified, Address: conn.address, Namespace: conn.namespace, TaskQueue: conn.taskQueue, Security: conn.security,
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
			gate := auth.NewGate(keys)
			oc, err := auth.OAuthFromEnv(os.Getenv)
			if err != nil {
				return invalid(err)
			}
			if oc != nil {
				o, err := auth.NewOAuth(*oc)
				if err != nil {
					return invalid(err)
				}
				gate.WithOAuth(o) // bearer JWTs beside the keys (docs/security.md)
			}
			if keys.Empty() && oc == nil {
				return invalid(errors.New("no API key: create one with `weft mcp generate-key`, set WEFT_MCP_KEY, or accept OAuth tokens (WEFT_OAUTH_ISSUER, WEFT_OAUTH_AUDIENCE, WEFT_OAUTH_JWKS_URL)"))
			}
			hosts := append([]string{"127.0.0.1", "localhost", "::1", host}, allowedHosts...)
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			hooks, err := parseHooks(hookFlags, os.Getenv("WEFT_HOOK_SECRET"))
			if err != nil {
				return invalid(err)
			}
			handler, err := GatewayHTTP(g, keys, hosts, httpapi.Options{Gate: gate, WorkflowsDir: workflowsDir, NoBuiltins: noBuiltins, Hooks: hooks, Version: build.Version, Log: log})
			if err != nil {
				return err
			}
			srv := &http.Server{Addr: addr, Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", addr, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "weft mcp: http://%s/mcp, HTTP API http://%s/v1/ (its OpenAPI document: /v1/openapi.json; health: /health)\n", l.Addr(), l.Addr())
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
	cmd.Flags().StringArrayVar(&hookFlags, "hook", nil, "with --transport http: NAME=WORKFLOW starts WORKFLOW on POST /v1/hooks/NAME signed with WEFT_HOOK_SECRET, the body as its inputs (repeatable)")
	cmd.Flags().StringArrayVar(&allowedHosts, "allowed-host", nil, "Host header values to accept besides localhost (DNS-rebinding protection)")
	cmd.Flags().StringVar(&workflowsDir, "workflows-dir", "", "workflow files to offer (those with \"mcp\": {\"expose\": true} become wf_ tools)")
	cmd.Flags().BoolVar(&noBuiltins, "no-builtins", false, "do not offer the built-in templates")
	cmd.Flags().DurationVar(&wait, "wait", 20*time.Second, "how long wf_ tools wait for a result before answering with the run's status (well inside MCP clients' 60 s request timeout)")
	cmd.PersistentFlags().StringVar(&keyFile, "key-file", auth.KeyFile(), "where generated keys are stored, hashed")
	cmd.AddCommand(newGenerateKeyCommand(&keyFile), &cobra.Command{
		Use:   "revoke-key ID|KEY",
		Short: "Revoke an API key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			gone, err := auth.RevokeKey(keyFile, args[0])
			if err != nil {
				return invalid(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s: %s\n", gone.ID, gone.Identity())
			return nil
		},
	}, &cobra.Command{
		Use:   "list-keys",
		Short: "List the API keys: id, name, roles, created (never the keys)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := auth.ListKeys(keyFile)
			if err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no keys in %s: create one with weft mcp generate-key --name NAME --role ROLE\n", keyFile)
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tROLES\tCREATED")
			for _, k := range list {
				id := k.Identity()
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.ID, id.Name, strings.Join(id.Roles, ","), k.Created.Format(time.DateTime))
			}
			return tw.Flush()
		},
	})
	return cmd
}

// newGenerateKeyCommand: `weft mcp generate-key --name ana --role reviewer [--role finance]`.
func newGenerateKeyCommand(keyFile *string) *cobra.Command {
	var name string
	var roles []string
	cmd := &cobra.Command{
		Use:   "generate-key",
		Short: "Create an API key for a person or program, with its roles (printed once; only its hash is stored)",
		Long: "A key stands for --name: the runs it starts, the runs it cancels and the reviews it decides are\n" +
			"recorded under that name. --role limits what it may do (repeat for several):\n" +
			"  reader    the read-only tools: state, listings, validation, resources\n" +
			"  runner    reader + start, cancel and retry runs, chat, the tools that write\n" +
			"  reviewer  reader + decide reviews\n" +
			"  admin     everything (the default; also keys made before keys had roles, and WEFT_MCP_KEY)\n" +
			"Any other role (e.g. finance) grants nothing by itself: review steps name it in their\n" +
			"reviewers (\"reviewers\": [\"role:finance\"]) to say who may decide them.",
		Example: "  weft mcp generate-key --name ana --role reviewer --role finance\n  weft mcp generate-key --name ci --role runner",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, id, err := auth.GenerateNamedKey(*keyFile, name, roles)
			if err != nil {
				return invalid(err)
			}
			who := auth.StoredKey{ID: id, Name: name, Roles: roles}.Identity()
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n(id %s, for %s; stored hashed in %s; revoke with: weft mcp revoke-key %s)\n", key, id, who, *keyFile, id)
			builtin := false
			for _, r := range who.Roles {
				builtin = builtin || slices.Contains(auth.BuiltinRoles, r)
			}
			if !builtin {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s grants nothing by itself: add --role reader, runner or reviewer\n", strings.Join(who.Roles, ", "))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "who the key stands for (recorded on what it starts, cancels and decides); default key-ID")
	cmd.Flags().StringArrayVar(&roles, "role", nil, "reader, runner, reviewer, admin (default) or a routing role such as finance; repeat for several")
	return cmd
}
