package client

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/interceptor"
	"golang.org/x/sync/singleflight"

	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"

	"github.com/weftworks/weft/runwire"
)

// Environment variables Dial reads for the settings a caller leaves empty; the CLI's --address,
// --namespace and --task-queue default to the same variables (one rule: the value given, else the
// environment, else the default).
const (
	EnvAddress   = "TEMPORAL_ADDRESS"
	EnvNamespace = "TEMPORAL_NAMESPACE"
	EnvTaskQueue = "WEFT_TASK_QUEUE"
	// DefaultAddress is the frontend Dial uses when neither Address nor TEMPORAL_ADDRESS is set.
	DefaultAddress = "127.0.0.1:7233"
)

// Options says where Temporal is.
type Options struct {
	// Address is the frontend host:port (default: env TEMPORAL_ADDRESS, else the running `weft
	// dev`'s, as the CLI finds it (DevState), else 127.0.0.1:7233).
	Address string
	// Namespace (default: env TEMPORAL_NAMESPACE, else the running weft dev's, else "default").
	Namespace string
	// TaskQueue of the weft workers (default: env WEFT_TASK_QUEUE, else "weft").
	TaskQueue string
	// DialTimeout bounds the first connection (default 5s).
	DialTimeout time.Duration
	// DataConverter encodes payloads (codec.DataConverter: compression, encryption); nil is
	// Temporal's default.
	DataConverter converter.DataConverter
	// MetricsHandler receives the SDK's metrics (metrics.Metrics.SDK); nil: none.
	MetricsHandler tclient.MetricsHandler
	// Security: TLS, mTLS and API keys (Temporal Cloud); zero is a plain connection.
	Security Security
	// Interceptors wrap every call (tracing.Interceptor); workers built on this client inherit them.
	Interceptors []interceptor.ClientInterceptor
	// Logger receives the SDK's log lines (workers: task failures, retries, with workflow, run
	// and activity ids); nil discards them.
	Logger tlog.Logger
}

// fill sets what the caller left empty: the environment, else the defaults.
func (o *Options) fill() {
	if o.Address == "" {
		o.Address = Setting(EnvAddress, DefaultAddress)
	}
	if o.Namespace == "" {
		o.Namespace = Setting(EnvNamespace, "default")
	}
	if o.TaskQueue == "" {
		o.TaskQueue = envOr(EnvTaskQueue, runwire.TaskQueue)
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = 5 * time.Second
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// Client operates on weft runs.
type Client struct {
	t         tclient.Client
	taskQueue string
	owned     bool
	dc        converter.DataConverter
	// namespace is the connection's namespace when Dial made it ("" for New: unknown).
	namespace string
	// reads shares the events queries of the Streams that read the same run after the same
	// event at the same time (queryEvents).
	reads singleflight.Group
	// watches shares the history watches of the Streams that follow the same run (watch).
	watches watches
	// texts shares the reads of the model text of the runs they follow (readTexts).
	texts texts
	// gateway, when set, is where Streams follow runs (FollowThrough).
	gateway *Gateway
}

// converter decodes payloads the way the connection does.
func (c *Client) converter() converter.DataConverter {
	if c.dc != nil {
		return c.dc
	}
	return converter.GetDefaultDataConverter()
}

// QuietLogger discards the Temporal SDK's own log lines (people read weft's messages instead).
func QuietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))
}

// Dial connects to Temporal; the error says which setting to check.
func Dial(ctx context.Context, o Options) (*Client, error) {
	o.fill()
	dctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
	defer cancel()
	logger := o.Logger
	if logger == nil {
		logger = QuietLogger()
	}
	to := tclient.Options{HostPort: o.Address, Namespace: o.Namespace, Logger: logger, DataConverter: o.DataConverter, MetricsHandler: o.MetricsHandler,
		Interceptors: o.Interceptors}
	if err := o.Security.apply(&to); err != nil {
		return nil, &InvalidError{Err: err}
	}
	comp, err := GRPCCompression(o.Address)
	if err != nil {
		return nil, &InvalidError{Err: err}
	}
	to.ConnectionOptions.GrpcCompression = comp
	c, err := tclient.DialContext(dctx, to)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s (namespace %s): %w; start one with `weft dev`, or set TEMPORAL_ADDRESS / --address", o.Address, o.Namespace, err)
	}
	return &Client{t: c, taskQueue: o.TaskQueue, owned: true, dc: o.DataConverter, namespace: o.Namespace}, nil
}

// New wraps a Temporal client someone else owns (weft dev, tests). Close does not close it.
func New(c tclient.Client, taskQueue string) *Client {
	if taskQueue == "" {
		taskQueue = runwire.TaskQueue
	}
	return &Client{t: c, taskQueue: taskQueue}
}

// Temporal returns the underlying Temporal client (workers, health checks).
func (c *Client) Temporal() tclient.Client { return c.t }

// TaskQueue is the queue runs are started on.
func (c *Client) TaskQueue() string { return c.taskQueue }

// Close closes the connection when Dial made it.
func (c *Client) Close() {
	if c.owned {
		c.t.Close()
	}
}
