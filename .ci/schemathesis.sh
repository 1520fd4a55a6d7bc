#!/usr/bin/env bash
# Schemathesis against the ready servers: each one (axum, then warp) is started with --demo on
# a free port of 127.0.0.1 over a fresh temporary data directory, and schemathesis tests it from
# the repository's openapi.json with the key with every scope that the server prints on its
# first start. Any failure fails the script (and CI).
#
#   bash .ci/schemathesis.sh                       # builds and tests both ready servers
#   bash .ci/schemathesis.sh NAME=PATH ...         # tests these server binaries instead
#
# Each binary must take `serve --demo --data DIR --addr HOST:PORT`. SCHEMATHESIS_MAX_TIME and
# SCHEMATHESIS_MAX_EXAMPLES change the bounds of each run.
#
# Checks (set in .ci/schemathesis.toml): all of them but `positive_data_acceptance`, which
# expects every request the schemas allow to succeed. This API validates what no schema can state: a library entry's asset must
# exist (and be of a type libraries hold), an uploaded file must be of the type the asset
# declares, a `file_path` must name a file in the server's file store, an external video must
# be on a known host. Generated requests that break those rules are rightly answered 400, and
# that check would fail on them. Every other check runs: no 5xx, documented statuses, content
# types, headers and response schemas, invalid data rejected, 405 with `Allow` for other
# methods, deleted resources gone (but a revoked pass, whose record stays readable; see the
# toml), created ones there, and keys enforced.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

version=4.32.5
venv=target/tools/schemathesis
max_time=${SCHEMATHESIS_MAX_TIME:-100}
max_examples=${SCHEMATHESIS_MAX_EXAMPLES:-25}

# Schemathesis, pinned, from PyPI, in its own venv under target/.
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$version"; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$version"
fi

if [ $# -eq 0 ]; then
  # As the HTTP suite builds them (tests/http/ready_server.rs): after the tests, nothing to
  # rebuild.
  cargo build --quiet --workspace --all-features --example server --example warp_server
  set -- axum=target/debug/examples/server warp=target/debug/examples/warp_server
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until `url` answers at all (any status), for at most 60 s.
wait_for() {
  python3 - "$1" <<'EOF'
import sys, time, urllib.error, urllib.request
deadline = time.monotonic() + 60
while True:
    try:
        urllib.request.urlopen(sys.argv[1], timeout=2)
        sys.exit(0)
    except urllib.error.HTTPError:
        sys.exit(0)
    except OSError:
        if time.monotonic() > deadline:
            sys.exit(1)
        time.sleep(0.2)
EOF
}

server_pid=
work=
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  fi
  if [ -n "$work" ]; then
    rm -rf "$work"
    work=
  fi
}
trap cleanup EXIT

failed=0
for named in "$@"; do
  name=${named%%=*}
  binary=$root/${named#*=}
  case "${named#*=}" in /*) binary=${named#*=} ;; esac
  work=$(mktemp -d "${TMPDIR:-/tmp}/assetlib-schemathesis.XXXXXX")
  port=$(free_port)
  echo "== schemathesis: $name server ($binary) on 127.0.0.1:$port"
  # Webhooks: any URL is taken without resolving its host (--webhook-allow-private), and no
  # delivery is sent (--webhook-workers 0), so the URLs schemathesis makes up never lead the
  # server off 127.0.0.1; for the same reason the test delivery (testWebhook, which sends at
  # once) is left out. tests/http/webhooks.rs covers what this leaves out.
  RUST_LOG=warn "$binary" serve --demo --data "$work/data" --addr "127.0.0.1:$port" \
    --webhook-allow-private --webhook-workers 0 \
    >"$work/stdout" 2>"$work/stderr" &
  server_pid=$!
  if ! wait_for "http://127.0.0.1:$port/api/v1/openapi.json"; then
    echo "the $name server did not start:" >&2
    cat "$work/stderr" >&2
    exit 1
  fi
  key=$(grep -o 'alk_[A-Za-z0-9_-]\{43\}' "$work/stdout" | head -n 1 || true)
  if [ -z "$key" ]; then
    echo "the $name server printed no key:" >&2
    cat "$work/stdout" >&2
    exit 1
  fi
  # Run from the temporary directory: schemathesis keeps its reports and caches there. One
  # worker: CPython 3.11's AST validator can fail with "AST constructor recursion depth
  # mismatch" when several threads compile at once (python/cpython#106905), a crash of the
  # tool, not a finding.
  # The hooks (.ci/schemathesis_hooks.py) draw the raw bodies of tus requests.
  if ! (cd "$work" && PYTHONPATH="$root/.ci" SCHEMATHESIS_HOOKS=schemathesis_hooks \
    "$root/$venv/bin/schemathesis" --config-file "$root/.ci/schemathesis.toml" \
    run "$root/openapi.json" \
    --url "http://127.0.0.1:$port" \
    --header "Authorization: Bearer $key" \
    --max-examples "$max_examples" --max-time "$max_time" \
    --exclude-operation-id testWebhook \
    --workers 1 --generation-database none --no-color); then
    echo "schemathesis found failures on the $name server; its log ends:" >&2
    tail -n 40 "$work/stderr" >&2
    failed=1
  fi
  cleanup
done
exit "$failed"
