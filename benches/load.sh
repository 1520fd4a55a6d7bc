#!/usr/bin/env bash
# HTTP load test of the ready servers against a baseline; see BENCHMARKS.md.
#
#   bash benches/load.sh
#
# Builds release binaries, makes a dataset (100 assets and one published library holding
# all of them, in 5 sections), then for each server in turn - the axum ready server
# (examples/server.rs) with and without the library detail cache, the warp ready server
# (examples/warp_server.rs, skipped when the example does not exist) and the baseline
# (examples/bench_baseline.rs: the same response bytes from memory) - runs wrk against:
#   detail  GET /api/v1/libraries/{id}?include_assets=true   (100 assets)
#   list    GET /api/v1/assets                                (page 1, 20 per page)
#   asset   GET /api/v1/assets/{id}
# and reports req/s, p50 and p99, and req/s as a share of the baseline from the same run.
# Then durable creates: POST /api/v1/assets from 32 connections (benches/create.lua).
#
# Environment: DURATION (seconds per wrk run, default 10), CONNECTIONS (default 32),
# THREADS (wrk threads, default 2), PORT (first port, default 18080), KEEP=1 keeps the
# work directory. Every process started here is stopped by its PID on exit.
set -euo pipefail

DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
PORT=${PORT:-18080}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

PIDS=()
WORK=$(mktemp -d "${TMPDIR:-/tmp}/assetlib-load.XXXXXX")
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    if [[ "${KEEP:-0}" != 1 ]]; then rm -rf "$WORK"; else echo "work directory kept: $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '%s\n' "$*" >&2; }

# --- tools -------------------------------------------------------------------------------
if ! command -v wrk >/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        say "installing wrk (Debian package) ..."
        apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
    fi
fi
if ! command -v wrk >/dev/null; then
    say "wrk is not installed and could not be installed here."
    say "Install it (Debian/Ubuntu: sudo apt-get install wrk; macOS: brew install wrk) and run again."
    exit 1
fi
command -v curl >/dev/null || { say "curl is needed"; exit 1; }

# --- build -------------------------------------------------------------------------------
say "building release binaries ..."
WARP=0
if [[ -f examples/warp_server.rs ]]; then
    cargo build --release --quiet --example server --example bench_baseline \
        --example warp_server --features axum,warp,sled
    WARP=1
else
    say "examples/warp_server.rs does not exist on this branch: the warp server is skipped."
    cargo build --release --quiet --example server --example bench_baseline --features axum,sled
fi
BIN=${CARGO_TARGET_DIR:-target}/release/examples

# --- helpers -----------------------------------------------------------------------------
# start NAME CMD...: runs CMD in the background with logs in $WORK/NAME.log, records its PID.
start() {
    local name=$1; shift
    "$@" >"$WORK/$name.log" 2>&1 &
    PIDS+=($!)
    LAST_PID=$!
}
stop() {
    local pid=$1
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
wait_port() {
    local port=$1 i
    for i in $(seq 1 100); do
        if curl -s -o /dev/null "http://127.0.0.1:$port/"; then return 0; fi
        sleep 0.1
    done
    say "server on port $port did not come up; its log:"; cat "$WORK"/*.log >&2; exit 1
}

# run_wrk LABEL URL [extra wrk args]: prints "req/s p50 p99" (latencies in ms).
run_wrk() {
    local label=$1 url=$2; shift 2
    local out
    out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency \
        -H "Authorization: Bearer $KEY" "$@" "$url")
    printf '%s\n' "$out" >"$WORK/wrk-$label.txt"
    if grep -q "Non-2xx" <<<"$out"; then
        say "warning: $label had error responses: $(grep Non-2xx <<<"$out")"
    fi
    awk '
        function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
        /Requests\/sec/ { rps = $2 }
        $1 == "50%" { p50 = ms($2) }
        $1 == "99%" { p99 = ms($2) }
        END { printf "%.0f %.2f %.2f\n", rps, p50, p99 }' <<<"$out"
}

# --- dataset -----------------------------------------------------------------------------
DATA="$WORK/data"
KEY=$("$BIN/server" keys create --scopes read:assets,write:assets,read:libraries,write:libraries \
    --name load --data "$DATA" | tail -n 1)
start seed env RUST_LOG=warn "$BIN/server" serve --data "$DATA" --addr "127.0.0.1:$PORT"
SEED_PID=$LAST_PID
wait_port "$PORT"
API="http://127.0.0.1:$PORT/api/v1"
say "making 100 assets and a library ..."
IDS=()
for i in $(seq 1 100); do
    body="{\"title\":\"Asset $i of the brand kit\",\"asset_type\":\"pdf\",\"description\":\"Guidelines and files, part $i\"}"
    id=$(curl -sf -X POST "$API/assets" -H "Authorization: Bearer $KEY" \
        -H "Content-Type: application/json" -d "$body" |
        sed -E 's/.*"data":\{"id":"([0-9a-f-]{36})".*/\1/')
    IDS+=("$id")
done
sections=""
for s in 0 1 2 3 4; do
    entries=""
    for j in $(seq 0 19); do
        entries+="${entries:+,}{\"asset_id\":\"${IDS[$((s * 20 + j))]}\"}"
    done
    sections+="${sections:+,}{\"title\":\"Section $s\",\"description\":\"Part $s of the kit\",\"assets\":[$entries]}"
done
LIB=$(cat /proc/sys/kernel/random/uuid)
curl -sf -o /dev/null -X PUT "$API/libraries/$LIB" -H "Authorization: Bearer $KEY" \
    -H "Content-Type: application/json" \
    -d "{\"title\":\"Brand kit\",\"description\":\"Everything for the brand\",\"sections\":[$sections],\"unsectioned_assets\":[]}"
ASSET=${IDS[0]}
DETAIL_PATH="/api/v1/libraries/$LIB?include_assets=true"
LIST_PATH="/api/v1/assets"
ASSET_PATH="/api/v1/assets/$ASSET"
for pair in "library:$DETAIL_PATH" "list:$LIST_PATH" "asset:$ASSET_PATH"; do
    curl -sf -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT${pair#*:}" >"$WORK/${pair%%:*}.json"
done
say "detail $(wc -c <"$WORK/library.json") bytes, list $(wc -c <"$WORK/list.json") bytes, asset $(wc -c <"$WORK/asset.json") bytes"
stop "$SEED_PID"

# --- runs --------------------------------------------------------------------------------
declare -A RESULT
measure() { # NAME: runs the three reads against 127.0.0.1:$PORT
    local name=$1 ep
    for ep in detail list asset; do
        local path
        case $ep in detail) path=$DETAIL_PATH ;; list) path=$LIST_PATH ;; asset) path=$ASSET_PATH ;; esac
        RESULT[$name:$ep]=$(run_wrk "$name-$ep" "http://127.0.0.1:$PORT$path")
        say "  $name $ep: ${RESULT[$name:$ep]}"
    done
}
serve_and_measure() { # NAME CMD...: starts CMD, measures it, stops it
    local name=$1; shift
    start "$name" "$@"
    local pid=$LAST_PID
    wait_port "$PORT"
    measure "$name"
    stop "$pid"
}

