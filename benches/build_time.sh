#!/usr/bin/env bash
# What embedding costs at build time; see BENCHMARKS.md ("Build time of an embed").
#
#   bash benches/build_time.sh [ROUNDS]
#
# Makes two fresh apps in a temporary directory and builds each clean in debug, ROUNDS times
# (default 2), alternating, each round with empty target directories:
#   embed  README's lean recipe: this checkout's facade with `default-features = false,
#          features = ["axum", "sled"]`, axum 0.8 and tokio, its main the README's
#          `examples/embed_axum.rs`, and idna's unicode-rs backend picked as the recipe says;
#   bare   the same app without assetlib: axum 0.8, sled 0.34 and tokio, a route that reads
#          and writes sled.
# Each app resolves its own lockfile from the registry, as a new app would. The report gives
# each build's wall time, the median per app, the ratio embed / bare (DESIGN.md §6 asks for at
# most 3), and each app's crate count (`cargo tree -e normal`, distinct name and version
# pairs besides assetlib's own). Both apps build with the same cargo and the same
# `CARGO_BUILD_JOBS` (unset: all cores); the registry's sources are fetched before timing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${1:-2}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

say() { printf '%s\n' "$*" >&2; }

# --- the two apps ------------------------------------------------------------------------
mkdir -p "$WORK/embed/src" "$WORK/bare/src"
cat > "$WORK/embed/Cargo.toml" <<EOF
[package]
name = "embed"
version = "0.1.0"
edition = "2024"

[dependencies]
assetlib = { path = "$ROOT", default-features = false, features = ["axum", "sled"] }
axum = "0.8"
tokio = { version = "1", features = ["full"] }

[workspace]
EOF
# The README's example, less the line that only matters inside this package.
grep -v 'unused_crate_dependencies' examples/embed_axum.rs > "$WORK/embed/src/main.rs"

cat > "$WORK/bare/Cargo.toml" <<'EOF'
[package]
name = "bare"
version = "0.1.0"
edition = "2024"

[dependencies]
axum = "0.8"
sled = "0.34"
tokio = { version = "1", features = ["full"] }

[workspace]
EOF
cat > "$WORK/bare/src/main.rs" <<'EOF'
use axum::extract::{Path, State};
use axum::routing::get;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = sled::open("data/db")?;
    let app = axum::Router::new()
        .route("/", get(|| async { "my site" }))
        .route(
            "/items/{key}",
            get(|State(db): State<sled::Db>, Path(key): Path<String>| async move {
                let seen = db.get(&key).ok().flatten().map_or(0, |v| v.len());
                let _ = db.insert(key.as_bytes(), b"seen".to_vec());
                format!("{seen}")
            }),
        )
        .with_state(db);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    axum::serve(listener, app).await?;
    Ok(())
}
EOF

for app in embed bare; do
    (cd "$WORK/$app" && cargo generate-lockfile --quiet)
done
# The recipe's choice of idna's Unicode backend (README, "Embed it in an axum app").
(cd "$WORK/embed" && cargo update --quiet -p idna_adapter --precise 1.1.0)
for app in embed bare; do
    (cd "$WORK/$app" && cargo fetch --quiet)
done

count() {
    (cd "$WORK/$1" && cargo tree --quiet -e normal --prefix none) |
        sed 's/ (\*)//; s/ (proc-macro)//; s/ (.*)$//' | grep -v '^assetlib' | grep -v "^$1 " |
        sort -u | wc -l
}

# --- clean debug builds, alternating -----------------------------------------------------
declare -A TIMES
for round in $(seq "$ROUNDS"); do
    for app in embed bare; do
        rm -rf "$WORK/$app/target"
        start=$(date +%s.%N)
        (cd "$WORK/$app" && cargo build --quiet)
        end=$(date +%s.%N)
        t=$(echo "$end - $start" | bc)
        TIMES[$app]+="$t "
        say "round $round: $app built clean in ${t}s"
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
EMBED=$(echo "${TIMES[embed]}" | median)
BARE=$(echo "${TIMES[bare]}" | median)
printf '\n| app | crates | clean debug builds (s) | median (s) |\n|---|---|---|---|\n'
printf '| embed (assetlib axum,sled) | %s | %s| %.1f |\n' "$(count embed)" "${TIMES[embed]}" "$EMBED"
printf '| bare (axum + sled) | %s | %s| %.1f |\n' "$(count bare)" "${TIMES[bare]}" "$BARE"
printf '\nembed / bare: %.2fx (at most 3x asked)\n' "$(echo "$EMBED / $BARE" | bc -l)"
printf 'machine: %s cores, %s; rustc %s; commit %s\n' "$(nproc)" \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" \
    "$(rustc --version | cut -d' ' -f2)" "$(git -C "$ROOT" rev-parse --short HEAD)"
