#!/usr/bin/env bash
# Installs what the service and its tests need on a fresh Debian machine of ours; quick when done.
set -euo pipefail
cd "$(dirname "$0")/.."

BUN_VERSION=1.4.4
TEMPORAL_CLI_VERSION=v1.5.1
SEAWEEDFS_VERSION=v0.0.0-20261109003541-7506e5f91cd6
step() { printf '[bootstrap] %s\n' "$*" >&2; }

if ! command -v bun >/dev/null 2>&1 || [ "$(bun --version)" != "$BUN_VERSION" ]; then
  step "installing bun $BUN_VERSION from npm"
  npm install -g --silent "bun@$BUN_VERSION" >&2
fi

step "installing dependencies"
bun install --frozen-lockfile >&2

# Go tools are built once per machine under the user's cache, keyed by version, and linked into the
# clone's .tools/bin: a fresh clone (CI's) links them in a moment instead of building them again.
TOOL_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/voice-assistant"
# go_tool NAME VERSION BUILD: BUILD writes the binary to the path it is given. A binary in .tools/bin
# that is not a link into the cache (built there by an earlier bootstrap, or linked by hand) is kept.
go_tool() {
  local name=$1 version=$2 build=$3 out="$TOOL_CACHE/$1-$2/$1" link=".tools/bin/$1"
  if [ -x "$link" ] && [[ "$(readlink "$link")" != "$TOOL_CACHE/"* ]]; then return; fi
  if [ ! -x "$out" ]; then
    step "building $name $version into $out (minutes, once per machine)"
    mkdir -p "$(dirname "$out")"
    local started=$SECONDS
    "$build" "$out.partial" >&2
    mv "$out.partial" "$out"
    step "built $name in $((SECONDS - started)) s"
  fi
  mkdir -p .tools/bin
  ln -sfn "$out" "$link"
}

# The Temporal dev server (later tags cannot be go-installed).
build_temporal() {
  local bin; bin=$(mktemp -d)
  GOBIN="$bin" GOFLAGS=-mod=mod go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
  mv "$bin/temporal" "$1" && rm -rf "$bin"
}
go_tool temporal "$TEMPORAL_CLI_VERSION" build_temporal

# SeaweedFS, the S3 server of the object-store tests and of `make start` with RECORDING_STORE=s3.
# `go install` refuses its module (its go.mod has replace directives): it is built as the dependency of
# a throw-away main module that copies those directives.
build_weed() {
  local module=github.com/seaweedfs/seaweedfs dir gomod
  dir=$(mktemp -d)
  gomod=$(cd "$dir" && go mod download -json "$module@$SEAWEEDFS_VERSION" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  {
    echo "module weed-build"
    grep -m1 '^go ' "$gomod"
    echo "require $module $SEAWEEDFS_VERSION"
    # single-line and block replace directives alike
    awk '/^replace \(/ { block = 1 } block || /^replace / { print } block && /^\)/ { block = 0 }' "$gomod"
  } >"$dir/go.mod"
  (cd "$dir" && GOFLAGS=-mod=mod go build -o "$1" "$module/weed")
  rm -rf "$dir"
}
go_tool weed "$SEAWEEDFS_VERSION" build_weed

# Real peers the tests talk to: speech for calls, and the SIP trunk, callers and phone.
missing=()
# chromium: the console's browser tests (driven by playwright-core, which downloads no browser);
# pgbouncer: the DATABASE_PREPARE=false test (test/api/pgbouncer.test.ts); wrk: bench/api;
# rtpengine: bench transfer's reference relay (started by the bench only, userspace forwarding)
# (/usr/sbin is searched too: pgbouncer lives there and a non-root PATH may lack it)
for pair in espeak-ng:espeak-ng sox:sox sipp:sip-tester kamailio:kamailio baresip:baresip chromium:chromium \
  pgbouncer:pgbouncer wrk:wrk rtpengine:rtpengine-daemon; do
  PATH="$PATH:/usr/sbin" command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing ${missing[*]} with apt"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
fi
step "ready"
