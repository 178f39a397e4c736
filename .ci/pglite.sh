#!/usr/bin/env bash
# A PGlite socket server with pgvector for the pgvector integration tests and
# benchmarks: a real PostgreSQL (18, WASM build) with the real pgvector
# extension (0.8), reachable over the wire, on machines without Docker or a
# pgvector package. Runs on Node 20.
#
#   .ci/pglite.sh start DIR [PORT]   install @electric-sql/pglite-socket (cached),
#                                    start the server on 127.0.0.1:PORT (default
#                                    54329) with its PID and log in DIR, wait until
#                                    it listens, and print the export line:
#                                      eval "$(.ci/pglite.sh start /tmp/ahpglite 54329)"
#   .ci/pglite.sh env DIR            print the export line again
#   .ci/pglite.sh stop DIR           stop the server (nothing to do if it is not running)
#
# The data lives in memory: every start is an empty database. Starting a
# server that is already running on the same port only prints the export.
#
# What clients must know (pglite-socket 0.2.17, PGlite 0.5, PostgreSQL 18,
# pgvector 0.8.7), all seen here:
#   - PGlite has ONE backend and the server admits one connection at a time;
#     a second is refused. Use a pool of one connection, shared.
#   - The backend outlives connections: named prepared statements and SET
#     values stay for the next client. Use unnamed statements (pgx
#     QueryExecModeCacheDescribe or DescribeExec) and RESET what you SET.
#   - A client that connects while the previous one is still leaving is
#     refused, and pgx then sends a cancel request on a fresh connection,
#     which PGlite holds open (it cannot parse it) for pgx's 15-second
#     timeout. Keep one connection for a whole test binary; test binaries
#     that share the server wait for its slot (go test -p 1 avoids the wait).
#   - COPY FROM STDIN does not work ("protocol synchronization was lost").
#
# Environment:
#   ARROWHEAD_PGLITE_CACHE          npm install directory, kept between runs
#                                   (default: ${XDG_CACHE_HOME:-$HOME/.cache}/arrowhead/pglite-$VERSION)
#   ARROWHEAD_PGLITE_START_TIMEOUT  seconds to wait for the server to listen (default: 120)
set -euo pipefail

readonly VERSION="0.2.17"
readonly PACKAGE="@electric-sql/pglite-socket@${VERSION}"
readonly DEFAULT_PORT=54329
readonly DSN_VAR=ARROWHEAD_TEST_PGVECTOR_DSN

cache_dir="${ARROWHEAD_PGLITE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arrowhead/pglite-${VERSION}}"
start_timeout="${ARROWHEAD_PGLITE_START_TIMEOUT:-120}"

die() {
	echo "pglite.sh: $*" >&2
	exit 1
}

