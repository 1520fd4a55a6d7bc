#!/usr/bin/env bash
# Image variants over HTTP, on the ready server (sled, local files); see BENCHMARKS.md.
#
#   bash benches/images_load.sh
#
# 1. A kept variant against a plain download of the same bytes: the 640 px variant of a
#    24-megapixel JPEG is made once, its bytes are stored as a second asset's file, then wrk
#    runs against GET /api/v1/assets/{photo}/image?w=640 and GET /api/v1/assets/{copy}/download
#    in turn (ROUNDS rounds, the median reported) and gives req/s of each and their ratio.
# 2. Cold variants under a rush: 32 requests at once, each for a variant not made yet of one
#    of four 24-megapixel JPEGs, against a server with the default workers (the number of
#    cores) and queue (16). It counts every status and reads the server's peak resident memory
#    (VmHWM in /proc/PID/status) before and after.
#
# The 24-megapixel JPEGs (6000 x 4000) are drawn by ffmpeg (`testsrc2`, Debian's ffmpeg or the
# static one `cargo xtask setup` installs). Environment: DURATION (seconds per wrk run,
# default 10), ROUNDS (default 3), CONNECTIONS (default 32), THREADS (wrk threads, default 2),
# PORT (default 18180), KEEP=1 keeps the work directory. Every process started here is
# stopped by its PID on exit.
set -euo pipefail

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
PORT=${PORT:-18180}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

PIDS=()
WORK=$(mktemp -d "${TMPDIR:-/tmp}/assetlib-images.XXXXXX")
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

command -v wrk >/dev/null || { say "wrk is needed (Debian: apt-get install wrk)"; exit 1; }
command -v curl >/dev/null || { say "curl is needed"; exit 1; }
FFMPEG=$(command -v ffmpeg || ls target/tools/ffmpeg/lib/python3*/site-packages/imageio_ffmpeg/binaries/ffmpeg-* 2>/dev/null | head -n 1 || true)
[[ -n "$FFMPEG" && -x "$FFMPEG" ]] || { say "ffmpeg is needed: apt-get install ffmpeg, or cargo xtask setup"; exit 1; }

say "building the ready server ..."
cargo build --release --quiet --example server --features full
BIN=${CARGO_TARGET_DIR:-target}/release/examples/server

DATA="$WORK/data"
mkdir -p "$DATA/files/photos"
for i in 1 2 3 4; do
    "$FFMPEG" -nostdin -hide_banner -loglevel error -y -f lavfi \
        -i "testsrc2=size=6000x4000:rate=1,noise=alls=$((i * 6)):allf=t" -frames:v 1 -q:v 3 \
        "$DATA/files/photos/big$i.jpg"
done
say "sources: $(du -ch "$DATA"/files/photos/big*.jpg | tail -n 1 | cut -f1) in 4 JPEGs of 6000 x 4000"
KEY=$("$BIN" keys create --scopes read:assets,write:assets --name images --data "$DATA" | tail -n 1)
API="http://127.0.0.1:$PORT/api/v1"

# serve: starts the server on $DATA; sets SERVER_PID.
serve() {
    env RUST_LOG=warn "$BIN" serve --data "$DATA" --addr "127.0.0.1:$PORT" >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    local i
    for i in $(seq 1 100); do
        curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0
        sleep 0.1
    done
    say "the server did not come up:"; cat "$WORK/server.log" >&2; exit 1
}
create() { # create TITLE FILE_PATH -> the new asset's id
    curl -sf -X POST "$API/assets" -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \
        -d "{\"title\":\"$1\",\"asset_type\":\"image\",\"file_path\":\"$2\"}" |
        sed -E 's/.*"data":\{"id":"([0-9a-f-]{36})".*/\1/'
}
peak_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }

serve
PHOTOS=()
for i in 1 2 3 4; do PHOTOS+=("$(create "Photo $i" "photos/big$i.jpg")"); done

# --- 1. a kept variant against a plain download of the same bytes ------------------------
VARIANT="/api/v1/assets/${PHOTOS[0]}/image?w=640"
curl -sf -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT$VARIANT" -o "$DATA/files/photos/variant.jpg"
COPY=$(create "The variant's bytes" "photos/variant.jpg")
DOWNLOAD="/api/v1/assets/$COPY/download"
say "the variant: $(wc -c <"$DATA/files/photos/variant.jpg") bytes"
rps() { # rps PATH -> requests per second from one wrk run
    local out
    out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" -H "Authorization: Bearer $KEY" \
        "http://127.0.0.1:$PORT$1")
    if grep -q "Non-2xx" <<<"$out"; then say "error answers: $(grep Non-2xx <<<"$out")"; exit 1; fi
    awk '/^Requests\/sec:/ {print $2}' <<<"$out"
}
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR + 1) / 2)]}'; }
: >"$WORK/variant.txt"; : >"$WORK/download.txt"
for r in $(seq 1 "$ROUNDS"); do
    rps "$VARIANT" >>"$WORK/variant.txt"
    rps "$DOWNLOAD" >>"$WORK/download.txt"
done
V=$(median <"$WORK/variant.txt"); D=$(median <"$WORK/download.txt")
printf 'kept variant: %s req/s; plain download of the same bytes: %s req/s; ratio %.2f (medians of %s rounds of %s s, %s connections)\n' \
    "$V" "$D" "$(awk -v v="$V" -v d="$D" 'BEGIN {print v / d}')" "$ROUNDS" "$DURATION" "$CONNECTIONS"

# --- 2. cold variants under a rush -------------------------------------------------------
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
serve
BEFORE=$(peak_kib "$SERVER_PID")
: >"$WORK/statuses.txt"
for i in $(seq 0 31); do
    photo=${PHOTOS[$((i % 4))]}
    curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $KEY" \
        "$API/assets/$photo/image?w=$((1200 + i))" >>"$WORK/statuses.txt" &
done
wait $(jobs -p | grep -v "^$SERVER_PID$") 2>/dev/null || true
sleep 0.5
AFTER=$(peak_kib "$SERVER_PID")
printf '32 cold requests at once for variants of 24-megapixel JPEGs: statuses %s; peak RSS %d MiB (%d MiB before)\n' \
    "$(sort "$WORK/statuses.txt" | uniq -c | awk '{printf "%s%s x %s", (NR > 1 ? ", " : ""), $1, $2}')" \
    "$((AFTER / 1024))" "$((BEFORE / 1024))"
if grep -qv -E '^(200|503)$' "$WORK/statuses.txt"; then say "an answer was neither 200 nor 503"; exit 1; fi
