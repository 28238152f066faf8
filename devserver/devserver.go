package devserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

// SearchAttributes are the custom search attributes weft uses.
var SearchAttributes = map[string]enumspb.IndexedValueType{
	"WeftStatus": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
}

// Options configures the embedded stack.
type Options struct {
	// DataDir holds temporal.db; empty keeps everything in memory (tests).
	DataDir   string
	Host      string // default 127.0.0.1
	Port      int    // frontend gRPC; 0 picks a free port
	UIPort    int    // Web UI; 0 disables it
	Namespace string // default "default"
	// LogFile receives the server's logs (default: DataDir/temporal.log, or discarded in memory).
	LogFile string
	// CodecEndpoint is a remote codec the Web UI decodes payloads with (weft's codec server).
	CodecEndpoint string
	// Postgres, when set (postgres://USER:PASSWORD@HOST:PORT/), keeps Temporal's data in
	// PostgreSQL instead of SQLite: the databases temporal and temporal_visibility are created
	// and their schemas set up or updated at start. DataDir then holds only the log.
	Postgres string
	// HistoryShards is fixed when a PostgreSQL database is first set up (default 4; SQLite: 1).
	HistoryShards int32
}

// Server is a running embedded stack.
type Server struct {
	Address   string // host:port of the frontend
	UIAddress string // http://host:port, or "" without UI
	Namespace string
	server    temporal.Server
	ui        *uiserver.Server
}

func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts Temporal (and the UI when UIPort is set) and waits until the frontend answers.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	addr, ports, err := listenPorts(o)
	if err != nil {
		return nil, err
	}
	conf, err := serverConfig(o, addr, ports)
	if err != nil {
		return nil, err
	}
	srv, err := newServer(o, conf, ports)
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("starting Temporal on %s: %w", addr, err)
	}
	s := &Server{Address: addr, Namespace: o.Namespace, server: srv}
	if o.Postgres != "" {
		if err := s.ensureNamespace(ctx); err != nil {
			s.Stop()
			return nil, err
		}
	}
	if err := s.ensureSearchAttributes(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	if o.UIPort > 0 {
		if err := s.startUI(o); err != nil {
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// listenPorts picks the ports of Temporal's services (the frontend's o.Port, or a free one when it
// is 0) and checks the frontend's address is free: addr is its host:port.
func listenPorts(o Options) (addr string, ports map[string]int, err error) {
	if o.Port == 0 {
		if o.Port, err = freePort(o.Host); err != nil {
			return "", nil, err
		}
	}
	ports = map[string]int{"frontend": o.Port}
	for _, svc := range []string{"frontend-http", "history", "matching", "worker"} {
		if ports[svc], err = freePort(o.Host); err != nil {
			return "", nil, err
		}
	}
	addr = net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
	if l, err := net.Listen("tcp", addr); err != nil {
		return "", nil, fmt.Errorf("cannot listen for Temporal on %s (another weft dev or server running? choose another --port): %w", addr, err)
	} else {
		l.Close()
	}
	return addr, ports, nil
}

// serverConfig is Temporal's configuration: its store (SQLite, or PostgreSQL set up first), one
// cluster at addr, and its services on ports.
func serverConfig(o Options, addr string, ports map[string]int) (*config.Config, error) {
	conf := &config.Config{}
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = o.Host
	if o.Postgres == "" {
		sqlConf, err := sqlConfig(o)
		if err != nil {
			return nil, err
		}
		conf.Persistence.DefaultStore = "sqlite"
		conf.Persistence.VisibilityStore = "sqlite"
		conf.Persistence.NumHistoryShards = 1
		conf.Persistence.DataStores = map[string]config.DataStore{"sqlite": {SQL: sqlConf}}
	} else {
		main, vis, adminDB, err := postgresConfigs(o.Postgres)
		if err != nil {
			return nil, err
		}
		if err := setupPostgres(map[string]*config.SQL{"postgresql/v12/temporal": main, "postgresql/v12/visibility": vis}, adminDB, quietServerLogger()); err != nil {
			return nil, err
		}
		conf.Persistence.DefaultStore = "postgres"
		conf.Persistence.VisibilityStore = "postgres-visibility"
		conf.Persistence.NumHistoryShards = max(o.HistoryShards, 4)
		conf.Persistence.DataStores = map[string]config.DataStore{"postgres": {SQL: main}, "postgres-visibility": {SQL: vis}}
	}
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        "active",
		CurrentClusterName:       "active",
		ClusterInformation: map[string]cluster.ClusterInformation{"active": {
			Enabled: true, InitialFailoverVersion: 1, RPCAddress: addr,
			HTTPAddress: net.JoinHostPort(o.Host, strconv.Itoa(ports["frontend-http"])), ClusterID: "weft-dev",
		}},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	svc := func(grpc, http int) config.Service {
		var s config.Service
		s.RPC.GRPCPort, s.RPC.BindOnIP, s.RPC.HTTPPort = grpc, o.Host, http
		return s
	}
	conf.Services = map[string]config.Service{
		"frontend": svc(ports["frontend"], ports["frontend-http"]),
		"history":  svc(ports["history"], 0),
		"matching": svc(ports["matching"], 0),
		"worker":   svc(ports["worker"], 0),
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = addr
	return conf, nil
}

// newServer makes the Temporal server of conf: its logs (o.LogFile, DataDir/temporal.log, or none
// in memory), authorization, the dynamic settings measured for SQLite and its hosts on ports.
func newServer(o Options, conf *config.Config, ports map[string]int) (temporal.Server, error) {
	logConf := log.Config{Level: "warn"}
	switch {
	case o.LogFile != "":
		logConf.OutputFile = o.LogFile
	case o.DataDir != "":
		logConf.OutputFile = filepath.Join(o.DataDir, "temporal.log")
	default:
		logConf.Level = "fatal"
	}
	logger := log.NewZapLogger(log.BuildZapLogger(logConf))
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, err
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, logger)
	if err != nil {
		return nil, err
	}
	host := func(port int) static.Hosts {
		return static.SingleLocalHost(net.JoinHostPort(o.Host, strconv.Itoa(port)))
	}
	dyn := dynamicconfig.StaticClient{
		// Measured on a 2-core machine: a larger host cache and one task-queue partition roughly
		// double throughput on SQLite.
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():           1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key():          1,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
	}
	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(map[primitives.ServiceName]static.Hosts{
			primitives.FrontendService: host(ports["frontend"]),
			primitives.HistoryService:  host(ports["history"]),
			primitives.MatchingService: host(ports["matching"]),
			primitives.WorkerService:   host(ports["worker"]),
		}),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		return nil, fmt.Errorf("configuring Temporal: %w", err)
	}
	return srv, nil
}

// startUI starts the Web UI on o.UIPort against s's frontend, and sets s.UIAddress.
func (s *Server) startUI(o Options) error {
	s.ui = uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host: o.Host, Port: o.UIPort, TemporalGRPCAddress: s.Address, EnableUI: true,
		CORS: uiconfig.CORS{CookieInsecure: true}, HideLogs: true, DisableNewsFetch: true,
		DefaultNamespace: o.Namespace,
		Codec:            uiconfig.Codec{Endpoint: o.CodecEndpoint},
	}))
	uiErr := make(chan error, 1)
	go func() { uiErr <- s.ui.Start() }()
	select {
	case err := <-uiErr:
		return fmt.Errorf("starting the Web UI on %s:%d: %w", o.Host, o.UIPort, err)
	case <-time.After(300 * time.Millisecond):
	}
	s.UIAddress = fmt.Sprintf("http://%s", net.JoinHostPort(o.Host, strconv.Itoa(o.UIPort)))
	return nil
}

