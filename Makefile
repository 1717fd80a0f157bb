# Developer tasks. `make help` lists them.

GO            ?= go
GOLANGCI_LINT ?= golangci-lint
SWAG          ?= swag
BIN           ?= bin/tsekh
NPX           ?= npx
# The OpenAPI linters, pinned (npm). Redocly 1.34 runs on Node.js 18.17 and
# later, which Debian's own package provides.
REDOCLY_CLI   ?= @redocly/cli@1.34.20
SPECTRAL_CLI  ?= @stoplight/spectral-cli@6.16.3
# The AsyncAPI CLI, pinned (npm). It needs Node.js 20.19 or later, so it runs
# on a pinned Node.js from npm whatever the system's; CI=true keeps it from
# sending usage metrics.
ASYNCAPI_CLI  ?= @asyncapi/cli@6.2.0
ASYNCAPI_NODE ?= node@22.23.3
# The clients generated from docs/openapi.json in make lint-api, pinned: Go
# with oapi-codegen (its generated code needs oapi-codegen's runtime module),
# TypeScript with openapi-typescript, compiled by TypeScript 5.
OAPI_CODEGEN  ?= github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2
OAPI_RUNTIME  ?= github.com/oapi-codegen/runtime@v1.9.0
OPENAPI_TS    ?= openapi-typescript@7.13.0
TYPESCRIPT    ?= typescript@5.9.3
# Mutation testing of the outbox's core (docs/outbox.md, "Mutation testing"):
# gremlins (go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0)
# mutates MUTATION_FILES of internal/events and runs, for each mutant, only
# MUTATION_TESTS: go test takes -run from GOFLAGS, so a mutant costs a build
# and these tests, not the package's whole suite. CI runs every test as ever.
# -count=1: gremlins times each mutant out at three times its first, covering
# run, which a cached test result would make a few seconds.
GREMLINS       ?= gremlins
MUTATION_FILES ?= horizon store store_postgres store_sqlite completer executor retries call outside
MUTATION_TESTS ?= ^(TestMutants_.*|TestStatements|TestStuckCalls_.*|TestCallWatch_.*|TestCallContext_.*|TestLanes_LeftCallHoldsItsSlotUntilItsTimeout|TestLanes_HangingCallHoldsOnlyItsObject|TestRetries_PanicAndHangAreFailures|TestCompleter|TestRetries_FailureHistoryIsBounded|TestDispatcher_InterleavedCommitsLoseNothing|TestReplicas_StalledDispatcherIsFencedOff|TestRetries_FailNTimesThenSucceed|TestLanes_RetryPolicyAndPermanentErrors|TestRunner_LaneKeepsItsLeaseBetweenEvents)$$
# gremlins can only exclude files: every other source file of the package.
MUTATION_SKIP   = $(subst $(eval) ,|,$(filter-out $(MUTATION_FILES),$(basename $(notdir $(filter-out %_test.go,$(wildcard internal/events/*.go))))))

# The fuzz targets of the API's bodies that make fuzz explores beyond their
# seeds (which make test runs), FUZZ_TIME each: through the real app on both
# databases (api/fuzz_bodies_test.go). go test fuzzes one target at a time;
# the first builds the instrumented test binary, the others reuse it.
FUZZ_TARGETS ?= FuzzMaterials FuzzStockDocuments FuzzFloor FuzzCuttingPlans FuzzInbox
FUZZ_TIME    ?= 15s

.PHONY: help run test lint lint-api docs build bench fmt mutation fuzz

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-9s %s\n", $$1, $$2}'

run: ## start the API server (SQLite by default; set DATABASE_URL for PostgreSQL)
	$(GO) run ./cmd/tsekh serve

# The race detector instruments every package but SQLite itself:
# modernc.org/sqlite is SQLite's C translated to Go (with its C library,
# modernc.org/libc), which cgo's SQLite would not instrument either;
# instrumented, it made the SQLite half of the tests two to three times as slow as
# the PostgreSQL half. Its Go driver (glebarez) stays instrumented. (Leaving
# the driver uninstrumented as well makes the detector miss the order
# sync.Map gives and report races in encoding/json's and reflect's caches.)
# The cutting optimiser (internal/cutting) is not instrumented either: it
# starts no goroutine and shares nothing (its TestNoSharedState keeps it so),
# so the detector had no race to find in it, and instrumented it ran three
# times as slowly (its tests, and the API's cutting plans).
# kin-openapi is instrumented, though only the tests' check of responses
# against docs/openapi.json runs it: a package left out of the detector
# compiles its own copies of the generic atomics it uses (its
# atomic.Pointer[originDecode]) without the detector's hooks, the linker
# keeps one copy of each shape for the whole binary, and when it kept
# kin-openapi's, sync.Map's loads lost their ordering for the detector,
# which then reported encoding/json's field cache as racing (32 false
# reports in one make test of 2026-12-04). Excluded, a check cost a third
# as much.
# checkptr, which -race turns on beside the detector, checks conversions of
# unsafe.Pointer: tsekh's code has none (make lint keeps it so), and in
# the standard library's and the drivers' (reflect, sync, database/sql,
# SQLite's driver) it cost a twentieth of the API tests' time, so it is
# off (all=-d=checkptr=0; for a package that several -gcflags match, the
# last one counts).
# -parallel: tests wait on the database as much as on the CPU, so more run at
# once than there are cores.
RACE_FLAGS    ?= -race -gcflags='all=-d=checkptr=0' -gcflags='modernc.org/...=-race=false' \
	-gcflags='github.com/tsekh/tsekh/internal/cutting=-race=false'
TEST_PARALLEL ?= 8
# The test binaries' runtime: the race detector's runtime waits a second at
# each binary's exit for reports from other goroutines (atexit_sleep_ms; a
# race found makes the binary fail all the same). GOGC stays at Go's
# default: under the detector a larger heap costs more than the collections
# it saves, since every page of heap the runtime touches anew brings two of
# the detector's shadow memory with it. The API package's test binary alone
# (2026-12-04): 168, 157 and 156 s with GOGC=400 (2.8 million page faults),
# 141 and 149 s with the default (1.7 million), 143 s with GOGC=50. In the
# whole `make test`, where the API and events packages share the two cores,
# the difference is smaller: 297 and 289 s with the default, 296 and 297 s
# with GOGC=400 (the API package 229 and 243 s against 256 and 252 s).
TEST_ENV      ?= GORACE=atexit_sleep_ms=0

# The service's tests (apptest: every request through the real app, on
# PostgreSQL and on SQLite; APPTEST_PKGS) run in two processes beside the
# rest: on PostgreSQL under the race detector (the database production
# runs, where transactions really interleave), on SQLite without it, with
# the tests that compare the dialects' answers to one request at a time
# (the fuzz targets' seeds). TEST_DIALECTS picks a process's dialect. The
# Go code under test is the same on both databases but for the drivers,
# whose own tests run on both under the detector with every other
# package's. Under the detector the service's tests cost three and a half
# times the CPU (2026-12-05: 283 s against 79 s for the api package). The
# whole suite's CPU, machine-wide: 608 s before the split, 568 s after it
# (with the tests' cutting plans at a tenth of the effort), about 520 s
# with that day's later changes.
APPTEST_PKGS  ?= ./api ./internal/app/...
# The other packages' tests start the longest first (go test runs them in
# the order given, REST_P at a time): the end of the run is not left to a
# long package that started last.
SLOW_FIRST    ?= ./internal/events ./internal/plan ./internal/bench ./cmd/tsekh ./internal/cutting \
	./internal/sales ./internal/platform/database ./internal/render
TEST_FLAGS    ?= -count=1 -parallel $(TEST_PARALLEL) -timeout 60m
# The test binaries of a run share the templates their databases are copied
# from (internal/platform/dbtest/shared.go) in a directory that lives the
# run (TEST_TEMPLATE_DIR): the first to need one migrates and dumps it, the
# others read it, instead of each migrating its own (2026-12-06: 34
# migrations a run, whose statements took about 75 s of the server's time;
# PostgreSQL's CPU a run went from 151 s to 130 s in the runs after).
# The other packages' process runs REST_P of them at once (go test's
# default is the cores, two): the events package waits on fault deadlines
# for most of its two minutes, and with two at a time the twenty short
# packages after the long ones ran one link after the other at the end,
# the cores half idle.
REST_P        ?= 4

test: ## run all tests, under the race detector but the service's tests on SQLite (needs PostgreSQL and NATS, see .ci/run)
	@rest=$$(GOFLAGS= $(GO) list $(SLOW_FIRST) ./... | grep -v -e '/tsekh/api$$' -e '/tsekh/internal/app'); \
	TEST_TEMPLATE_DIR=$$(mktemp -d); export TEST_TEMPLATE_DIR; trap 'rm -rf "$$TEST_TEMPLATE_DIR"' EXIT; \
	CGO_ENABLED=1 $(TEST_ENV) $(GO) test -p $(REST_P) $(RACE_FLAGS) $(TEST_FLAGS) $$rest & r1=$$!; \
	CGO_ENABLED=1 $(TEST_ENV) TEST_DIALECTS=postgres $(GO) test $(RACE_FLAGS) $(TEST_FLAGS) $(APPTEST_PKGS) & r2=$$!; \
	TEST_DIALECTS=sqlite $(GO) test $(TEST_FLAGS) $(APPTEST_PKGS) & r3=$$!; \
	rc=0; for p in $$r1 $$r2 $$r3; do wait $$p || rc=$$?; done; exit $$rc

fuzz: ## explore the API's fuzz targets FUZZ_TARGETS, FUZZ_TIME each (needs PostgreSQL: TEST_DATABASE_URL)
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "== $$t"; \
		$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZ_TIME) ./api; \
	done

lint: ## run golangci-lint (config in .golangci.yml)
	$(GOLANGCI_LINT) run ./...

lint-api: ## lint docs/: OpenAPI with Redocly (redocly.yaml) and Spectral (.spectral.yaml), AsyncAPI with its CLI; generate and compile a Go and a TypeScript client from docs/openapi.json; needs npx
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
		$(NPX) -y $(REDOCLY_CLI) lint --config redocly.yaml docs/openapi.json docs/openapi.yaml docs/swagger.json docs/swagger.yaml
	$(NPX) -y $(SPECTRAL_CLI) lint --ruleset .spectral.yaml --fail-severity=warn docs/openapi.json docs/openapi.yaml docs/swagger.json docs/swagger.yaml
	CI=true SUPPRESS_NO_CONFIG_WARNING=1 $(NPX) -y -p $(ASYNCAPI_NODE) -p $(ASYNCAPI_CLI) -- asyncapi validate docs/asyncapi.json
	GO=$(GO) NPX=$(NPX) OAPI_CODEGEN=$(OAPI_CODEGEN) OAPI_RUNTIME=$(OAPI_RUNTIME) OPENAPI_TS=$(OPENAPI_TS) TYPESCRIPT=$(TYPESCRIPT) \
		scripts/openapi-clients.sh docs/openapi.json

docs: ## regenerate docs/ (OpenAPI 3.1 and Swagger 2.0 from the swag annotations, AsyncAPI from the event contracts) and the table of event types in docs/journal.md
	$(SWAG) init --generalInfo server.go --dir ./api,./internal --output ./docs \
		--outputTypes go,json,yaml --parseInternal --requiredByDefault
	$(GO) run ./scripts/openapifix docs
	$(GO) run ./scripts/openapi3 docs
	$(GO) run ./cmd/tsekh asyncapi > docs/asyncapi.json.tmp && mv docs/asyncapi.json.tmp docs/asyncapi.json
	$(GO) run ./cmd/tsekh asyncapi --readme docs/journal.md > docs/journal.md.tmp && mv docs/journal.md.tmp docs/journal.md

build: ## build a static binary into bin/
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/tsekh

bench: ## measure the outbox on the PostgreSQL at DATABASE_URL (docs/performance.md)
	$(GO) run ./cmd/tsekh bench $(BENCH_FLAGS)

mutation: ## mutation-test the outbox's fence, horizon and completer with gremlins, one worker (needs PostgreSQL: TEST_DATABASE_URL; hours for all MUTATION_FILES)
	GOFLAGS='-count=1 -run=$(MUTATION_TESTS)' $(GREMLINS) unleash --workers 1 \
		--exclude-files '^($(MUTATION_SKIP))\.go$$' ./internal/events

fmt: ## format all Go sources
	gofmt -s -w .
