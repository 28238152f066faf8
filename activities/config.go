package activities

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/mcpclient"
	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/activities/openaicompat"
	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/voyage"
)

// Config holds provider settings. The worker fills it from the environment (ConfigFromEnv); it is
// the only place credentials are read.
type Config struct {
	VoyageAPIKey  string // VOYAGE_API_KEY
	VoyageBaseURL string // VOYAGE_BASE_URL (tests, proxies)
	OpenAIAPIKey  string // OPENAI_API_KEY
	OpenAIBaseURL string // OPENAI_BASE_URL: any OpenAI-compatible endpoint (Ollama, vLLM, OpenRouter)
	// EmbeddingModel is used when a step names none: voyage-4-large with a Voyage key,
	// otherwise the local embedder.
	EmbeddingModel string // WEFT_EMBEDDING_MODEL
	// ChatModel is the model generate, llm and agent use when a step names none.
	ChatModel string // WEFT_CHAT_MODEL
	// ModelAliases map names files use ("fast", "smart") to models (WEFT_MODEL_ALIASES,
	// "fast=gpt-4o-mini,smart=gpt-4.1"), so files do not hard-code vendors.
	ModelAliases map[string]string
	// PricesFile overrides the built-in price table (WEFT_PRICES_FILE).
	PricesFile string
	// Getenv reads the keys external MCP servers name in keyEnv (os.Getenv in the worker).
	Getenv func(string) string
	// ClaimCheckAbove is the output size from which outputs are kept in the knowledge store
	// instead of workflow history (WEFT_CLAIM_CHECK_ABOVE; default 256 KiB).
	ClaimCheckAbove int
	// MongoDBURI is the knowledge store (MONGODB_URI); `weft dev` points it at its embedded FerretDB.
	MongoDBURI string
	// Database is used when neither the step nor the workflow's defaults name one (WEFT_DB, default "weft").
	Database string
	// HTTPAllow lists addresses or CIDR prefixes the http tool may reach although they are
	// private, loopback or link-local (WEFT_HTTP_ALLOW, comma-separated).
	HTTPAllow []string
	// MCPServersFile declares the external MCP servers agents may reach (WEFT_MCP_SERVERS): the
	// only ones a definition sent by a client may name (LoadMCPPolicy).
	MCPServersFile string
	// CodeRoots are the directories code_index may read (WEFT_CODE_ROOTS, comma-separated): none
	// unless the operator names them, since a step's path is a file author's, a client's or a
	// model's.
	CodeRoots []string
	// CodeGitHosts are the hosts code_index may clone a Git repository from (WEFT_CODE_GIT_HOSTS,
	// comma-separated host or host:port; an entry written http://host[:port] also allows plain
	// http to it): none unless the operator names them, since a repo URL is a file author's, a
	// client's or a model's. The dial still goes through a private-address guard like the http
	// tool's, with its own allowance (CodeGitAllow).
	CodeGitHosts []string
	// CodeGitAllow lists addresses or CIDR prefixes code_index may clone from although they are
	// private, loopback or link-local (WEFT_CODE_GIT_ALLOW, comma-separated): an internal Git
	// host's. It opens them to code_index only, not to the http tool (WEFT_HTTP_ALLOW).
	CodeGitAllow []string
	// CodeGitMaxBytes bounds what one clone downloads, what its pack inflates to and what it
	// writes out, each file counting at least 4 KiB (WEFT_CODE_GIT_MAX_BYTES; default 256 MiB);
	// CodeGitMaxFiles bounds the files of its tree (WEFT_CODE_GIT_MAX_FILES; default 100,000);
	// CodeGitTimeout bounds how long it takes (WEFT_CODE_GIT_TIMEOUT, a Go duration; default 5m).
	CodeGitMaxBytes int64
	CodeGitMaxFiles int
	CodeGitTimeout  time.Duration
	// NoEmbedCache turns the embedding cache off (WEFT_EMBED_CACHE=off): every embedding is asked
	// of the provider, as when no store is configured.
	NoEmbedCache bool
	// Webhooks are the operator's webhooks (WEFT_WEBHOOKS: comma-separated URLs, or the path of a
	// JSON file; internal/webhook.Load); WebhookSecret signs what they are sent
	// (WEFT_WEBHOOK_SECRET); ConsoleURL is where their links point (WEFT_CONSOLE_URL).
	Webhooks, WebhookSecret, ConsoleURL string
}

