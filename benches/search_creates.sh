#!/usr/bin/env bash
# What keeping the search index costs a create: the store bench's durable create runs (1 and 32
# writers, on sled and on PostgreSQL) built without the `search` feature and with it, one after
# the other, three rounds interleaved; the report gives each store's median creates per second
# and p99 with the index against without it.
#
#   bash benches/search_creates.sh
#
# Environment: ROUNDS (default 3), CREATES (durable creates per 32-writer run, default 6400).
# The databases the creates go to are fresh each run (see benches/store.rs); the list benches
# of that file run on a 10,000-asset database (the smallest that holds its 100-entry library),
# as a warm-up. Every server the store bench starts is stopped by its PID when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
CREATES=${CREATES:-6400}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

run() { # run LABEL FEATURES ROUND
    ASSETLIB_BENCH_DATA="target/bench-data/creates-$1" ASSETLIB_BENCH_SIZES=10000 \
        ASSETLIB_BENCH_SECS=1 ASSETLIB_BENCH_CREATES="$CREATES" \
        cargo bench --quiet --features "$2" --bench store -- --noplot 'no criterion group' \
        >"$OUT/$1.$3" 2>&1 || { cat "$OUT/$1.$3"; exit 1; }
}

echo "building both benches ..." >&2
cargo bench --quiet --no-run --features sled,postgres --bench store 2>/dev/null
cargo bench --quiet --no-run --features sled,postgres,search --bench store 2>/dev/null
for round in $(seq "$ROUNDS"); do
    echo "round $round of $ROUNDS ..." >&2
    run plain sled,postgres "$round"
    run search sled,postgres,search "$round"
done

# The create runs of the store bench: a header per store (`sled: durable creates ...`,
# `postgres: durable creates ...`), then `<n> writers: <count> creates in <t> <rate>/s p50 <d>
# p99 <d>` per run.
python3 - "$OUT" "$ROUNDS" <<'EOF'
import re, statistics, sys, pathlib
out, rounds = pathlib.Path(sys.argv[1]), int(sys.argv[2])
header = re.compile(r"^(sled|postgres): durable creates")
run = re.compile(r"^\s*(\d+) writers: .*?([\d.]+)/s\s+p50\s+(\S+)\s+p99\s+(\S+)")
units = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
def ms(d):
    m = re.match(r"([\d.]+)(ns|µs|us|ms|s)$", d)
    return float(m.group(1)) * units[m.group(2)]
runs = {}
for label in ("plain", "search"):
    for r in range(1, rounds + 1):
        store = None
        for text in (out / f"{label}.{r}").read_text().splitlines():
            if h := header.match(text):
                store = h.group(1)
            elif (m := run.match(text)) and store:
                writers, rate, _, p99 = m.groups()
                runs.setdefault((store, int(writers), label), []).append((float(rate), ms(p99)))
if not runs:
    sys.exit("no create runs in the store bench's output")
print("| store | writers | creates/s without search | with | with/without | p99 without | p99 with |")
print("|---|---|---|---|---|---|---|")
for (store, writers) in sorted({(s, w) for (s, w, _) in runs}, key=lambda k: (k[0] != "sled", k[1])):
    plain = runs.get((store, writers, "plain"), [])
    search = runs.get((store, writers, "search"), [])
    if not plain or not search:
        continue
    rp = statistics.median(r for r, _ in plain)
    rs = statistics.median(r for r, _ in search)
    pp = statistics.median(p for _, p in plain)
    ps = statistics.median(p for _, p in search)
    print(f"| {store} | {writers} | {rp:.0f} | {rs:.0f} | {rs / rp:.2f} | {pp:.2f} ms | {ps:.2f} ms |")
EOF
