#!/usr/bin/env bash
# `import` of many small files by the ready server (release build, every feature, previews on:
# PDF first pages drawn by its render child, image thumbnails and placeholders): files per
# second and the import's peak memory (resident set, sampled every 20 ms), for FILES files and
# for a quarter of them (memory must not grow with the number of files), then the same import
# run again (every file there already: what a resumed run costs); into a sled data directory,
# then into a PostgreSQL database (NO_PG=1 leaves it out).
#
#   bash benches/import.sh
#
# The tree: FILES files (default 10000) in 20 folders: 40% PNG images (48 to 175 pixels a
# side, each different), 20% one-page PDFs with a line of text, 20% plain text, 20%
# Markdown, 0.5 to 4 KB each, all imported into a library. Each run imports into a fresh data
# directory (and a fresh database), the runs one after the other with nothing else running.
# sled's page cache is held to 64 MiB (`--sled-cache-mb 64`): at its default of 1 GiB it grows
# with the data written until it is full, which is no cost of the import. The PostgreSQL server
# is the run's own (benches/common/bench.sh: fsync on, durable commits). RESULTS=FILE appends
# the report's rows to FILE as JSON lines. Every process started here is stopped by its PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
NO_PG=${NO_PG:-0}
FILES=${FILES:-10000}
# The work directory, cleanup on exit, PostgreSQL binaries and start_postgres.
source "$ROOT/benches/common/bench.sh"

say "building the ready server (release, --features full) ..."
cargo build --release --quiet --example server --features full
BIN=${CARGO_TARGET_DIR:-target}/release/examples/server
PG_URL=
if [[ $NO_PG != 1 ]]; then
    start_postgres import_bench
    PG_URL="postgres://postgres@127.0.0.1:$PGPORT"
fi

python3 - "$BIN" "$WORK" "$FILES" "${RESULTS:-}" "$(git rev-parse --short HEAD)" "$PG_URL" "${PGBIN:-}" <<'EOF'
import json, os, struct, subprocess, sys, time, zlib

binary, work, files, results, commit, pg_url, pg_bin = sys.argv[1:8]
files = int(files)

def png(side, seed):
    raw = bytearray()
    for y in range(side):
        raw.append(0)
        for x in range(side):
            raw += bytes(((x * 7 + y * 13 + seed * 31) % 251, (x * seed + y) % 256, (y * 3 + seed) % 256))
    rows = bytes(raw)
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    head = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")

def pdf(text):
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out

WORDS = "brand logo colour type grid photo team product launch report annual guide press".split()

def text(i, lines):
    return "\n".join(" ".join(WORDS[(i + j * k) % len(WORDS)] for k in range(12)) for j in range(lines))

def tree(root, n):
    for i in range(n):
        folder = os.path.join(root, f"folder-{i % 20:02d}")
        os.makedirs(folder, exist_ok=True)
        kind = i % 5
        if kind in (0, 1):
            name, data = f"image-{i:05d}.png", png(48 + i % 128, i)
        elif kind == 2:
            name, data = f"sheet-{i:05d}.pdf", pdf(f"Sheet {i}: {text(i, 1)}")
        elif kind == 3:
            name, data = f"notes-{i:05d}.txt", (text(i, 6 + i % 40) + f"\n{i}\n").encode()
        else:
            name, data = f"readme-{i:05d}.md", (f"# Readme {i}\n\n" + text(i, 6 + i % 40)).encode()
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)

def run(store, label, root, target):
    started = time.monotonic()
    child = subprocess.Popen([binary, "import", root, "--library", "Imported", "--sled-cache-mb", "64"] + target,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "RUST_LOG": "warn"})
    peak = 0
    while child.poll() is None:
        try:
            with open(f"/proc/{child.pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        peak = max(peak, int(line.split()[1]))
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    out, err = child.communicate()
    took = time.monotonic() - started
    summary = out.decode().strip().splitlines()[-1] if out else ""
    if child.returncode != 0:
        sys.exit(f"{label}: import failed ({child.returncode}): {summary}\n{err.decode()[-2000:]}")
    count = int(summary.split(" files found")[0])
    row = {"bench": "import", "store": store, "run": label, "files": count, "seconds": round(took, 2),
           "files_per_s": round(count / took), "peak_rss_mib": round(peak / 1024, 1),
           "summary": summary, "commit": commit, "cores": os.cpu_count()}
    print(f"| {store} | {label} | {count} | {took:.1f} s | {count / took:.0f} | {peak / 1024:.0f} MiB |", flush=True)
    if results:
        with open(results, "a") as f:
            f.write(json.dumps(row) + "\n")

print("making the trees ...", file=sys.stderr, flush=True)
small, large = os.path.join(work, "small"), os.path.join(work, "large")
tree(small, files // 4)
tree(large, files)
print("| store | run | files | time | files/s | peak memory |")
print("|---|---|---|---|---|---|")

def targets():
    yield "sled", lambda name: ["--data", os.path.join(work, f"data-{name}")]
    if pg_url:
        def database(name):
            subprocess.run([os.path.join(pg_bin, "psql"), "-q", f"{pg_url}/postgres", "-c",
                            f"CREATE DATABASE import_{name}"], check=True, stdout=subprocess.DEVNULL)
            return ["--data", os.path.join(work, f"pg-{name}"), "--database-url", f"{pg_url}/import_{name}"]
        yield "postgres", database

for store, target in targets():
    run(store, f"{files // 4} files, new", small, target("small"))
    large_target = target("large")
    run(store, f"{files} files, new", large, large_target)
    run(store, f"{files} files, again (all there)", large, large_target)
EOF
