#!/usr/bin/env bash
# HTTP load test of the ready servers against a baseline; see BENCHMARKS.md.
#
#   bash benches/load.sh
#
# Builds release binaries (with PostgreSQL support), starts a PostgreSQL server of its own,
# makes the same dataset (100 assets and one published library holding all of them, in 5
# sections) once in a sled data directory and once in a PostgreSQL database, then for each
# server in turn - the axum ready server (examples/server/main.rs) on sled with and without its
# caches (library detail pages, asset list pages and assets), the same on PostgreSQL, the warp ready server on sled
# (examples/warp_server.rs, skipped when the example does not exist) and the baseline
# (examples/bench_baseline.rs: the same response bytes from memory) - runs wrk against:
#   detail  GET /api/v1/libraries/{id}?include_assets=true   (100 assets)
#   list    GET /api/v1/assets                                (page 1, 20 per page)
#   asset   GET /api/v1/assets/{id}
# and reports req/s, p50 and p99, and req/s as a share of the baseline from the same run
# (the median of ROUNDS interleaved rounds).
# Then durable creates: POST /api/v1/assets from 32 connections (benches/create.lua), on sled
# and on PostgreSQL, three times each: every asset with a title of its own (row `create`), every
# asset titled "Logo" (row `create1t`: one title for all, so each create takes a numbered slug),
# and every asset with a title of its own while one webhook for `asset.created` is registered
# (row `create+hook`: each create is one more delivery, sent to examples/webhook_receiver on
# 127.0.0.1, which checks every signature); the report gives create+hook / create per store.
# Last, one reader follows the whole event log (every create of the runs) with pages of 1000
# (row `feed`: events/s, the client's work included).
# Every row also gives the server's CPU time per answer (`cpu us`: user and system time from
# /proc over the wrk run, divided by the answers): req/s on a shared 2-core machine swings
# from run to run with whatever else runs, the CPU an answer costs much less.
#
# The PostgreSQL server: initdb into the work directory (as the `postgres` system user when run
# as root), listening on 127.0.0.1 only on a free port, fsync=on and synchronous_commit=on
# (commits are durable, as in production), 256 MB shared buffers. PG_BIN (or ASSETLIB_PG_BIN)
# may name the directory of initdb/pg_ctl/psql; else they are found on PATH or in the newest
# /usr/lib/postgresql/*/bin. NO_PG=1 leaves the PostgreSQL rows out.
#
# The dataset is made in workspace `acme` by a key of that workspace; every row reads it with
# a global key but `axum-ws` and `axum-pg-ws`, the same servers as `axum` and `axum-pg` read
# with the workspace key (each read then checks the records' workspace), and `axum-tok` and
# `axum-pg-tok`, read with a browser token that key minted (each read checks its signature
# and its key): the report gives each against the global key per endpoint and store.
# Environment: READS=0 leaves the read rows out (creates only), CREATES=0 the create and
# feed rows (reads only), RESULTS=FILE also appends the report's rows to FILE as JSON lines
# (for `cargo xtask benchmarks`), DURATION (seconds per wrk run, default 10), ROUNDS (rounds per server, run
# interleaved; the median is reported; default 3), CONNECTIONS (default 32),
# THREADS (wrk threads, default 2), PORT (first port, default 18080), KEEP=1 keeps the
# work directory. PROFILE=1 also samples the server under each wrk run with `perf record -g`
# (Debian's linux-perf, installed like wrk) and prints its hottest functions; that costs the
# server some throughput, so its figures are not the ones to report. Every process started
# here is stopped by its PID on exit.
set -euo pipefail

DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
PORT=${PORT:-18080}
NO_PG=${NO_PG:-0}
PROFILE=${PROFILE:-0}
ROUNDS=${ROUNDS:-3}
READS=${READS:-1}
CREATES_ROWS=${CREATES:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

# The work directory, cleanup on exit, PostgreSQL binaries, start/stop/wait_port/free_port,
# cpu_ticks and start_postgres.
source "$ROOT/benches/common/bench.sh"

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
if [[ $PROFILE == 1 ]] && ! command -v perf >/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        say "installing perf (Debian package linux-perf) ..."
        apt-get install -y linux-perf >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y linux-perf >/dev/null; }
    fi
    command -v perf >/dev/null || { say "PROFILE=1 needs perf (Debian: apt-get install linux-perf)"; exit 1; }