usage() {
	sed -n '7,13p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

check_dir() {
	[[ -n "$1" && "$1" =~ ^[A-Za-z0-9/._-]+$ ]] || die "DIR must be a path of [A-Za-z0-9/._-] characters"
}

check_port() {
	if ! [[ "$1" =~ ^[0-9]+$ ]] || (("$1" < 1 || "$1" > 65535)); then
		die "PORT must be a number between 1 and 65535"
	fi
}

server_js() { echo "${cache_dir}/node_modules/@electric-sql/pglite-socket/dist/scripts/server.js"; }

# export_line prints the DSN export for the server in DIR. PGlite accepts
# any password; the user and database must be postgres.
export_line() {
	local port
	port="$(cat "$1/pglite.port")"
	echo "export ${DSN_VAR}='postgres://postgres:postgres@127.0.0.1:${port}/postgres?sslmode=disable'"
}

# running DIR prints the PID of the server started in DIR if it is alive. A
# PID file whose process is gone, or now belongs to something else, is stale.
running() {
	local pid
	[[ -f "$1/pglite.pid" ]] || return 1
	pid="$(cat "$1/pglite.pid")"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	[[ -r "/proc/${pid}/cmdline" ]] || return 1
	tr '\0' ' ' <"/proc/${pid}/cmdline" | grep -q "pglite-socket/dist/scripts/server.js" || return 1
	echo "$pid"
}

install() {
	if [[ -f "$(server_js)" ]] && grep -q "\"version\": \"${VERSION}\"" "${cache_dir}/node_modules/@electric-sql/pglite-socket/package.json"; then
		return 0
	fi
	command -v npm >/dev/null || die "npm is not on PATH (Node 20 is required)"
	mkdir -p "$cache_dir"
	[[ -f "${cache_dir}/package.json" ]] || echo '{"private": true}' >"${cache_dir}/package.json"
	echo "pglite.sh: installing ${PACKAGE} into ${cache_dir}" >&2
	npm install --prefix "$cache_dir" --no-audit --no-fund --silent "$PACKAGE" >&2 ||
		die "npm install ${PACKAGE} failed"
	[[ -f "$(server_js)" ]] || die "npm install finished but server.js is missing"
}

start() {
	local dir="$1" port="$2" pid log deadline
	check_dir "$dir"
	check_port "$port"
	mkdir -p "$dir"
	if pid="$(running "$dir")"; then
		if [[ "$(cat "$dir/pglite.port" 2>/dev/null)" == "$port" ]]; then
			echo "pglite.sh: already running on port ${port} (pid ${pid})" >&2
			export_line "$dir"
			return 0
		fi
		stop "$dir"
	fi
	install
	log="$dir/pglite.log"
	: >"$log"
	rm -f "$dir/pglite.pid"
	echo "$port" >"$dir/pglite.port"
	# setsid detaches the server from the caller's process group and
	# terminal so it outlives this script; stop ends it by its PID. The PID
	# is written by the process that then becomes node (setsid may fork
	# first, so $! would not be it).
	(
		cd "$cache_dir"
		# shellcheck disable=SC2016 # $$ and $@ belong to the inner shell
		exec setsid bash -c 'echo $$ >"$1"; shift; exec node "$@"' _ "$dir/pglite.pid" \
			"$(server_js)" -p "$port" -h 127.0.0.1 -e @electric-sql/pglite-pgvector:vector \
			</dev/null >>"$log" 2>&1
	) &
	deadline=$((SECONDS + 10))
	until [[ -s "$dir/pglite.pid" ]]; do
		((SECONDS < deadline)) || die "the server process did not start"
		sleep 0.05
	done
	pid="$(cat "$dir/pglite.pid")"

	# Ready means the server logged that it listens (it initialises the
	# database and loads the extension first). A TCP probe would take the
	# single connection slot, so the log is the signal.
	deadline=$((SECONDS + start_timeout))
	until grep -q "PGLiteSocketServer listening" "$log"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			rm -f "$dir/pglite.pid"
			echo "pglite.sh: the server exited during start; log:" >&2
			cat "$log" >&2
			exit 1
		fi
		if ((SECONDS >= deadline)); then
			kill "$pid" 2>/dev/null || true
			rm -f "$dir/pglite.pid"
			echo "pglite.sh: the server did not listen within ${start_timeout}s; log:" >&2
			cat "$log" >&2
			exit 1
		fi
		sleep 0.2
	done
	echo "pglite.sh: listening on 127.0.0.1:${port} (pid ${pid}, log ${log})" >&2
	export_line "$dir"
}

stop() {
	local dir="$1" pid
	check_dir "$dir"
	if ! pid="$(running "$dir")"; then
		rm -f "$dir/pglite.pid"
		echo "pglite.sh: not running" >&2
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/pglite.pid"
	echo "pglite.sh: stopped pid ${pid}" >&2
}

case "${1:-}" in
start)
	[[ $# -ge 2 ]] || usage
	start "$2" "${3:-$DEFAULT_PORT}"
	;;
env)
	[[ $# -ge 2 ]] || usage
	check_dir "$2"
	running "$2" >/dev/null || die "no server is running from $2"
	export_line "$2"
	;;
stop)
	[[ $# -ge 2 ]] || usage
	stop "$2"
	;;
*) usage ;;
esac
