# weft — run `make help` for the targets.
# bash with pipefail: a recipe that pipes go test into another program fails when go test does.
SHELL       := bash
.SHELLFLAGS := -o pipefail -c
GO        ?= go
BIN       := bin/weft
PKGS      := ./...
FUZZTIME  ?= 10m
BENCHTIME ?= 1s
TEMPORAL_CLI := bin/temporal
MCP_CLIENT   := scripts/mcp-smoke/node_modules/.package-lock.json

.PHONY: help build release test run bench fuzz lint fmt clean proto workflowcheck mcp-smoke mcp-conformance mcp-client agui-client http-client temporal soak cluster scaleout flakes

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build bin/weft and bin/weft-stack (the CLI with the embedded Temporal server and FerretDB, for dev/server/store)
	$(GO) build -o $(BIN) ./cmd/weft
	$(GO) build -o $(BIN)-stack ./cmd/weft-stack

# make release: weft and weft-stack for each of TARGETS (GOOS/GOARCH), cgo-free (the embedded
# SQLite is modernc's pure Go), each pair with README.md in dist/weft_VERSION_OS_ARCH.tar.gz, and
# dist/SHA256SUMS. VERSION defaults to git describe (a tag, else the commit; -dirty with changes);
# the version and the commit are linked in (starter.Version, starter.Revision), so weft --version
# says them whatever GOFLAGS says about -buildvcs. One target: make release TARGETS=linux/amd64.
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null)
TARGETS   ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
LDFLAGS   := -s -w -X github.com/weftworks/weft/starter.Version=$(VERSION) -X github.com/weftworks/weft/starter.Revision=$(REVISION)
SHA256SUM := $(shell command -v sha256sum >/dev/null 2>&1 && echo sha256sum || echo shasum -a 256)

release: ## versioned archives of weft + weft-stack for linux and darwin, amd64 and arm64, with SHA256SUMS, in dist/ (TARGETS=linux/amd64 for one)
	rm -rf dist && mkdir -p dist
	@set -e; for t in $(TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; name=weft_$(VERSION)_$${os}_$${arch}; \
		echo "$$name"; mkdir -p dist/$$name; \
		for cmd in weft weft-stack; do \
			CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/$$name/$$cmd ./cmd/$$cmd; \
		done; \
		cp README.md dist/$$name/; \
		tar -C dist -czf dist/$$name.tar.gz $$name; rm -rf dist/$$name; \
	done
	cd dist && $(SHA256SUM) *.tar.gz > SHA256SUMS && cat SHA256SUMS

GOBIN_DIR   := $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN_DIR)/staticcheck
ERRCHECK    := $(GOBIN_DIR)/errcheck

$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2

$(ERRCHECK):
	$(GO) install github.com/kisielk/errcheck@v1.30.0

# funclen fails the lint when a function (tests left out) is longer than FUNC_MAX lines.
FUNC_MAX ?= 150

# staticcheck runs its default checks (exceptions are //lint:ignore lines with a reason); errcheck skips tests and what .errcheck-excludes
# lists (writes to a terminal or a response, closing what is given up), each with its reason.
lint: $(STATICCHECK) $(ERRCHECK) workflowcheck ## gofmt, go vet, staticcheck, errcheck, workflowcheck and funclen (no function over 150 lines)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	$(STATICCHECK) $(PKGS)
	$(ERRCHECK) -ignoretests -exclude .errcheck-excludes $(PKGS)
	$(GO) run ./scripts/funclen -n 0 -max $(FUNC_MAX) .

WORKFLOWCHECK := $(GOBIN_DIR)/workflowcheck

$(WORKFLOWCHECK):
	$(GO) install go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0

workflowcheck: $(WORKFLOWCHECK) ## determinism check of the interpreter
	$(WORKFLOWCHECK) -config workflowcheck.config.yaml ./workflows/...

# Packages that link the Temporal server (the CLI with `weft dev`, the integration tests) run
# without -race: race-instrumenting the server doubles CI's build time; the interpreter and the
# language run with it.
SERVER_PKGS := ./starter/... ./integration/... ./devserver/... ./cmd/...
RACE_PKGS   := $(shell $(GO) list ./... | grep -v -e /starter -e /integration -e /devserver -e /cmd/)

# go test's default -timeout (10m per package) is shorter than the slow packages need on 2 cores:
# each line says how long its packages may take.
RACE_TIMEOUT   ?= 20m
SERVER_TIMEOUT ?= 30m

# The test lines pipe go test -json through scripts/testtimes, which prints what go test would and
# then where the time went (each package, every test over 10 s), also kept in bin/test-times-*.txt.
TESTTIMES := bin/testtimes

$(TESTTIMES): scripts/testtimes/main.go
	$(GO) build -o $@ ./scripts/testtimes

test: lint $(TEMPORAL_CLI) $(TESTTIMES) ## the test suite CI runs (the integration tests drive the temporal CLI too)
	$(GO) test -json -race -count=1 -timeout $(RACE_TIMEOUT) $(RACE_PKGS) | $(TESTTIMES) -report bin/test-times-race.txt
	$(MAKE) agui-client mcp-client http-client
	$(GO) test -json -count=1 -timeout $(SERVER_TIMEOUT) $(SERVER_PKGS) | $(TESTTIMES) -report bin/test-times-server.txt
	$(MAKE) mcp-smoke
	$(MAKE) mcp-conformance