fi

# --- build -------------------------------------------------------------------------------
say "building release binaries ..."
FEATURES=axum,sled
[[ $NO_PG != 1 ]] && FEATURES+=,postgres
# Since the lean library, the ready servers are built with every feature (`full`).
grep -q '^full = ' Cargo.toml && FEATURES=full
WARP=0
if [[ -f examples/warp_server.rs ]]; then
    cargo build --release --quiet --example server --example bench_baseline \
        --example warp_server --example webhook_receiver --features "$FEATURES,warp"
    WARP=1
else
    say "examples/warp_server.rs does not exist on this branch: the warp server is skipped."
    cargo build --release --quiet --example server --example bench_baseline \
        --example webhook_receiver --features "$FEATURES"
fi
BIN=${CARGO_TARGET_DIR:-target}/release/examples

# profile LABEL: with PROFILE=1, samples $SERVER_PID for the next $DURATION seconds in the
# background (perf's PID in PERF_PID).
SERVER_PID=
PERF_PID=
profile() {
    [[ $PROFILE == 1 && -n $SERVER_PID ]] || return 0
    perf record -q -F 999 -g -p "$SERVER_PID" -o "$WORK/perf-$1.data" -- sleep "$DURATION" \
        >/dev/null 2>&1 &
    PERF_PID=$!
}
# profile_report LABEL: the hottest functions of that sample (self time, 2% and more).
profile_report() {
    [[ -n $PERF_PID ]] || return 0
    wait "$PERF_PID" 2>/dev/null || true
    PERF_PID=
    perf report -i "$WORK/perf-$1.data" --stdio --no-children --sort dso,symbol \
        --percent-limit 2 -g none 2>/dev/null | grep -v '^#' | grep -v '^$' >"$WORK/perf-$1.txt" || true
    say "  perf, $1 (self time):"
    head -n 12 "$WORK/perf-$1.txt" | sed 's/^/    /' >&2
}

# run_wrk LABEL KEY URL [extra wrk args]: prints "req/s p50 p99 cpu" (latencies in ms; cpu:
# the server's CPU time per answer in microseconds, user and system, from /proc: unlike
# req/s it hardly depends on what else the machine runs, so it compares servers and builds
# across runs).
run_wrk() {
    local label=$1 key=$2 url=$3; shift 3
    local out before after
    profile "$label"
    before=$(cpu_ticks "$SERVER_PID")
    out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency \
        -H "Authorization: Bearer $key" "$@" "$url")
    after=$(cpu_ticks "$SERVER_PID")
    profile_report "$label"
    printf '%s\n' "$out" >"$WORK/wrk-$label.txt"
    if grep -q "Non-2xx" <<<"$out"; then
        say "warning: $label had error responses: $(grep Non-2xx <<<"$out")"
    fi
    wrk_figures "$((after - before))" <<<"$out"
}

# --- PostgreSQL --------------------------------------------------------------------------
PG_ARGS=()
[[ $NO_PG != 1 ]] && start_postgres assetlib_load

