# Helpers shared by the load runs (load.sh, site.sh): sourced, not run.
#
# Before sourcing, the script sets NO_PG (1: no PostgreSQL). Sourcing makes the work
# directory WORK, stops every process recorded in PIDS (and the PostgreSQL server, PG_PID)
# on exit, and finds PostgreSQL's binaries (PGBIN) unless NO_PG=1. start_postgres starts a
# server of the run's own and sets PG_ARGS, PGPORT, PG_SETTINGS.

PIDS=()
PG_PID=
WORK=$(mktemp -d "${TMPDIR:-/tmp}/assetlib-load.XXXXXX")
cleanup() {
    local pid i
    for pid in "${PIDS[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    # The postmaster is not our child (pg_ctl detaches it): a fast shutdown by its PID, and
    # wait until it is gone before the directory goes.
    if [[ -n "$PG_PID" ]] && kill -0 "$PG_PID" 2>/dev/null; then
        kill -INT "$PG_PID" 2>/dev/null || true
        for i in $(seq 1 300); do
            kill -0 "$PG_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$PG_PID" 2>/dev/null && kill -KILL "$PG_PID" 2>/dev/null || true
    fi
    if [[ "${KEEP:-0}" != 1 ]]; then rm -rf "$WORK"; else echo "work directory kept: $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '%s\n' "$*" >&2; }

# The directory holding initdb, pg_ctl and psql.
find_pg_bin() {
    local dir
    for dir in "${PG_BIN:-}" "${ASSETLIB_PG_BIN:-}"; do
        [[ -n "$dir" && -x "$dir/initdb" ]] && { echo "$dir"; return 0; }
    done
    if command -v initdb >/dev/null; then
        dir=$(dirname "$(readlink -f "$(command -v initdb)")")
        [[ -x "$dir/pg_ctl" && -x "$dir/psql" ]] && { echo "$dir"; return 0; }
    fi
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [[ -n "$dir" && -x "$dir/initdb" ]] && { echo "$dir"; return 0; }
    return 1
}
if [[ $NO_PG != 1 ]]; then
    if ! PGBIN=$(find_pg_bin); then
        say "PostgreSQL server binaries (initdb, pg_ctl) were not found: install them"
        say "(Debian/Ubuntu: apt-get install postgresql), set PG_BIN, or run with NO_PG=1."
        exit 1
    fi
fi

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
wait_port() { # PORT: waits for a server on it, at most 60 s (sled's recovery of a database
    # the create runs made large takes seconds)
    local port=$1 i
    for i in $(seq 1 600); do
        if curl -s -o /dev/null "http://127.0.0.1:$port/"; then return 0; fi
        sleep 0.1
    done
    say "server on port $port did not come up; its log:"; cat "$WORK"/*.log >&2; exit 1
}
# A port nobody listens on at 127.0.0.1, from 15432 up.
free_port() {
    local p
    for p in $(seq 15432 15532); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
    done
    say "no free port for PostgreSQL in 15432-15532"; exit 1
}

# wrk_figures TICKS: of wrk's --latency output on standard input, "req/s p50 p99 cpu" (p50
# and p99 in ms; cpu: TICKS, the server's clock ticks over the run, in microseconds an answer).
wrk_figures() {
    awk -v ticks="$1" -v hz="$(getconf CLK_TCK)" '
        function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
        /requests in/ { n = $1 }
        /Requests\/sec/ { rps = $2 }
        $1 == "50%" { p50 = ms($2) }
        $1 == "99%" { p99 = ms($2) }
        END { printf "%.0f %.2f %.2f %.1f\n", rps, p50, p99, (n > 0 ? ticks * 1e6 / hz / n : 0) }'
}

# cpu_ticks PID: the CPU time (user + system) process PID has used, in clock ticks.
cpu_ticks() {
    awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}


# --- PostgreSQL --------------------------------------------------------------------------
# start_postgres DATABASE: initdb into the work directory (as the `postgres` system user when
# run as root), listening on 127.0.0.1 only on a free port, fsync=on and synchronous_commit=on
# (commits are durable, as in production), 256 MB shared buffers; creates DATABASE and sets
# PG_ARGS (the server's --database-url), PGPORT and PG_SETTINGS.
start_postgres() {
    local database=$1
    PGDIR="$WORK/pg"
    mkdir -p "$PGDIR"
    AS_PG=()
    if [[ $(id -u) == 0 ]]; then
        # PostgreSQL refuses to run as root: its directory belongs to the postgres user, who
        # may pass through the work directory (not list it).
        chmod 711 "$WORK"
        chown postgres: "$PGDIR"
        AS_PG=(runuser -u postgres --)
    fi
    say "PostgreSQL: initdb in $PGDIR ($PGBIN) ..."
    "${AS_PG[@]}" "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres -E UTF8 \
        --locale=C.UTF-8 >"$WORK/initdb.log" 2>&1 ||
        "${AS_PG[@]}" "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres -E UTF8 \
            --no-locale >"$WORK/initdb.log" 2>&1 ||
        { say "initdb failed:"; cat "$WORK/initdb.log" >&2; exit 1; }
    PGPORT=$(free_port)
    PG_OPTS="-c listen_addresses=127.0.0.1 -p $PGPORT -k $PGDIR -c fsync=on"
    PG_OPTS+=" -c synchronous_commit=on -c full_page_writes=on -c shared_buffers=256MB"
    PG_OPTS+=" -c max_connections=100"
    "${AS_PG[@]}" "$PGBIN/pg_ctl" start -w -t 60 -D "$PGDIR/data" -l "$PGDIR/server.log" \
        -o "$PG_OPTS" >/dev/null ||
        { say "PostgreSQL did not start; its log:"; cat "$PGDIR/server.log" >&2; exit 1; }
    PG_PID=$(head -n 1 "$PGDIR/data/postmaster.pid")
    "$PGBIN/psql" -q -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres \
        -c "CREATE DATABASE $database" >/dev/null
    PG_ARGS=(--database-url "postgres://postgres@127.0.0.1:$PGPORT/$database")
    PG_SETTINGS=$("$PGBIN/psql" -At -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres -c \
        "SELECT 'PostgreSQL ' || current_setting('server_version') || ', fsync=' || current_setting('fsync') || ', synchronous_commit=' || current_setting('synchronous_commit') || ', shared_buffers=' || current_setting('shared_buffers')")
    say "PostgreSQL PID $PG_PID on 127.0.0.1:$PGPORT: $PG_SETTINGS"
}

