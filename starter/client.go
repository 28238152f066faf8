package starter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"

	"github.com/spf13/cobra"

	"go.temporal.io/sdk/converter"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/codec"
	"github.com/weftworks/weft/metrics"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/tracing"
)

// connFlags are the Temporal connection settings shared by every command that talks to a server.
type connFlags struct {
	address   string
	namespace string
	taskQueue string
	security  weftclient.Security
	logger    tlog.Logger // the SDK's log lines (nil: discarded)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func (f *connFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.address, "address", settingOr(weftclient.EnvAddress, weftclient.DefaultAddress), "Temporal frontend host:port (env TEMPORAL_ADDRESS; else a running weft dev's)")
	cmd.Flags().StringVar(&f.namespace, "namespace", settingOr(weftclient.EnvNamespace, "default"), "Temporal namespace (env TEMPORAL_NAMESPACE)")
	cmd.Flags().StringVar(&f.taskQueue, "task-queue", envOr(weftclient.EnvTaskQueue, runwire.TaskQueue), "task queue of the weft workers (env WEFT_TASK_QUEUE)")
	// the temporal CLI's names, so one environment serves both
	cmd.Flags().BoolVar(&f.security.TLS, "tls", os.Getenv("TEMPORAL_TLS") == "true", "connect to Temporal with TLS (env TEMPORAL_TLS=true; implied by the other TLS flags and --api-key)")
	cmd.Flags().StringVar(&f.security.CertFile, "tls-cert-path", os.Getenv("TEMPORAL_TLS_CERT"), "client certificate for mTLS, PEM (env TEMPORAL_TLS_CERT)")
	cmd.Flags().StringVar(&f.security.KeyFile, "tls-key-path", os.Getenv("TEMPORAL_TLS_KEY"), "its private key, PEM (env TEMPORAL_TLS_KEY)")
	cmd.Flags().StringVar(&f.security.CAFile, "tls-ca-path", os.Getenv("TEMPORAL_TLS_CA"), "CA of the server's certificate, PEM (env TEMPORAL_TLS_CA; default: the system's)")
	cmd.Flags().StringVar(&f.security.ServerName, "tls-server-name", os.Getenv("TEMPORAL_TLS_SERVER_NAME"), "server name to verify (env TEMPORAL_TLS_SERVER_NAME)")
	cmd.Flags().StringVar(&f.security.APIKey, "api-key", os.Getenv("TEMPORAL_API_KEY"), "Temporal Cloud API key (env TEMPORAL_API_KEY)")
}

// with dials Temporal, runs fn with the client and closes it: the one dial-and-close of the
// commands that talk to a server (fn's error is the command's).
func (f *connFlags) with(ctx context.Context, fn func(*weftclient.Client) error) error {
	return f.withMetrics(ctx, nil, fn)
}

// withMetrics is with, the client reporting the SDK's metrics to m (nil: none).
func (f *connFlags) withMetrics(ctx context.Context, m *metrics.Metrics, fn func(*weftclient.Client) error) error {
	c, err := f.dial(ctx, m)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}

// dial connects to Temporal through the one client package, with the payload codecs the
// environment configures, reporting the SDK's metrics to m (nil: none); the error says which
// setting to check.
func (f *connFlags) dial(ctx context.Context, m *metrics.Metrics) (*weftclient.Client, error) {
	dc, err := dataConverter()
	if err != nil {
		return nil, err
	}
	o := weftclient.Options{Address: f.address, Namespace: f.namespace, TaskQueue: f.taskQueue, DataConverter: dc, Security: f.security, Logger: f.logger}
	if i, err := startTracing(ctx); err != nil {
		return nil, err
	} else if i != nil {
		o.Interceptors = []interceptor.ClientInterceptor{i}
	}
	if m != nil {
		o.MetricsHandler = m.SDK()
	}
	return weftclient.Dial(ctx, o)
}

// serveMetrics starts /metrics on addr ("" disables it) and returns the registry.
func serveMetrics(addr string, errOut io.Writer) *metrics.Metrics {
	if addr == "" {
		return nil
	}
	m := metrics.New()
	go func() {
		if err := m.Serve(addr); err != nil {
			fmt.Fprintf(errOut, "weft: metrics on %s: %v\n", addr, err)
		}
	}()
	return m
}

// dataConverter is Temporal's converter with weft's codecs (WEFT_CODEC_KEYS, ...).
func dataConverter() (converter.DataConverter, error) {
	o, err := codec.FromEnv(os.Getenv)
	if err != nil {
		return nil, invalid(err)
	}
	return codec.DataConverter(o)
}

// clientError gives a client error its exit code: the caller's mistakes exit 2.
func clientError(err error) error {
	if err == nil {
		return nil
	}
	if weftclient.IsInvalid(err) {
		return invalid(err)
	}
	return err
}

// sdkLogger is a log/slog logger for the SDK's log lines in the given format (text, json; off
// discards them) at the given level (debug, info, warn, error).
func sdkLogger(format, level string, w io.Writer) (tlog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	o := &slog.HandlerOptions{Level: lv}
	switch format {
	case "off":
		return weftclient.QuietLogger(), nil
	case "text":
		return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(w, o))), nil
	case "json":
		return tlog.NewStructuredLogger(slog.New(slog.NewJSONHandler(w, o))), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text, json or off", format)
}

// Tracing is set up once per process and flushed when the command ends (Execute).
var (
	tracingOnce  sync.Once
	tracingIcpt  interceptor.Interceptor
	tracingErr   error
	tracingFlush func(context.Context) error
)

func startTracing(ctx context.Context) (interceptor.Interceptor, error) {
	tracingOnce.Do(func() {
		tracingIcpt, tracingFlush, tracingErr = tracing.FromEnv(ctx, "weft", os.Getenv)
	})
	return tracingIcpt, tracingErr
}

// flushTracing sends the spans still buffered (a no-op without tracing).
func flushTracing() {
	if tracingFlush != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tracingFlush(ctx)
	}
}