# --- dataset -----------------------------------------------------------------------------
# seed STORE DATA_ARGS...: a key, 100 assets and a library in that store; sets KEY[STORE],
# DETAIL[STORE] and ASSET[STORE], and saves the three responses as $WORK/STORE-*.json.
declare -A KEY WS_KEY TOKEN DETAIL ASSET
seed() {
    local store=$1; shift
    local key scopes=read:assets,write:assets,read:libraries,write:libraries,admin:webhooks,read:events
    KEY[$store]=$("$BIN/server" keys create --scopes "$scopes" --name load "$@" | tail -n 1)
    key=$("$BIN/server" keys create --scopes "$scopes" --name load-acme --workspace acme "$@" | tail -n 1)
    WS_KEY[$store]=$key
    start "seed-$store" env RUST_LOG=warn "$BIN/server" serve "$@" --addr "127.0.0.1:$PORT"
    local seed_pid=$LAST_PID
    wait_port "$PORT"
    local api="http://127.0.0.1:$PORT/api/v1"
    TOKEN[$store]=$(curl -sf -X POST "$api/tokens" -H "Authorization: Bearer $key" \
        -H "Content-Type: application/json" \
        -d '{"scopes":["read:assets","read:libraries"],"expires_in":86400}' |
        sed -E 's/.*"token":"(alt_[A-Za-z0-9_-]+)".*/\1/')
    say "$store: making 100 assets and a library ..."
    local ids=() i id body s j entries sections=""
    for i in $(seq 1 100); do
        body="{\"title\":\"Asset $i of the brand kit\",\"asset_type\":\"pdf\",\"description\":\"Guidelines and files, part $i\"}"
        id=$(curl -sf -X POST "$api/assets" -H "Authorization: Bearer $key" \
            -H "Content-Type: application/json" -d "$body" |
            sed -E 's/.*"data":\{"id":"([0-9a-f-]{36})".*/\1/')
        ids+=("$id")
    done
    for s in 0 1 2 3 4; do
        entries=""
        for j in $(seq 0 19); do
            entries+="${entries:+,}{\"asset_id\":\"${ids[$((s * 20 + j))]}\"}"
        done
        sections+="${sections:+,}{\"title\":\"Section $s\",\"description\":\"Part $s of the kit\",\"assets\":[$entries]}"
    done
    local lib
    lib=$(cat /proc/sys/kernel/random/uuid)
    curl -sf -o /dev/null -X PUT "$api/libraries/$lib" -H "Authorization: Bearer $key" \
        -H "Content-Type: application/json" \
        -d "{\"title\":\"Brand kit\",\"description\":\"Everything for the brand\",\"sections\":[$sections],\"unsectioned_assets\":[]}"
    DETAIL[$store]="/api/v1/libraries/$lib?include_assets=true"
    ASSET[$store]="/api/v1/assets/${ids[0]}"
    local pair
    for pair in "library:${DETAIL[$store]}" "list:/api/v1/assets" "asset:${ASSET[$store]}"; do
        curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$PORT${pair#*:}" \
            >"$WORK/$store-${pair%%:*}.json"
    done
    say "$store: detail $(wc -c <"$WORK/$store-library.json") bytes, list $(wc -c <"$WORK/$store-list.json") bytes, asset $(wc -c <"$WORK/$store-asset.json") bytes"
    stop "$seed_pid"
}
DATA="$WORK/data"
seed sled --data "$DATA"
if [[ $NO_PG != 1 ]]; then
    # Records in PostgreSQL; the (unused) files directory in the work directory.
    PGDATA_ARGS=(--data "$WORK/pg-files" "${PG_ARGS[@]}")
    seed pg "${PGDATA_ARGS[@]}"
fi

# --- runs --------------------------------------------------------------------------------
# Every server is measured ROUNDS times, the rounds interleaved (baseline, axum, ..., then
# again), so a slow stretch of the machine touches every server alike; each figure reported is
# the median round's.
LIST_PATH="/api/v1/assets"
declare -A RESULT CREATES CPU
measure() { # NAME STORE ROUND: the three reads of STORE's dataset against 127.0.0.1:$PORT
    local name=$1 store=$2 round=$3 ep path key
    key=${KEY[$store]}
    [[ $name == *-ws ]] && key=${WS_KEY[$store]}
    [[ $name == *-tok ]] && key=${TOKEN[$store]}
    for ep in detail list asset; do
        case $ep in detail) path=${DETAIL[$store]} ;; list) path=$LIST_PATH ;; asset) path=${ASSET[$store]} ;; esac
        RESULT[$name:$ep:$round]=$(run_wrk "$name-$ep-$round" "$key" "http://127.0.0.1:$PORT$path")
        say "  $name $ep: ${RESULT[$name:$ep:$round]}"
    done
}
# server_command NAME: sets CMD (and STORE) to start the server of that name.
server_command() {
    local serve=(env RUST_LOG=warn "$BIN/server" serve --addr "127.0.0.1:$PORT")
    local nocache=(ASSETLIB_DETAIL_CACHE=off ASSETLIB_PAGE_CACHE=off)
    case $1 in
        baseline) STORE=sled; CMD=("$BIN/bench_baseline" --addr "127.0.0.1:$PORT" \
            --library "$WORK/sled-library.json" --list "$WORK/sled-list.json" --asset "$WORK/sled-asset.json") ;;
        axum | axum-ws | axum-tok) STORE=sled; CMD=("${serve[@]}" --data "$DATA") ;;
        axum-nocache) STORE=sled; CMD=(env "${nocache[@]}" "${serve[@]}" --data "$DATA") ;;
        axum-pg | axum-pg-ws | axum-pg-tok) STORE=pg; CMD=("${serve[@]}" "${PGDATA_ARGS[@]}") ;;
        axum-pg-nocache) STORE=pg; CMD=(env "${nocache[@]}" "${serve[@]}" "${PGDATA_ARGS[@]}") ;;
        axum-hook) STORE=sled; CMD=("${serve[@]}" --data "$DATA" --webhook-allow-private) ;;
        axum-pg-hook) STORE=pg; CMD=("${serve[@]}" "${PGDATA_ARGS[@]}" --webhook-allow-private) ;;
        warp) STORE=sled; CMD=(env RUST_LOG=warn "$BIN/warp_server" serve --data "$DATA" --addr "127.0.0.1:$PORT") ;;
    esac
}
serve_and_measure() { # NAME ROUND: starts the server, measures it, stops it
    local name=$1 round=$2
    server_command "$name"
    start "$name" "${CMD[@]}"
    local pid=$LAST_PID
    SERVER_PID=$pid
    wait_port "$PORT"
    measure "$name" "$STORE" "$round"
    SERVER_PID=
    stop "$pid"
}
create_run() { # NAME ROUND [TITLE]: durable creates from $CONNECTIONS connections, each
    # with a title of its own, or all with TITLE (rows NAME and NAME-1t); a NAME ending in
    # -hook runs with one webhook registered to the receiver (deleted after the run, with the
    # deliveries not yet sent, so no later run sends them)
    local name=$1 round=$2 title=${3:-} row=$1 hook=""
    [[ -n $title ]] && row=$name-1t
    local label="$row-creates-$round"
    server_command "$name"
    say "$name: durable creates, $CONNECTIONS connections, ${title:-a title each} (round $round) ..."
    start "$label" "${CMD[@]}"
    local pid=$LAST_PID
    SERVER_PID=$pid
    wait_port "$PORT"
    if [[ $name == *-hook ]]; then
        hook=$(curl -sf -X POST "http://127.0.0.1:$PORT/api/v1/webhooks" \
            -H "Authorization: Bearer ${KEY[$STORE]}" -H "Content-Type: application/json" \
            -d "{\"url\":\"http://127.0.0.1:$HOOK_PORT/hooks\",\"event_types\":[\"asset.created\"]}")
        RECEIVER_SECRET=$(sed -E 's/.*"secret":"([^"]+)".*/\1/' <<<"$hook")
        hook=$(sed -E 's/.*"data":\{"id":"([0-9a-f-]{36})".*/\1/' <<<"$hook")
        start "receiver-$label" "$BIN/webhook_receiver" --addr "127.0.0.1:$HOOK_PORT" \
            --secret "$RECEIVER_SECRET" --quiet
        RECEIVER_PID=$LAST_PID
        wait_port "$HOOK_PORT"
    fi
    # How busy the 2 cores are meanwhile (server, wrk and PostgreSQL together): vmstat's
    # user, system, idle and I/O-wait shares, one sample a second.
    vmstat 1 "$((DURATION + 1))" >"$WORK/vmstat-$label.txt" &
    local vmstat_pid=$!
    CREATES[$row:$round]=$(ASSETLIB_KEY=${KEY[$STORE]} CREATE_TITLE=$title \
        run_wrk "$label" "${KEY[$STORE]}" "http://127.0.0.1:$PORT/api/v1/assets" -s benches/create.lua)
    wait "$vmstat_pid" 2>/dev/null || true
    CPU[$row:$round]=$(awk 'NR > 3 { us += $13; sy += $14; id += $15; wa += $16; n++ }
        END { if (n) printf "user %.0f%%, system %.0f%%, idle %.0f%%, I/O wait %.0f%%", us/n, sy/n, id/n, wa/n }' \
        "$WORK/vmstat-$label.txt")
    say "  $row create: ${CREATES[$row:$round]} (cpu: ${CPU[$row:$round]})"
    if [[ -n $hook ]]; then
        local deliveries
        deliveries=$(curl -sf -H "Authorization: Bearer ${KEY[$STORE]}" \
            "http://127.0.0.1:$PORT/api/v1/webhooks/$hook/deliveries?per_page=1" |
            sed -E 's/.*"total":([0-9]+).*/\1/')
        say "  $row: $deliveries deliveries enqueued by the end of the run"
        curl -sf -o /dev/null -X DELETE "http://127.0.0.1:$PORT/api/v1/webhooks/$hook" \
            -H "Authorization: Bearer ${KEY[$STORE]}"
        stop "$RECEIVER_PID"
    fi
    SERVER_PID=
    stop "$pid"
}
feed_run() { # NAME ROUND: one reader follows the whole event log from its start, pages of 1000
    local name=$1 round=$2 label="$1-feed-$2" after="" page next count events=0 t0 t1
    server_command "$name"
    start "$label" "${CMD[@]}"
    local pid=$LAST_PID
    wait_port "$PORT"
    t0=$(date +%s%N)
    while :; do
        page=$(curl -sf -H "Authorization: Bearer ${KEY[$STORE]}" \
            "http://127.0.0.1:$PORT/api/v1/events?limit=1000${after:+&after=$after}")
        count=$({ grep -o '"id":"evt_' <<<"$page" || true; } | wc -l)
        [[ $count == 0 ]] && break
        events=$((events + count))
        after=$(sed -E 's/.*"next":"([0-9a-f]{32})".*/\1/' <<<"$page")
    done
    t1=$(date +%s%N)
    FEED[$name:$round]=$(awk -v n="$events" -v ns="$((t1 - t0))" 'BEGIN { printf "%.0f %d %.2f", n / (ns / 1e9), n, ns / 1e9 }')
    say "  $name feed: ${FEED[$name:$round]} (events/s, events, seconds)"
    stop "$pid"
}
HOOK_PORT=$(free_port)

SERVERS=(axum axum-ws axum-tok axum-nocache)
CREATORS=(axum)
[[ $CREATES_ROWS == 1 ]] || CREATORS=()
if [[ $NO_PG != 1 ]]; then
    SERVERS+=(axum-pg axum-pg-ws axum-pg-tok axum-pg-nocache)
    [[ $CREATES_ROWS == 1 ]] && CREATORS+=(axum-pg)
fi
[[ $WARP == 1 ]] && SERVERS+=(warp)
[[ $READS == 1 ]] || SERVERS=()
for round in $(seq 1 "$ROUNDS"); do
    for name in $([[ $READS == 1 ]] && echo baseline) "${SERVERS[@]}"; do
        say "round $round of $ROUNDS: $name ..."
        serve_and_measure "$name" "$round"
    done
done
# Each run adds its creates to the store, and a larger store is a little slower: the order of
# the rows turns round by round, so that no row always runs on the larger store.
for round in $(seq 1 "$ROUNDS"); do
    for name in "${CREATORS[@]}"; do
        if ((round % 2)); then
            create_run "$name" "$round"
            create_run "$name-hook" "$round"
            create_run "$name" "$round" "Logo"
        else
            create_run "$name" "$round" "Logo"
            create_run "$name-hook" "$round"
            create_run "$name" "$round"
        fi
    done
done
# The event log now holds every create of the runs above: one reader follows it whole.
declare -A FEED
for round in $(seq 1 "$ROUNDS"); do
    for name in "${CREATORS[@]}"; do
        feed_run "$name" "$round"
    done
done

# median KEY_PREFIX: of the rounds' "req/s p50 p99" lines under KEY_PREFIX:1..ROUNDS (in RESULT or
# CREATES, named by the array), the line of the median req/s, then the lowest and highest req/s.
median() {
    local -n results=$1
    local prefix=$2 round
    for round in $(seq 1 "$ROUNDS"); do printf '%s %s\n' "${results[$prefix:$round]}" "$round"; done |
        sort -n -k1,1 | awk '{ line[NR] = $0; r[NR] = $1 } END { m = int((NR + 1) / 2); print line[m], r[1], r[NR] }'
}

# --- report ------------------------------------------------------------------------------
# result ROW ENDPOINT RPS P50 P99 SHARE CPU: with RESULTS=FILE, one JSON line of the report
# appended to FILE (`cargo xtask benchmarks` makes BENCHMARKS.md's tables from them).
MACHINE="$(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
result() {
    [[ -n ${RESULTS:-} ]] || return 0
    printf '{"bench":"load","row":"%s","endpoint":"%s","rps":%s,"p50_ms":%s,"p99_ms":%s,"share":%s,"cpu_us":%s,"duration_s":%s,"rounds":%s,"commit":"%s","machine":"%s"}\n' \
        "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$DURATION" "$ROUNDS" "$COMMIT" "$MACHINE" >>"$RESULTS"
}
echo
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
echo "wrk: $THREADS threads, $CONNECTIONS connections, ${DURATION}s per run, $ROUNDS rounds interleaved;"
echo "each row is the median round (by req/s) with the lowest and highest req/s of the rounds; latencies in ms"
[[ $NO_PG != 1 ]] && echo "postgres: $PG_SETTINGS, on 127.0.0.1 (same machine)"
printf '%-16s %-7s %10s %9s %9s %9s %8s   %s\n' server endpoint req/s p50 p99 "vs base" "cpu us" "req/s range"
declare -A MEDIAN
for name in $([[ $READS == 1 ]] && echo baseline) "${SERVERS[@]}"; do
    for ep in detail list asset; do
        read -r rps p50 p99 cpu _ low high <<<"$(median RESULT "$name:$ep")"
        MEDIAN[$name:$ep]=$rps
        read -r base _ <<<"$(median RESULT "baseline:$ep")"
        share=$(awk -v a="$rps" -v b="$base" 'BEGIN { printf "%.0f%%", (b > 0 ? 100 * a / b : 0) }')
        printf '%-16s %-7s %10s %9s %9s %9s %8s   %s-%s\n' "$name" "$ep" "$rps" "$p50" "$p99" "$share" "$cpu" "$low" "$high"
        result "$name" "$ep" "$rps" "$p50" "$p99" "$(awk -v a="$rps" -v b="$base" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')" "$cpu"
    done
done
for name in "${CREATORS[@]}"; do
    for row in "$name" "$name-hook" "$name-1t"; do
        read -r rps p50 p99 cpu round low high <<<"$(median CREATES "$row")"
        case $row in
            "$name") what=create ;; "$name-hook") what=create+hook ;; *) what=create1t ;;
        esac
        printf '%-16s %-11s %6s %9s %9s %9s %8s   %s-%s   machine: %s\n' "$name" \
            "$what" "$rps" "$p50" "$p99" "" "$cpu" "$low" "$high" "${CPU[$row:$round]}"
        result "$name" "$what" "$rps" "$p50" "$p99" null "$cpu"
    done
