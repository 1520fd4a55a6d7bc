#!/usr/bin/env bash
# The realistic site run: many libraries with a long tail, edits landing while people read,
# against a baseline; see BENCHMARKS.md "A realistic site".
#
#   bash benches/site.sh
#
# Builds release binaries, starts a PostgreSQL server of its own (as load.sh does), and makes
# the same site in a sled data directory and in a PostgreSQL database through the API
# (examples/site_load.rs `seed`: 2,000 libraries of 20-200 assets, 100,000 assets, 5% of the
# libraries paid, 200 of the assets PNG images). Then, ROUNDS times, interleaved, each for
# DURATION seconds with CONNECTIONS connections (`site_load run`: Zipf s = 1.1 over libraries
# and assets, 2% writes; its doc comment gives the mix):
#   baseline   examples/bench_baseline.rs --site: every URL of the run answered from memory
#              (the bodies `site_load crawl` fetched from the sled server);
#   sled       the axum ready server on sled, caches on;
#   pg         the same on PostgreSQL;
#   pg x2      two ready servers on the one PostgreSQL database (replica sync `notify`, files
#              shared), the client's connections spread over both in turn.
# Each server starts fresh for its run (empty caches). Reported per row: req/s, p50 and p99
# (ms), req/s as a share of the baseline's from the same round, the servers' CPU time per
# answer, and the hit rate of each cache (library details, list pages, single assets) from
# the servers' own counts (`Service::cache_stats`, logged when they stop). Each run's p50 and
# p99 by kind of request (library by id or slug, asset, list, image, PATCH, PUT) are logged.
#
# Environment: DURATION (default 30), ROUNDS (default 1), CONNECTIONS (default 64), NO_PG=1
# (sled and the baseline only), PORT (first port, default 18180), KEEP=1 keeps the work
# directory, LIBRARIES and ASSETS make a smaller site (to try the script), RESULTS=FILE
# also writes the rows as JSON lines (for `cargo xtask benchmarks`).
# Every process started here is stopped by its PID on exit.
set -euo pipefail

