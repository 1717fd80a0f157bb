# Developer tasks. `make help` lists them.

GO            ?= go
GOLANGCI_LINT ?= golangci-lint
SWAG          ?= swag
BIN           ?= bin/tsekh

.PHONY: help run test lint docs build bench fmt

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-6s %s\n", $$1, $$2}'

run: ## start the API server (SQLite by default; set DATABASE_URL for PostgreSQL)
	$(GO) run ./cmd/tsekh serve

test: ## run all tests with the race detector (needs PostgreSQL and NATS, see .ci/run)
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m ./...

lint: ## run golangci-lint (config in .golangci.yml)
	$(GOLANGCI_LINT) run ./...

docs: ## regenerate the OpenAPI docs in ./docs from the swag annotations
	$(SWAG) init --generalInfo server.go --dir ./api,./internal --output ./docs \
		--outputTypes go,json,yaml --parseInternal --requiredByDefault

build: ## build a static binary into bin/
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/tsekh

bench: ## measure the outbox on the PostgreSQL at DATABASE_URL (README: Performance)
	$(GO) run ./cmd/tsekh bench $(BENCH_FLAGS)

fmt: ## format all Go sources
	gofmt -s -w .