func sqlConfig(o Options) (*config.SQL, error) {
	c := &config.SQL{PluginName: sqliteplugin.PluginName}
	if o.DataDir == "" {
		port, err := freePort(o.Host)
		if err != nil {
			return nil, err
		}
		// In memory mode the SQLite plugin creates the schema itself.
		c.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
		c.DatabaseName = "weft-" + strconv.Itoa(port)
	} else {
		if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("data dir %s: %w", o.DataDir, err)
		}
		c.DatabaseName = filepath.Join(o.DataDir, "temporal.db")
		// WAL with synchronous=normal measured ~3.5x faster than the default journal here.
		c.ConnectAttributes = map[string]string{"mode": "rwc", "journal_mode": "wal", "synchronous": "normal"}
		if _, err := os.Stat(c.DatabaseName); errors.Is(err, os.ErrNotExist) {
			if err := sqliteschema.SetupSchema(c); err != nil {
				return nil, fmt.Errorf("creating the Temporal schema in %s: %w", c.DatabaseName, err)
			}
		}
	}
	ns, err := sqliteschema.NewNamespaceConfig("active", o.Namespace, false, SearchAttributes)
	if err != nil {
		return nil, err
	}
	if err := sqliteschema.CreateNamespaces(c, ns); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", o.Namespace, err)
	}
	return c, nil
}

// ensureSearchAttributes waits for the frontend and registers weft's search attributes when an
// older data directory lacks them.
func (s *Server) ensureSearchAttributes(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var c client.Client
	var err error
	for {
		c, err = client.DialContext(ctx, client.Options{HostPort: s.Address, Namespace: s.Namespace, Logger: quietLogger()})
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no answer from Temporal on %s: %w", s.Address, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	defer c.Close()
	// A namespace registered a moment ago is known to every service after their caches refresh.
	var resp *operatorservice.ListSearchAttributesResponse
	for {
		resp, err = c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: s.Namespace})
		var nf *serviceerror.NamespaceNotFound
		if err == nil || !errors.As(err, &nf) || ctx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("listing search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, t := range SearchAttributes {
		if _, ok := resp.GetCustomAttributes()[name]; !ok {
			missing[name] = t
		}
	}
	if len(missing) == 0 {
		return nil
	}
	for {
		_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: s.Namespace, SearchAttributes: missing})
		var nf *serviceerror.NamespaceNotFound
		if err == nil || !errors.As(err, &nf) || ctx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("registering search attributes %v: %w", missing, err)
	}
	return nil
}

// Stop stops the UI and the server.
func (s *Server) Stop() {
	if s.ui != nil {
		s.ui.Stop()
	}
	_ = s.server.Stop()
}