// ConfigFromEnv reads the settings with getenv (os.Getenv in the worker).
func ConfigFromEnv(getenv func(string) string) Config {
	c := Config{
		VoyageAPIKey: getenv("VOYAGE_API_KEY"), VoyageBaseURL: getenv("VOYAGE_BASE_URL"),
		OpenAIAPIKey: getenv("OPENAI_API_KEY"), OpenAIBaseURL: getenv("OPENAI_BASE_URL"),
		EmbeddingModel: getenv("WEFT_EMBEDDING_MODEL"), ChatModel: getenv("WEFT_CHAT_MODEL"),
		MongoDBURI: getenv("MONGODB_URI"), Database: getenv("WEFT_DB"),
		HTTPAllow:      splitList(getenv("WEFT_HTTP_ALLOW")),
		ModelAliases:   parseAliases(getenv("WEFT_MODEL_ALIASES")),
		PricesFile:     getenv("WEFT_PRICES_FILE"),
		MCPServersFile: getenv("WEFT_MCP_SERVERS"),
		CodeRoots:      splitList(getenv("WEFT_CODE_ROOTS")),
		CodeGitHosts:   splitList(getenv("WEFT_CODE_GIT_HOSTS")),
		CodeGitAllow:   splitList(getenv("WEFT_CODE_GIT_ALLOW")),
		Webhooks:       getenv("WEFT_WEBHOOKS"),
		WebhookSecret:  getenv("WEFT_WEBHOOK_SECRET"),
		ConsoleURL:     getenv("WEFT_CONSOLE_URL"),
		Getenv:         getenv,
	}
	switch strings.ToLower(strings.TrimSpace(getenv("WEFT_EMBED_CACHE"))) {
	case "off", "false", "0", "no":
		c.NoEmbedCache = true
	}
	if n, err := strconv.Atoi(getenv("WEFT_CLAIM_CHECK_ABOVE")); err == nil && n > 0 {
		c.ClaimCheckAbove = n
	}
	if n, err := strconv.ParseInt(getenv("WEFT_CODE_GIT_MAX_BYTES"), 10, 64); err == nil && n > 0 {
		c.CodeGitMaxBytes = n
	}
	if n, err := strconv.Atoi(getenv("WEFT_CODE_GIT_MAX_FILES")); err == nil && n > 0 {
		c.CodeGitMaxFiles = n
	}
	if d, err := time.ParseDuration(getenv("WEFT_CODE_GIT_TIMEOUT")); err == nil && d > 0 {
		c.CodeGitTimeout = d
	}
	return c
}

// Tools implements the tool handlers over the configured providers.
type Tools struct {
	cfg    Config
	voyage *voyage.Client
	openai *openaicompat.Client
	prices Prices

	mcpPolicy    MCPPolicy
	mcpPolicyErr error
	// mcpSessions holds stateful servers' connections between a run's calls.
	mcpSessions *mcpclient.Sessions

	storeMu sync.Mutex
	store   *mongostore.Store

	embedCache embedCacheState
}

// NewTools builds the handlers for cfg.
func NewTools(cfg Config) *Tools {
	t := &Tools{cfg: cfg, prices: DefaultPrices(), mcpSessions: mcpclient.NewSessions(0)}
	if t.mcpPolicy, t.mcpPolicyErr = LoadMCPPolicy(cfg.MCPServersFile); t.mcpPolicyErr != nil {
		slog.Error("no external MCP server can be reached until this is fixed", "error", t.mcpPolicyErr)
	}
	if err := checkCodeGitHosts(cfg.CodeGitHosts); err != nil {
		slog.Error("code_index clones no Git repository until this is fixed", "error", err)
	}
	if p, err := LoadPrices(cfg.PricesFile); err == nil {
		t.prices = p
	} else {
		slog.Warn("using the built-in price table", "error", err)
	}
	if cfg.VoyageAPIKey != "" {
		t.voyage = voyage.New(cfg.VoyageAPIKey, cfg.VoyageBaseURL)
	}
	if cfg.OpenAIAPIKey != "" || cfg.OpenAIBaseURL != "" {
		t.openai = openaicompat.New(cfg.OpenAIAPIKey, cfg.OpenAIBaseURL)
	}
	return t
}

// getenv reads worker environment variables for external MCP servers' keys.
func (t *Tools) getenv(k string) string {
	if t.cfg.Getenv == nil {
		return ""
	}
	return t.cfg.Getenv(k)
}

// defaultEmbeddingModel is the model a step without "model" uses.
func (t *Tools) defaultEmbeddingModel() string {
	switch {
	case t.cfg.EmbeddingModel != "":
		return t.cfg.EmbeddingModel
	case t.voyage != nil:
		return "voyage-4-large"
	}
	return embedder.Model
}

// embedderFor picks the provider of an embedding model.
func (t *Tools) embedderFor(model string) (provider.Embedder, error) {
	switch {
	case model == embedder.Model:
		return localEmbedder{}, nil
	case len(model) > 7 && model[:7] == "voyage-":
		if t.voyage == nil {
			return nil, &ConfigError{Msg: "model " + model + " needs a Voyage AI key: set VOYAGE_API_KEY, or use model " + embedder.Model + " (offline)"}
		}
		return t.voyage, nil
	case t.openai != nil:
		return t.openai, nil
	}
	return nil, &ConfigError{Msg: "model " + model + " needs an OpenAI-compatible endpoint: set OPENAI_BASE_URL (and OPENAI_API_KEY), or use " + embedder.Model + " (offline)"}
}

// Store returns the knowledge store, connecting on first use (and again after a failure).
func (t *Tools) Store(ctx context.Context) (*mongostore.Store, error) {
	t.storeMu.Lock()
	defer t.storeMu.Unlock()
	if t.store != nil {
		return t.store, nil
	}
	if t.cfg.MongoDBURI == "" {
		return nil, &ConfigError{Msg: "no knowledge store configured: set MONGODB_URI (weft dev sets it to its embedded database)"}
	}
	s, err := mongostore.Open(ctx, t.cfg.MongoDBURI)
	if err != nil {
		return nil, err // retryable: the database may come back
	}
	t.store = s
	return s, nil
}

// PingStore asks the knowledge store whether it answers (connecting first, as Store does): what
// a health check asks, in one round trip, where listing the collections takes longer the more
// there are.
func (t *Tools) PingStore(ctx context.Context) error {
	s, err := t.Store(ctx)
	if err != nil {
		return err
	}
	return s.Ping(ctx)
}

// databaseNamed is the database a step names, or the configured one.
func (t *Tools) databaseNamed(db string) string {
	if db != "" {
		return db
	}
	if t.cfg.Database != "" {
		return t.cfg.Database
	}
	return "weft"
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
