#!/usr/bin/env bash
# A real Temporal server (the production engine, not the dev server) on the local PostgreSQL, with its
# Web UI and our search attributes: `bash scripts/temporal-postgres.sh` runs it in the foreground until
# Ctrl-C. Builds the server, the SQL schema tool and the UI server into .tools/bin with `go install` the
# first time (a few minutes), creates and migrates the two databases, then starts.
#
#   TEMPORAL_PG_PORT     frontend gRPC port (default 7233); the other services use the next ports
#   TEMPORAL_PG_UI_PORT  Web UI port (default 8233)
#   TEMPORAL_PG_DB       database name (default temporal; visibility goes to <name>_visibility)
#   TEMPORAL_PG_DIR      config and logs (default .data/temporal-postgres)
#   PGHOST PGPORT PGUSER PGPASSWORD  the PostgreSQL to use (default 127.0.0.1 5432 postgres, trust)
# Then point the service at it: TEMPORAL_ADDRESS=127.0.0.1:$TEMPORAL_PG_PORT (docs/operations.md).
set -euo pipefail

SERVER_VERSION=v1.29.1 # the server the CLI's dev server v1.5.1 embeds: same behaviour, same schema
UI_VERSION=v2.42.1
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/.tools/bin"
port="${TEMPORAL_PG_PORT:-7233}"
ui_port="${TEMPORAL_PG_UI_PORT:-8233}"
db="${TEMPORAL_PG_DB:-temporal}"
dir="${TEMPORAL_PG_DIR:-$root/.data/temporal-postgres}"
pg_host="${PGHOST:-127.0.0.1}" pg_port="${PGPORT:-5432}" pg_user="${PGUSER:-postgres}" pg_password="${PGPASSWORD:-}"

say() { echo "[temporal-postgres] $*" >&2; }

# go install names every one of these binaries after its package directory (server, server, sql)
build() { # <package@version> <name>
  [ -x "$bin/$2" ] && return
  say "building $2 from $1 (go install)"
  local tmp
  tmp="$(mktemp -d)"
  GOBIN="$tmp" CGO_ENABLED=0 go install "$1"
  mkdir -p "$bin"
  mv "$tmp"/* "$bin/$2"
  rm -rf "$tmp"
}
build "go.temporal.io/server/cmd/server@$SERVER_VERSION" temporal-server
build "go.temporal.io/server/cmd/tools/sql@$SERVER_VERSION" temporal-sql-tool
build "github.com/temporalio/ui-server/v2/cmd/server@$UI_VERSION" temporal-ui-server
[ -x "$bin/temporal" ] || { say "the temporal CLI is missing: run scripts/bootstrap.sh"; exit 1; }

# both schemas are embedded in the tool; update-schema is idempotent and brings an older one up to date
sql_tool() { "$bin/temporal-sql-tool" --ep "$pg_host" -p "$pg_port" -u "$pg_user" --pw "$pg_password" --pl postgres12 "$@"; }
for schema in "$db:temporal" "${db}_visibility:visibility"; do
  name="${schema%%:*}" kind="${schema##*:}"
  if sql_tool --db "$name" create >/dev/null 2>&1; then
    say "database $name created"
    sql_tool --db "$name" setup-schema -v 0.0
  fi
  sql_tool --db "$name" update-schema --schema-name "postgresql/v12/$kind" >/dev/null
done

mkdir -p "$dir/config/dynamicconfig" "$dir/ui/config"
datastore() { # <store name> <database> <max connections>
  cat <<EOF
    $1:
      sql:
        pluginName: postgres12
        databaseName: "$2"
        connectAddr: "$pg_host:$pg_port"
        connectProtocol: tcp
        user: "$pg_user"
        password: "$pg_password"
        maxConns: $3
        maxIdleConns: $3
        maxConnLifetime: 1h
EOF
}
service() { # <name> <grpc port offset>
  cat <<EOF
  $1:
    rpc:
      grpcPort: $((port + $2))
      membershipPort: $((port + $2 - 300))
      bindOnLocalHost: true
EOF
}
{
  cat <<EOF
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  # fixed when the cluster is created; 4 is plenty on one machine
  numHistoryShards: 4
  datastores:
EOF
  # PostgreSQL allows 100 connections by default, shared with the service and its tests: stay small
  datastore default "$db" 10
  datastore visibility "${db}_visibility" 3
  cat <<EOF
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
EOF
  service frontend 0
  echo "      httpPort: $((port + 10))"
  service history 1
  service matching 2
  service worker 6
  cat <<EOF
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:$port
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: $dir/config/dynamicconfig/development.yaml
  pollInterval: 10s
EOF
} >"$dir/config/development.yaml"

# the dev server's settings (src/temporal/dev-server.ts), so tests and benches behave the same here
cat >"$dir/config/dynamicconfig/development.yaml" <<'EOF'
history.timerProcessorMaxTimeShift:
  - value: 10ms
matching.numTaskqueueReadPartitions:
  - value: 1
matching.numTaskqueueWritePartitions:
  - value: 1
system.enableActivityEagerExecution:
  - value: true
system.enableEagerWorkflowStart:
  - value: true
EOF

cat >"$dir/ui/config/development.yaml" <<EOF
temporalGrpcAddress: 127.0.0.1:$port
host: 127.0.0.1
port: $ui_port
enableUi: true
defaultNamespace: default
cors:
  allowOrigins:
    - http://127.0.0.1:$ui_port
EOF

pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait
}
trap stop EXIT
trap 'exit 0' INT TERM

"$bin/temporal-server" --root "$dir" --config config --env development --allow-no-auth start &
pids+=($!)
address="127.0.0.1:$port"
for _ in $(seq 1 120); do
  "$bin/temporal" operator cluster health --address "$address" >/dev/null 2>&1 && break
  sleep 0.5
done
"$bin/temporal" operator namespace describe --address "$address" --namespace default >/dev/null 2>&1 ||
  "$bin/temporal" operator namespace create --address "$address" --namespace default --retention 72h
# the same Keyword attributes the dev server gets (workflows/search-attributes.ts); SQL visibility has
# ten Keyword slots, we use five
for name in HookCallId HookEventType HookId HookOrganizationId HookStatus; do
  "$bin/temporal" operator search-attribute create --address "$address" --namespace default --name "$name" --type Keyword \
    >/dev/null 2>&1 || true
done

"$bin/temporal-ui-server" --root "$dir/ui" --env development start &
pids+=($!)
say "Temporal $SERVER_VERSION on PostgreSQL $pg_host:$pg_port/$db at $address; Web UI http://127.0.0.1:$ui_port"
say "TEMPORAL_ADDRESS=$address"
wait -n