DURATION=${DURATION:-30}
ROUNDS=${ROUNDS:-1}
CONNECTIONS=${CONNECTIONS:-64}
PORT=${PORT:-18180}
NO_PG=${NO_PG:-0}
RESULTS=${RESULTS:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

# The work directory, cleanup on exit, PostgreSQL binaries, start/stop/wait_port/free_port,
# cpu_ticks and start_postgres.
source "$ROOT/benches/common/bench.sh"
command -v curl >/dev/null || { say "curl is needed"; exit 1; }

say "building release binaries ..."
cargo build --release --quiet --example server --example bench_baseline --example site_load \
    --features full
BIN=${CARGO_TARGET_DIR:-target}/release/examples

PG_ARGS=()
[[ $NO_PG != 1 ]] && start_postgres assetlib_site

# A key of every scope for STORE's data arguments.
declare -A KEY DATA_ARGS
DATA_ARGS[sled]="--data $WORK/sled"
[[ $NO_PG != 1 ]] && DATA_ARGS[pg]="--data $WORK/pg-files ${PG_ARGS[*]}"

# serve NAME PORT STORE: starts the ready server on STORE's data at PORT (pid in LAST_PID).
# Its request log is off, as in load.sh and as the baseline has none; the app's own lines
# (the cache hits logged on stop) stay.
serve() {
    local name=$1 port=$2 store=$3
    # shellcheck disable=SC2086 # DATA_ARGS holds words
    start "$name" env RUST_LOG=warn,server::app=info "$BIN/server" serve ${DATA_ARGS[$store]} \
        --addr "127.0.0.1:$port"
}

for store in sled $([[ $NO_PG != 1 ]] && echo pg); do
    # shellcheck disable=SC2086
    KEY[$store]=$("$BIN/server" keys create --name site \
        --scopes read:assets,write:assets,read:libraries,write:libraries ${DATA_ARGS[$store]} |
        tail -n 1)
    serve "seed-$store" "$PORT" "$store"
    pid=$LAST_PID
    wait_port "$PORT"
    files=${DATA_ARGS[$store]#--data }
    files=${files%% *}/files
    say "$store: seeding the site ..."
    "$BIN/site_load" seed --url "http://127.0.0.1:$PORT" --key "${KEY[$store]}" \
        --state "$WORK/$store.json" --images "$files" \
        --libraries "${LIBRARIES:-2000}" --assets "${ASSETS:-100000}"
    # The crawl reads every URL once: the sled one keeps the bodies for the baseline, and on
    # both it makes the image variants, which stay in the file store as on a live site.
    "$BIN/site_load" crawl --url "http://127.0.0.1:$PORT" --key "${KEY[$store]}" \
        --state "$WORK/$store.json" --out "$WORK/$store-bodies.bin"
    stop "$pid"
done

# The cache hits a stopped server logged, as "hits lookups" per cache (details lists assets).
hits_of() {
    sed -nE 's/.*cache hits: details ([0-9]+)\/([0-9]+), lists ([0-9]+)\/([0-9]+), assets ([0-9]+)\/([0-9]+).*/\1 \2 \3 \4 \5 \6/p' \
        "$WORK/$1.log" | tail -n 1
}

declare -A ROW
# measure ROW ROUND STORE SERVERS: starts SERVERS servers (baseline: the baseline), runs the
# client against them, stops them, and keeps "rps p50 p99 cpu_us hits..." in ROW[ROW:ROUND].
measure() {
    local row=$1 round=$2 store=$3 servers=$4
    local pids=() urls=() i port before=0 after=0 out pid
    for ((i = 0; i < servers; i++)); do
        port=$((PORT + 1 + i))
        if [[ $row == baseline ]]; then
            start "$row-$round-$i" "$BIN/bench_baseline" --addr "127.0.0.1:$port" \
                --site "$WORK/sled-bodies.bin"
        else
            serve "$row-$round-$i" "$port" "$store"
        fi
        pids+=("$LAST_PID")
        urls+=(--url "http://127.0.0.1:$port")
        wait_port "$port"
    done
    for pid in "${pids[@]}"; do before=$((before + $(cpu_ticks "$pid"))); done
    out=$("$BIN/site_load" run "${urls[@]}" --key "${KEY[$store]}" --state "$WORK/$store.json" \
        --connections "$CONNECTIONS" --duration "$DURATION" --seed "$round")
    for pid in "${pids[@]}"; do after=$((after + $(cpu_ticks "$pid"))); done
    for pid in "${pids[@]}"; do stop "$pid"; done
    local hits=(0 0 0 0 0 0) h
    for ((i = 0; i < servers; i++)); do
        [[ $row == baseline ]] && break
        read -r -a h <<<"$(hits_of "$row-$round-$i")"
        for j in 0 1 2 3 4 5; do hits[j]=$((hits[j] + ${h[j]:-0})); done
    done
    ROW[$row:$round]=$(python3 -c '
import json, sys
r = json.loads(sys.argv[1]); ticks = int(sys.argv[2]); hz = int(sys.argv[3]); h = list(map(int, sys.argv[4:]))
rate = lambda a, b: "-" if b == 0 else "%.0f%%" % (100.0 * a / b)
cpu = ticks * 1e6 / hz / max(r["requests"], 1)
print(r["rps"], r["p50_ms"], r["p99_ms"], "%.1f" % cpu, rate(h[0], h[1]), rate(h[2], h[3]), rate(h[4], h[5]),
      json.dumps(r["bad_statuses"], separators=(",", ":")), r["writes"])
' "$out" "$((after - before))" "$(getconf CLK_TCK)" "${hits[@]}")
    say "  $row: ${ROW[$row:$round]}"
    say "  $row, p50/p99 ms by kind: $(python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print(", ".join("%s %s/%s" % (k, v[0], v[1]) for k, v in r.get("by_kind_p50_p99_ms", {}).items()))
' "$out")"
}

ROWS=(baseline sled)
[[ $NO_PG != 1 ]] && ROWS+=(pg pg-x2)
for round in $(seq 1 "$ROUNDS"); do
    for row in "${ROWS[@]}"; do
        say "round $round of $ROUNDS: $row ..."
        case $row in
            baseline) measure baseline "$round" sled 1 ;;
            sled) measure sled "$round" sled 1 ;;
            pg) measure pg "$round" pg 1 ;;
            pg-x2) measure pg-x2 "$round" pg 2 ;;
        esac
    done
done

# --- report ------------------------------------------------------------------------------
echo
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo); commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "site: 2,000 libraries, 100,000 assets; $CONNECTIONS connections, ${DURATION}s per run, $ROUNDS round(s); the median round by req/s"
[[ $NO_PG != 1 ]] && echo "postgres: $PG_SETTINGS, on 127.0.0.1 (same machine)"
printf '%-9s %9s %8s %8s %8s %8s %8s %8s %8s  %s\n' server req/s p50 p99 "vs base" "cpu us" details lists assets "other statuses"
for row in "${ROWS[@]}"; do
    line=$(for round in $(seq 1 "$ROUNDS"); do echo "${ROW[$row:$round]} $round"; done | sort -n -k1,1 |
        awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }')
    read -r rps p50 p99 cpu hd hl ha bad writes round <<<"$line"
    base=$(awk '{print $1}' <<<"${ROW[baseline:$round]}")
    share=$(awk -v a="$rps" -v b="$base" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    printf '%-9s %9s %8s %8s %8s %8s %8s %8s %8s  %s\n' "$row" "$rps" "$p50" "$p99" "$share" "$cpu" "$hd" "$hl" "$ha" "$bad"
    if [[ -n $RESULTS ]]; then
        printf '{"bench":"site","row":"%s","rps":%s,"p50_ms":%s,"p99_ms":%s,"share":%s,"cpu_us":%s,"hits":{"details":"%s","lists":"%s","assets":"%s"},"writes":%s,"duration_s":%s,"rounds":%s,"commit":"%s","machine":"%s"}\n' \
            "$row" "$rps" "$p50" "$p99" "$share" "$cpu" "$hd" "$hl" "$ha" "$writes" "$DURATION" \
            "$ROUNDS" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
            "$(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)" >>"$RESULTS"
    fi
done