flakes: $(TEMPORAL_CLI) agui-client mcp-client http-client ## the browser and integration tests ROUNDS times (3) beside busy loops on every CPU, counting failures per test (RUN=pattern narrows it)
	bash scripts/flakes.sh

agui-client: ## install the public AG-UI client (npm, pinned) that TestAGUIClientAcceptsARealRun drives
	npm ci --prefix scripts/agui-client --no-audit --no-fund --loglevel=error

http-client: ## install the HTTP API's TypeScript client and linter (npm, pinned in scripts/http-client) that TestHTTPTypeScriptClient and TestOpenAPILint drive
	npm ci --prefix scripts/http-client --no-audit --no-fund --loglevel=error

mcp-client: $(MCP_CLIENT) ## install the TypeScript MCP SDK (npm, pinned in scripts/mcp-smoke) that TestMCPTypeScriptClient and mcp-smoke drive

# npm writes node_modules/.package-lock.json on every install: installed once per lockfile change
$(MCP_CLIENT): scripts/mcp-smoke/package-lock.json
	npm ci --prefix scripts/mcp-smoke --no-audit --no-fund --loglevel=error

mcp-smoke: build mcp-client ## the TypeScript MCP SDK and the MCP Inspector CLI against weft mcp (npm, pinned)
	bash scripts/mcp-smoke/run.sh

mcp-conformance: build ## the official MCP conformance suite's server scenarios against weft mcp (npm, pinned, with Node 22)
	npm ci --prefix scripts/mcp-conformance --no-audit --no-fund --loglevel=error
	bash scripts/mcp-conformance/run.sh

# make run PORT=17233 UI_PORT=18233 DB_PORT=27018 CONSOLE=127.0.0.1:18234 (CODEC_PORT, METRICS too):
# each one given on make's command line is passed to the weft dev flag of that name (--port,
# --ui-port, --db-port, --console, --codec-port, --metrics); one left out keeps weft dev's default.
# Only the command line counts: a PORT exported for some other program does not move Temporal.
# weft dev refuses to start when a port it needs is in use, naming it and the variable to change.
dev_flag = $(if $(filter command line,$(origin $(1))),$(2) $($(1)))
DEV_FLAGS = $(strip $(call dev_flag,PORT,--port) $(call dev_flag,UI_PORT,--ui-port) $(call dev_flag,DB_PORT,--db-port) \
	$(call dev_flag,CONSOLE,--console) $(call dev_flag,CODEC_PORT,--codec-port) $(call dev_flag,METRICS,--metrics))

run: build ## the embedded stack (Temporal + Web UI + worker) with a demo run that waits for your approval; Ctrl-C stops (ports: PORT= UI_PORT= DB_PORT= CONSOLE=)
	./$(BIN) dev --demo $(DEV_FLAGS)

cluster: build ## docker-compose.yml without Docker: PostgreSQL, Temporal and FerretDB on it, 2 workers, gateway, console; runs the demo (Ctrl-C stops)
	$(GO) run ./cmd/cluster -weft $(BIN)

scaleout: build ## the same 500 runs on the cluster with 1, 2 and 4 workers, tuned pollers, and on SQLite (docs/performance.md)
	$(GO) run ./cmd/scaleout -weft $(BIN)

soak: build ## the fault campaign (about 6 minutes): kills, restarts, outages, provider faults, gateway load; prints the table
	$(GO) run ./cmd/soak -weft $(BIN)

# Every package with a Benchmark function (found afresh each time, so a new one is never left out).
# The integration package's benchmarks link and start a Temporal server, so they get their own line
# and a longer timeout (BenchmarkFanout10k alone runs 10,000-item forEach runs). -count 6: medians.
BENCH_PKGS = $(shell (git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go' | sed 's|^\./||') | xargs grep -l '^func Benchmark' | xargs -n1 dirname | sort -u | grep -v '^integration$$' | sed 's|^|./|')
BENCH_TIMEOUT        ?= 30m
SERVER_BENCH_TIMEOUT ?= 90m

bench: ## every benchmark, 6 runs each (figures for issue notes): the packages', then the integration ones on the embedded server
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -count 6 -timeout $(BENCH_TIMEOUT) $(BENCH_PKGS)
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -count 6 -timeout $(SERVER_BENCH_TIMEOUT) ./integration

fuzz: ## run every fuzz target for FUZZTIME each (10m; FUZZTIME=30s for a quick look)
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./workflows/dsl
	$(GO) test -run '^$$' -fuzz '^FuzzFixture$$' -fuzztime $(FUZZTIME) ./fixtures
	$(GO) test -run '^$$' -fuzz '^FuzzTemplate$$' -fuzztime $(FUZZTIME) ./workflows/expr
	$(GO) test -run '^$$' -fuzz '^FuzzExpression$$' -fuzztime $(FUZZTIME) ./workflows/expr

fmt: ## gofmt -w
	gofmt -w $$(git ls-files '*.go')

$(TEMPORAL_CLI):
	GOBIN=$(CURDIR)/bin $(GO) install github.com/temporalio/cli/cmd/temporal@v1.5.1

temporal: $(TEMPORAL_CLI) ## install the temporal CLI (v1.5.1) into bin/ for reviews and queries from the shell

clean:
	rm -rf bin dist

proto: ## regenerate proto/weft/v1 Go code (needs protoc and protoc-gen-go)
	PATH="$$PATH:$$(go env GOPATH)/bin" protoc --go_out=. --go_opt=module=github.com/weftworks/weft proto/weft/v1/weft.proto
