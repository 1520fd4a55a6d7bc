#!/usr/bin/env bash
# What keeping the search index costs a create over HTTP, in the load run's terms: durable
# creates (POST /api/v1/assets, benches/create.lua: a title each, a description, no file)
# from 32 connections against the README's embedded app (examples/embed_axum.rs: the API in
# an axum app over a durable sled store), built with the default features and with
# `search` added, nothing else changed. ROUNDS rounds (default 7), the two builds taking
# turns, each run into a fresh data directory; the report gives each build's median round and
# the median of the rounds' with/without ratios. Each run asks one search before its creates
# (a 404 without the feature), so the search build's words of the fields, kept in memory from
# the first search on (storage/sled/src/field_words.rs), are there for every create to move.
#
#   bash benches/search_creates_http.sh
#
# Environment: ROUNDS (default 7), DURATION (seconds a run, default 10), RESULTS=FILE appends
# the report's rows to FILE as JSON lines. Every process started here is stopped by its PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
NO_PG=1
ROUNDS=${ROUNDS:-7}
DURATION=${DURATION:-10}
# The work directory, cleanup on exit, start, stop, wait_port, cpu_ticks.
source "$ROOT/benches/common/bench.sh"
command -v wrk >/dev/null || { say "wrk is needed (Debian: apt-get install wrk)"; exit 1; }

TARGET=${CARGO_TARGET_DIR:-target}/release/examples/embed_axum
say "building examples/embed_axum (release) with the default features, then with search ..."
cargo build --release --quiet --example embed_axum
cp "$TARGET" "$WORK/embed-plain"
cargo build --release --quiet --example embed_axum --features search
cp "$TARGET" "$WORK/embed-search"

PORT=18091
run() { # BUILD ROUND: one run of creates; prints "req/s p50 p99 cpu_us"
    local build=$1 round=$2 data="$WORK/data-$1-$2" key pid out before after
    start "$build-$round" env RUST_LOG=warn DATA="$data" ADDR="127.0.0.1:$PORT" "$WORK/embed-$build"
    pid=$LAST_PID
    wait_port "$PORT"
    key=$(sed -n 's/^API key (shown once): //p' "$WORK/$build-$round.log")
    [[ -n $key ]] || { say "$build: no key in its output"; cat "$WORK/$build-$round.log" >&2; exit 1; }
    curl -s -o /dev/null -H "Authorization: Bearer $key" "http://127.0.0.1:$PORT/api/v1/search?q=first"
    before=$(cpu_ticks "$pid")
    out=$(ASSETLIB_KEY=$key wrk -t2 -c32 -d"${DURATION}s" --latency -s benches/create.lua \
        "http://127.0.0.1:$PORT/api/v1/assets")
    after=$(cpu_ticks "$pid")
    stop "$pid"
    rm -rf "$data"
    if grep -q "Non-2xx" <<<"$out"; then
        say "$build round $round had error responses: $(grep Non-2xx <<<"$out")"
        exit 1
    fi
    wrk_figures "$((after - before))" <<<"$out"
}

: >"$WORK/rows"
for round in $(seq "$ROUNDS"); do
    for build in plain search; do
        row=$(run "$build" "$round")
        say "round $round, $build: $row"
        echo "$build $round $row" >>"$WORK/rows"
    done
done

python3 - "$WORK/rows" "${RESULTS:-}" "$(git rev-parse --short HEAD)" "$DURATION" <<'EOF'
import json, os, statistics, sys
rows_file, results, commit, duration = sys.argv[1:5]
runs = {"plain": {}, "search": {}}
for line in open(rows_file):
    build, rnd, rps, p50, p99, cpu = line.split()
    runs[build][int(rnd)] = dict(rps=float(rps), p50=float(p50), p99=float(p99), cpu=float(cpu))
def median_run(build):
    ordered = sorted(runs[build].values(), key=lambda r: r["rps"])
    return ordered[len(ordered) // 2]
ratios = [runs["search"][r]["rps"] / runs["plain"][r]["rps"] for r in runs["plain"] if r in runs["search"]]
print("| build | creates/s | p50 ms | p99 ms | CPU µs/create |")
print("|---|---:|---:|---:|---:|")
out = []
for build in ("plain", "search"):
    m = median_run(build)
    print(f"| {build} | {m['rps']:.0f} | {m['p50']:.2f} | {m['p99']:.2f} | {m['cpu']:.0f} |")
    out.append({"bench": "search_creates_http", "build": build, "creates_per_s": m["rps"],
                "p50_ms": m["p50"], "p99_ms": m["p99"], "cpu_us": m["cpu"], "rounds": len(runs[build]),
                "seconds": int(duration), "commit": commit, "cores": os.cpu_count()})
ratio = statistics.median(ratios)
print(f"\nwith search / without, per round: {', '.join(f'{r:.2f}' for r in ratios)}; median {ratio:.2f}")
if results:
    with open(results, "a") as f:
        for row in out:
            f.write(json.dumps(row) + "\n")
        f.write(json.dumps({"bench": "search_creates_http", "ratio_median": round(ratio, 3),
                            "ratios": [round(r, 3) for r in ratios], "commit": commit}) + "\n")
EOF