say "baseline ..."
serve_and_measure baseline "$BIN/bench_baseline" --addr "127.0.0.1:$PORT" \
    --library "$WORK/library.json" --list "$WORK/list.json" --asset "$WORK/asset.json"
say "axum ready server ..."
serve_and_measure axum env RUST_LOG=warn "$BIN/server" serve --data "$DATA" --addr "127.0.0.1:$PORT"
say "axum ready server, detail cache off ..."
serve_and_measure axum-nocache env RUST_LOG=warn ASSETLIB_DETAIL_CACHE=off \
    "$BIN/server" serve --data "$DATA" --addr "127.0.0.1:$PORT"
SERVERS=(axum axum-nocache)
if [[ $WARP == 1 ]]; then
    say "warp ready server ..."
    serve_and_measure warp env RUST_LOG=warn "$BIN/warp_server" serve --data "$DATA" --addr "127.0.0.1:$PORT"
    SERVERS+=(warp)
fi

say "durable creates, $CONNECTIONS connections ..."
start creates env RUST_LOG=warn "$BIN/server" serve --data "$DATA" --addr "127.0.0.1:$PORT"
CREATE_PID=$LAST_PID
wait_port "$PORT"
CREATES=$(ASSETLIB_KEY=$KEY run_wrk creates "$API/assets" -s benches/create.lua)
stop "$CREATE_PID"

# --- report ------------------------------------------------------------------------------
echo
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
echo "wrk: $THREADS threads, $CONNECTIONS connections, ${DURATION}s per run; latencies in ms"
printf '%-14s %-7s %10s %9s %9s %9s\n' server endpoint req/s p50 p99 "vs base"
for name in baseline "${SERVERS[@]}"; do
    for ep in detail list asset; do
        read -r rps p50 p99 <<<"${RESULT[$name:$ep]}"
        read -r base _ <<<"${RESULT[baseline:$ep]}"
        share=$(awk -v a="$rps" -v b="$base" 'BEGIN { printf "%.0f%%", (b > 0 ? 100 * a / b : 0) }')
        printf '%-14s %-7s %10s %9s %9s %9s\n' "$name" "$ep" "$rps" "$p50" "$p99" "$share"
    done
done
read -r rps p50 p99 <<<"$CREATES"
printf '%-14s %-7s %10s %9s %9s\n' axum create "$rps" "$p50" "$p99"
if [[ $WARP == 1 ]]; then
    for ep in detail list asset; do
        read -r a _ <<<"${RESULT[axum:$ep]}"
        read -r w _ <<<"${RESULT[warp:$ep]}"
        awk -v a="$a" -v w="$w" -v ep="$ep" 'BEGIN { printf "warp/axum %s: %.2f\n", ep, (a > 0 ? w / a : 0) }'
    done
fi
