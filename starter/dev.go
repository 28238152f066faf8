package starter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/codec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/worker"
)

// DemoTemplate is the workflow `weft dev --demo` starts.
const DemoTemplate = "approval-demo"

func newDevCommand() *cobra.Command {
	var dataDir, host string
	var port, uiPort, dbPort, codecPort int
	var demo, env bool
	noWorker := false
	var metricsAddr string
	var cf consoleFlags
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the embedded stack: Temporal, its Web UI and a weft worker, in one process",
		Long: "Starts a real Temporal server in-process (SQLite in --data-dir, so runs survive a restart),\n" +
			"the Temporal Web UI, the WeftStatus search attribute, an embedded MongoDB-wire database\n" +
			"(FerretDB, unless MONGODB_URI points elsewhere) and a worker, all on 127.0.0.1.\n" +
			"Nothing to install. Stop with Ctrl-C. --demo also starts a run that pauses for review.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if env {
				s, ok := readDevState()
				if !ok {
					return errors.New("no weft dev is running on this machine: start one with `weft dev` (or `make run`)")
				}
				printDevEnv(cmd.OutOrStdout(), s)
				return nil
			}
			if noWorker && demo {
				return invalid(errors.New("--demo needs the in-process worker: drop --no-worker"))
			}
			cfg := activities.ConfigFromEnv(os.Getenv)
			codecOpts, err := codec.FromEnv(os.Getenv)
			if err != nil {
				return invalid(err)
			}
			// Checked in weft before it hands over to weft-stack: a busy port is said at once.
			if err := checkPorts(devPorts(host, port, uiPort, dbPort, codecPort, cfg.MongoDBURI == "", len(codecOpts.Keys) > 0, cf.listen, metricsAddr)); err != nil {
				return err
			}
			ctx, stop, err := stackContext(cmd)
			if err != nil {
				return err
			}
			defer stop()
			out := cmd.OutOrStdout()
			started := time.Now()
			if cfg.MongoDBURI != "" {
				// Say up only when the store answers, not when the first tool needs it.
				if err := checkStore(ctx, cfg.MongoDBURI, storePingTimeout); err != nil {
					return err
				}
			}
			codecEndpoint, err := startDevCodec(ctx, host, codecPort, uiPort)
			if err != nil {
				return err
			}
			if err := ignoreWeftDir(dataDir); err != nil {
				return err
			}
			srv, err := stack.Temporal(ctx, TemporalOptions{DataDir: dataDir, Host: host, Port: port, UIPort: uiPort, CodecEndpoint: codecEndpoint})
			if err != nil {
				return err
			}
			defer srv.Stop()
			dbNote := cfg.MongoDBURI + " (MONGODB_URI)"
			if cfg.MongoDBURI == "" {
				db, err := stack.Store(ctx, filepath.Join(dataDir, "db"), dbPort)
				if err != nil {
					return err
				}
				defer db.Stop()
				cfg.MongoDBURI = db.URI
				dbNote = db.URI + " (embedded FerretDB)"
			}
			conn := connFlags{address: srv.Address, namespace: srv.Namespace, taskQueue: runwire.TaskQueue}
			m := serveMetrics(metricsAddr, cmd.ErrOrStderr())
			return conn.withMetrics(ctx, m, func(c *weftclient.Client) error {
				if !noWorker {
					w, err := worker.New(c.Temporal(), worker.Options{TaskQueue: conn.taskQueue, Config: cfg, Metrics: m})
					if err != nil {
						return err
					}
					if err := w.Start(); err != nil {
						return fmt.Errorf("starting the worker: %w", err)
					}
					defer w.Stop()
				}
				fmt.Fprintf(out, "weft dev is up in %s\n", time.Since(started).Round(time.Millisecond))
				fmt.Fprintf(out, "  Temporal   %s  (namespace %s, task queue %s)\n", srv.Address, srv.Namespace, conn.taskQueue)
				if srv.UIAddress != "" {
					fmt.Fprintf(out, "  Web UI     %s\n", srv.UIAddress)
				}
				consoleURL := ""
				if cf.listen != "" && cf.listen != "off" {
					cf.temporalUI = srv.UIAddress
					if consoleURL, err = cf.serveConsole(ctx, c, srv.Namespace, cmd.ErrOrStderr()); err != nil {
						return err
					}
					fmt.Fprintf(out, "  Console    %s  (runs drawn live, reviews, workflow playground)\n", consoleURL)
				}
				fmt.Fprintf(out, "  Database   %s\n", dbNote)
				if codecEndpoint != "" {
					fmt.Fprintf(out, "  Codec      %s  (payloads are encrypted; the Web UI decodes them here)\n", codecEndpoint)
				}
				fmt.Fprintf(out, "  Data       %s\n", dataDir)
				state := devState{PID: os.Getpid(), Temporal: srv.Address, Namespace: srv.Namespace, MongoDB: cfg.MongoDBURI, UI: srv.UIAddress}
				if err := writeDevState(state); err != nil {
					fmt.Fprintf(out, "  (cannot write %s: %v; other weft commands need the exports below)\n", devStateFile(), err)
				}
				defer removeDevState(os.Getpid())
				fmt.Fprintln(out, "  Other weft commands on this machine find it by themselves; other tools need:")
				fmt.Fprintf(out, "    export TEMPORAL_ADDRESS=%s MONGODB_URI=%s   (or: eval \"$(weft dev --env)\")\n", srv.Address, cfg.MongoDBURI)
				fmt.Fprintln(out, "  Try: weft run cost-analysis --input docs=100000     weft run approval-demo")
				fmt.Fprintln(out, "       weft runs          weft reviews          weft status ID")
				if demo {
					if err := startDemo(ctx, c, srv, consoleURL, out); err != nil {
						return err
					}
				}
				<-ctx.Done()
				fmt.Fprintln(out, "\nweft dev: stopping")
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", ".weft/dev", "where Temporal keeps its SQLite database and log")
	cmd.Flags().StringVar(&host, "host", "127.0.0.1", "address to bind")
	cmd.Flags().IntVar(&port, "port", 7233, "Temporal frontend port")
	cmd.Flags().IntVar(&uiPort, "ui-port", 8233, "Web UI port (0 disables the UI)")
	cmd.Flags().IntVar(&dbPort, "db-port", 27017, "embedded database port (ignored when MONGODB_URI is set)")
	cmd.Flags().IntVar(&codecPort, "codec-port", 8081, "codec server port for the Web UI, when WEFT_CODEC_KEYS encrypts payloads")
	cmd.Flags().BoolVar(&demo, "demo", false, "start the approval-demo workflow and show how to approve it")
	cmd.Flags().StringVar(&metricsAddr, "metrics", "", "serve Prometheus metrics of the worker on this address (/metrics)")
	cf.register(cmd, "console")
	cmd.Flags().BoolVar(&noWorker, "no-worker", false, "start no worker in this process (run `weft worker` processes instead)")
	cmd.Flags().BoolVar(&env, "env", false, "print the export lines of the running weft dev (eval \"$(weft dev --env)\") and exit")
	return cmd
}

// runTemplate runs a built-in template to completion.
func runTemplate(ctx context.Context, c *weftclient.Client, name string, inputs map[string]any) (*weftv1.RunResult, error) {
	w, err := weftclient.Template(name)
	if err != nil {
		return nil, err
	}
	return c.Run(ctx, w, weftclient.StartOptions{Source: name, Inputs: inputs})
}

// seedDemo ingests the sample corpus (idempotent: chunk ids are deterministic) and runs the
// retrieval templates on it, all offline.
func seedDemo(ctx context.Context, c *weftclient.Client, out interface{ Write([]byte) (int, error) }) error {
	for _, coll := range []string{"api_docs", "architecture"} {
		docs := templates.CorpusInputs(coll)
		res, err := runTemplate(ctx, c, "batch-ingest", map[string]any{"docs": docs, "collection": coll})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  batch-ingest: %d sample documents in %s [%dms]\n", len(docs), coll, res.DurationMs)
	}
	q := "what happens when we hit the rate limit"
	res, err := runTemplate(ctx, c, "multi-collection-search", map[string]any{"query": q, "limit": 5.0})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  multi-collection-search %q [%dms]:\n", q, res.DurationMs)
	results, _ := res.Output.GetStructValue().AsMap()["results"].([]any)
	for i, r := range results {
		if i == 5 {
			break
		}
		m, _ := r.(map[string]any)
		fmt.Fprintf(out, "    [%d] %-32v %.3f\n", i+1, m["source"], m["rerankedScore"])
	}
	res, err = runTemplate(ctx, c, "smart-ingest", map[string]any{"text": "Webhook deliveries are retried with exponential backoff for three days.", "source": "notes/webhooks.md"})
	if err != nil {
		return err
	}
	b, _ := json.Marshal(res.Output.AsInterface())
	fmt.Fprintf(out, "  smart-ingest [%dms]: %s\n", res.DurationMs, b)
	return nil
}

// startDemo seeds the sample corpus, runs the retrieval demos, then starts the review demo and
// reports, in the background, when it pauses and finishes.
func startDemo(ctx context.Context, c *weftclient.Client, srv *RunningTemporal, consoleURL string, out interface{ Write([]byte) (int, error) }) error {
	fmt.Fprintln(out, "\nDemo: the sample corpus, offline (local embedder, embedded database):")
	if err := seedDemo(ctx, c, out); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	w, err := weftclient.Template(DemoTemplate)
	if err != nil {
		return err
	}
	run, err := c.Start(ctx, w, weftclient.StartOptions{Source: DemoTemplate})
	if err != nil {
		return fmt.Errorf("starting the demo: %w", err)
	}
	id := run.ID
	addr := ""
	if srv.Address != "127.0.0.1:7233" {
		addr = " --address " + srv.Address
	}
	fmt.Fprintf(out, "\nDemo run %s started (%s).\n", id, DemoTemplate)
	go func() {
		for ctx.Err() == nil {
			st, err := c.State(ctx, id)
			if err == nil && len(st.PendingReviews) > 0 {
				fmt.Fprintf(out, "It is paused for review: %q\n", st.PendingReviews[0].Title)
				fmt.Fprintf(out, "  approve:  weft review %s approve%s\n", id, addr)
				if consoleURL != "" {
					fmt.Fprintf(out, "  or click: %s/runs/%s\n", consoleURL, id)
				}
				fmt.Fprintf(out, "  or:       temporal workflow signal --workflow-id %s --name review --input '{\"decision\":\"approve\",\"reviewer\":\"you\"}'%s\n", id, addr)
				if srv.UIAddress != "" {
					fmt.Fprintf(out, "  see it:   %s/namespaces/%s/workflows/%s  (or search WeftStatus=\"awaiting_review\")\n", srv.UIAddress, srv.Namespace, id)
				}
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		res, err := run.Get(ctx)
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(out, "Demo run %s failed: %s\n", id, weftclient.Cause(err))
			}
			return
		}
		b, _ := res.Output.MarshalJSON()
		fmt.Fprintf(out, "Demo run %s completed in %dms: %s\n", id, res.DurationMs, b)
	}()
	return nil
}

// storePingTimeout bounds weft dev's check that the database at MONGODB_URI answers.
var storePingTimeout = 3 * time.Second

// checkStore pings the MongoDB-wire database at uri (MONGODB_URI), waiting at most timeout.
func checkStore(ctx context.Context, uri string, timeout time.Duration) error {
	if err := weftclient.CheckHealth(ctx, weftclient.HealthCheck{Store: mongoPing(uri), Timeout: timeout}).Store; err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("the database at MONGODB_URI=%s does not answer (ping, %s): %w; start it, correct MONGODB_URI, or unset MONGODB_URI to use the embedded database",
			hidePassword(uri), timeout, err)}
	}
	return nil
}

// hidePassword masks the password of a connection string for messages.
func hidePassword(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.User == nil {
		return uri
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// startDevCodec serves the payload codecs to the Web UI when payloads are encrypted; it returns
// the endpoint ("" when there are no keys).
func startDevCodec(ctx context.Context, host string, port, uiPort int) (string, error) {
	o, err := codec.FromEnv(os.Getenv)
	if err != nil {
		return "", invalid(err)
	}
	if len(o.Keys) == 0 {
		return "", nil
	}
	codecs, err := codec.Codecs(o)
	if err != nil {
		return "", invalid(err)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("codec server on %s: %w (choose another --codec-port)", addr, err)
	}
	origin := "http://" + net.JoinHostPort(host, strconv.Itoa(uiPort))
	srv := &http.Server{Handler: CodecHandler(codecs, origin, nil), ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), nil
}
