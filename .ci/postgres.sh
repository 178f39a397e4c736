#!/usr/bin/env bash
# A private PostgreSQL 15 cluster for the integration tests: Debian's
# postgresql-15, initdb into a directory of your choosing, run as a non-root
# user, listening on 127.0.0.1 only, password (SCRAM) authentication.
#
#   .ci/postgres.sh start DIR PORT   install postgresql-15 if missing, create the
#                                    cluster in DIR/data (first run only), start it
#                                    on 127.0.0.1:PORT, create the database and
#                                    roles, and print the export lines:
#                                      eval "$(.ci/postgres.sh start /tmp/ahpg 55432)"
#   .ci/postgres.sh env DIR          print the export lines again
#   .ci/postgres.sh stop DIR         stop the cluster (nothing to do if it is not running)
#
# Every step is idempotent: start on a running cluster re-applies the roles and
# grants and prints the exports (restarting it when PORT changed).
#
# What it creates, in database arrowhead_test:
#   postgres       superuser (ARROWHEAD_TEST_POSTGRES_DSN), for fixtures
#   arrowhead_ro   LOGIN, default_transaction_read_only = on, SET on
#                  temp_file_limit (sql_query bounds its temporary files), CONNECT on the
#                  database, USAGE + SELECT on schema "fixture" only, including
#                  tables the superuser creates there later
#                  (ARROWHEAD_TEST_POSTGRES_RO_DSN)
#   fixture.items  a three-row table the read-only role can read
#
# Run as root, the server runs as the system user arrowheadpg (created if
# missing), and DIR and its parents must be traversable by that user (so not
# under a mode-700 directory). Run as another user, the server runs as that
# user and postgresql-15 must already be installed. DIR must be an absolute or
# relative path of [A-Za-z0-9/._-] characters; the server's unix socket lives
# in DIR/data, so keep DIR short (a socket path is at most 107 bytes).
# Passwords are generated once and kept in DIR/credentials (mode 600).
set -euo pipefail

PG_VERSION=15
PG_BIN=/usr/lib/postgresql/$PG_VERSION/bin
PG_OS_USER=arrowheadpg
SUPERUSER=postgres
RO_ROLE=arrowhead_ro
DB=arrowhead_test

