#!/usr/bin/env bash
# Generates a client from the OpenAPI document as a team integrating with
# tsekh would, and compiles it: Go with oapi-codegen, TypeScript types with
# openapi-typescript. Nothing is edited between the generator and the
# compiler, so a document that needs a hand fix to generate or compile fails
# here. The code is written to a temporary folder and removed. Run by
# `make lint-api`, which pins the tools:
#
#   scripts/openapi-clients.sh docs/openapi.json
set -euo pipefail

doc="$(realpath "${1:-docs/openapi.json}")"
GO="${GO:-go}"
NPX="${NPX:-npx}"
: "${OAPI_CODEGEN:?}" "${OAPI_RUNTIME:?}" "${OPENAPI_TS:?}" "${TYPESCRIPT:?}"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/go" "$tmp/ts"

echo "oapi-codegen: the Go client of $doc"
"$GO" run "$OAPI_CODEGEN" -generate types,client -package tsekh -o "$tmp/go/client.gen.go" "$doc"
(
  cd "$tmp/go"
  # A module of its own, outside the project's, with the runtime pinned.
  GOFLAGS=-mod=mod "$GO" mod init example.com/tsekhclient >/dev/null 2>&1
  GOFLAGS=-mod=mod "$GO" get "$OAPI_RUNTIME" >/dev/null 2>&1
  GOFLAGS=-mod=mod "$GO" mod tidy
  "$GO" build ./...
  "$GO" vet ./...
)
echo "oapi-codegen: $(wc -l <"$tmp/go/client.gen.go") lines, compiled and vetted"

echo "openapi-typescript: the TypeScript types of $doc"
"$NPX" -y "$OPENAPI_TS" "$doc" -o "$tmp/ts/tsekh.d.ts"
"$NPX" -y -p "$TYPESCRIPT" -- tsc --strict --noEmit --target es2022 "$tmp/ts/tsekh.d.ts"
echo "openapi-typescript: $(wc -l <"$tmp/ts/tsekh.d.ts") lines, compiled"
