#!/usr/bin/env bash
# Installs what the service and its tests need on a fresh Debian machine of ours; quick when done.
set -euo pipefail
cd "$(dirname "$0")/.."

BUN_VERSION=1.4.4
TEMPORAL_CLI_VERSION=v1.5.1
step() { printf '[bootstrap] %s\n' "$*" >&2; }

if ! command -v bun >/dev/null 2>&1 || [ "$(bun --version)" != "$BUN_VERSION" ]; then
  step "installing bun $BUN_VERSION from npm"
  npm install -g --silent "bun@$BUN_VERSION" >&2
fi

step "installing dependencies"
bun install --frozen-lockfile >&2

# The Temporal dev server, built from the Go module proxy (later tags cannot be go-installed).
if [ ! -x .tools/bin/temporal ]; then
  step "building the Temporal CLI $TEMPORAL_CLI_VERSION into .tools/bin (a few minutes, once per clone)"
  mkdir -p .tools/bin
  GOBIN="$PWD/.tools/bin" GOFLAGS=-mod=mod go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" >&2
fi

# Real peers the tests talk to: speech for calls, and the SIP trunk, callers and phone.
missing=()
# chromium: the console's browser tests (driven by playwright-core, which downloads no browser);
# pgbouncer: the DATABASE_PREPARE=false test (test/api/pgbouncer.test.ts); wrk: bench/api
# (/usr/sbin is searched too: pgbouncer lives there and a non-root PATH may lack it)
for pair in espeak-ng:espeak-ng sox:sox sipp:sip-tester kamailio:kamailio baresip:baresip chromium:chromium \
  pgbouncer:pgbouncer wrk:wrk; do
  PATH="$PATH:/usr/sbin" command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing ${missing[*]} with apt"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
fi
step "ready"