done
for name in "${CREATORS[@]}"; do
    read -r rate events seconds _ low high <<<"$(median FEED "$name")"
    printf '%-16s %-11s %6s events/s (%s events in %s s; rounds %s-%s), one reader, pages of 1000\n' \
        "$name" feed "$rate" "$events" "$seconds" "$low" "$high"
done
for name in "${CREATORS[@]}"; do
    read -r with _ <<<"$(median CREATES "$name-hook")"
    read -r without _ <<<"$(median CREATES "$name")"
    awk -v w="$with" -v o="$without" -v n="$name" \
        'BEGIN { printf "%s: creates with one webhook / without: %.2f\n", n, (o > 0 ? w / o : 0) }'
done
if [[ $READS == 1 ]]; then
    for pair in axum:axum-ws axum-pg:axum-pg-ws axum:axum-tok axum-pg:axum-pg-tok; do
        [[ -n ${MEDIAN[${pair#*:}:asset]:-} ]] || continue
        for ep in detail list asset; do
            awk -v g="${MEDIAN[${pair%%:*}:$ep]}" -v w="${MEDIAN[${pair#*:}:$ep]}" -v n="${pair#*:}" \
                -v base="${pair%%:*}" -v ep="$ep" \
                'BEGIN { printf "%s / %s %s (req/s against a global key): %.2f\n", n, base, ep, (g > 0 ? w / g : 0) }'
        done
    done
fi
if [[ $WARP == 1 && $READS == 1 ]]; then
    for ep in detail list asset; do
        awk -v a="${MEDIAN[axum:$ep]}" -v w="${MEDIAN[warp:$ep]}" -v ep="$ep" \
            'BEGIN { printf "warp/axum %s: %.2f\n", ep, (a > 0 ? w / a : 0) }'
    done
fi