log() { echo "postgres.sh: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

usage() {
	echo "usage: $0 start DIR PORT | env DIR | stop DIR" >&2
	exit 2
}

is_root() { [ "$(id -u)" -eq 0 ]; }

# as_pg runs a command as the user that owns the cluster.
as_pg() {
	if is_root; then
		runuser -u "$PG_OS_USER" -- "$@"
	else
		"$@"
	fi
}

abs_dir() {
	local d=$1
	case $d in
	*[!A-Za-z0-9/._-]*) die "DIR may contain only A-Z a-z 0-9 / . _ - characters" ;;
	"") usage ;;
	esac
	case $d in
	/*) ;;
	*) d="$PWD/$d" ;;
	esac
	echo "${d%/}"
}

check_port() {
	case $1 in
	'' | *[!0-9]*) die "PORT must be a number" ;;
	esac
	if [ "$1" -lt 1024 ] || [ "$1" -gt 65535 ]; then
		die "PORT must be between 1024 and 65535"
	fi
}

install_pg() {
	if [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ] && [ -x "$PG_BIN/psql" ]; then
		return
	fi
	is_root || die "postgresql-$PG_VERSION is not installed and installing it needs root (apt-get install postgresql-$PG_VERSION)"
	log "installing postgresql-$PG_VERSION"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends "postgresql-$PG_VERSION" >/dev/null
	# The package creates a system cluster and may start it; this script
	# uses its own, so stop the one that came with the install.
	if command -v pg_ctlcluster >/dev/null && pg_lsclusters -h 2>/dev/null | grep -q "^$PG_VERSION main .* online"; then
		pg_ctlcluster "$PG_VERSION" main stop || true
	fi
}

ensure_os_user() {
	is_root || return 0
	if ! id -u "$PG_OS_USER" >/dev/null 2>&1; then
		log "creating system user $PG_OS_USER"
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$PG_OS_USER"
	fi
}

# load_credentials sets SU_PW and RO_PW, generating them on first use.
load_credentials() {
	local dir=$1 f=$1/credentials
	if [ ! -f "$f" ]; then
		(
			umask 077
			printf 'SU_PW=%s\nRO_PW=%s\n' \
				"$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" \
				"$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >"$f"
		)
	fi
	# shellcheck disable=SC1090
	. "$f"
	if [ -z "${SU_PW:-}" ] || [ -z "${RO_PW:-}" ]; then
		die "$f is incomplete; remove it together with $dir/data"
	fi
}

running() { [ -f "$1/data/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" status -D "$1/data" >/dev/null 2>&1; }

running_port() { sed -n 4p "$1/data/postmaster.pid" 2>/dev/null || true; }

init_cluster() {
	local dir=$1
	[ -f "$dir/data/PG_VERSION" ] && return
	log "initdb into $dir/data"
	local pwfile=$dir/.pwfile
	(
		umask 077
		printf '%s\n' "$SU_PW" >"$pwfile"
	)
	if is_root; then
		chown "$PG_OS_USER:" "$pwfile"
	fi
	if ! as_pg "$PG_BIN/initdb" -D "$dir/data" -U "$SUPERUSER" --pwfile="$pwfile" \
		--auth=scram-sha-256 -E UTF8 --locale=C --no-instructions >"$dir/initdb.log" 2>&1; then
		rm -f "$pwfile"
		cat "$dir/initdb.log" >&2
		die "initdb failed"
	fi
	rm -f "$pwfile"
	cat >>"$dir/data/postgresql.conf" <<EOF

# --- arrowhead test cluster (.ci/postgres.sh) ---
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir/data'
max_connections = 50
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
EOF
}

start_server() {
	local dir=$1 port=$2
	if running "$dir"; then
		if [ "$(running_port "$dir")" = "$port" ]; then
			return
		fi
		log "restarting on port $port"
		as_pg "$PG_BIN/pg_ctl" stop -D "$dir/data" -m fast -w -t 60 -s
	fi
	log "starting on 127.0.0.1:$port"
	if ! as_pg "$PG_BIN/pg_ctl" start -D "$dir/data" -l "$dir/postgres.log" -w -t 60 -s \
		-o "-p $port -c listen_addresses=127.0.0.1 -k $dir/data"; then
		tail -n 30 "$dir/postgres.log" >&2 || true
		die "the server did not start"
	fi
}

psql_su() {
	local port=$1 db=$2
	shift 2
	PGPASSWORD=$SU_PW PGCONNECT_TIMEOUT=10 PGOPTIONS='-c client_min_messages=warning' "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 \
		-h 127.0.0.1 -p "$port" -U "$SUPERUSER" -d "$db" "$@"
}

bootstrap() {
	local port=$1
	psql_su "$port" postgres -v ro_pw="$RO_PW" >/dev/null <<SQL
SELECT 'CREATE DATABASE $DB' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DB') \gexec
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$RO_ROLE') THEN
    CREATE ROLE $RO_ROLE;
  END IF;
END
\$\$;
ALTER ROLE $RO_ROLE WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT PASSWORD :'ro_pw';
ALTER ROLE $RO_ROLE SET default_transaction_read_only = on;
GRANT SET ON PARAMETER temp_file_limit TO $RO_ROLE;
SQL
	psql_su "$port" "$DB" >/dev/null <<SQL
REVOKE ALL ON DATABASE $DB FROM PUBLIC;
GRANT CONNECT ON DATABASE $DB TO $RO_ROLE;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
CREATE SCHEMA IF NOT EXISTS fixture;
REVOKE ALL ON SCHEMA fixture FROM PUBLIC;
GRANT USAGE ON SCHEMA fixture TO $RO_ROLE;
ALTER DEFAULT PRIVILEGES FOR ROLE $SUPERUSER IN SCHEMA fixture GRANT SELECT ON TABLES TO $RO_ROLE;
CREATE TABLE IF NOT EXISTS fixture.items (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO fixture.items VALUES (1, 'alpha'), (2, 'beta'), (3, 'gamma') ON CONFLICT (id) DO NOTHING;
GRANT SELECT ON ALL TABLES IN SCHEMA fixture TO $RO_ROLE;
SQL
}

print_env() {
	local dir=$1 port
	[ -f "$dir/port" ] || die "no cluster was started in $dir"
	port=$(cat "$dir/port")
	load_credentials "$dir"
	echo "export ARROWHEAD_TEST_POSTGRES_DSN='postgres://$SUPERUSER:$SU_PW@127.0.0.1:$port/$DB?sslmode=disable'"
	echo "export ARROWHEAD_TEST_POSTGRES_RO_DSN='postgres://$RO_ROLE:$RO_PW@127.0.0.1:$port/$DB?sslmode=disable'"
}

cmd_start() {
	[ $# -eq 2 ] || usage
	local dir port
	dir=$(abs_dir "$1")
	port=$2
	check_port "$port"
	install_pg
	ensure_os_user
	mkdir -p "$dir"
	chmod 700 "$dir"
	if is_root; then
		chown "$PG_OS_USER:" "$dir"
		as_pg test -w "$dir" || die "$PG_OS_USER cannot reach $dir; choose a directory whose parents are traversable (for example /tmp/ahpg)"
	fi
	load_credentials "$dir"
	init_cluster "$dir"
	start_server "$dir" "$port"
	echo "$port" >"$dir/port"
	bootstrap "$port"
	log "ready on 127.0.0.1:$port (stop with: $0 stop $dir)"
	print_env "$dir"
}

cmd_stop() {
	[ $# -eq 1 ] || usage
	local dir
	dir=$(abs_dir "$1")
	if [ ! -d "$dir/data" ]; then
		log "no cluster in $dir"
		return
	fi
	if running "$dir"; then
		as_pg "$PG_BIN/pg_ctl" stop -D "$dir/data" -m fast -w -t 60 -s
		log "stopped"
	else
		log "not running"
	fi
}

main() {
	[ $# -ge 1 ] || usage
	local cmd=$1
	shift
	case $cmd in
	start) cmd_start "$@" ;;
	stop) cmd_stop "$@" ;;
	env)
		[ $# -eq 1 ] || usage
		print_env "$(abs_dir "$1")"
		;;
	*) usage ;;
	esac
}

main "$@"
