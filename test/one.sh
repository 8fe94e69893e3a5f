#!/usr/bin/env bash
# Runs one test, as the user who calls it (no root, no sudo), against a
# throwaway server it starts and stops:
#	bash test/one.sh regress queue_put                one file of sql/
#	bash test/one.sh isolation deduplication_race     one spec of test/isolation/specs
#	bash test/one.sh tap test/t/013_upgrade.pl        one TAP file
#	bash test/one.sh pgtap test/pgtap/permissions.sql one pgTAP file
#	bash test/one.sh python test_client               one module of clients/python/tests
#	bash test/one.sh node clients/node/test/client.test.js
# PGVER picks the PostgreSQL version where several are installed (default:
# the newest).  The extension is built in the checkout and installed, with
# a copy of the server's own files, into a temporary folder: nothing is
# installed on the machine.  Needs what test/prepare.sh installs (run
# "sudo bash test/prepare.sh" once).  Exits non-zero if the test failed;
# the work folder is kept then, and its path printed.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kind=${1:-}
target=${2:-}
if [ -z "$kind" ] || [ -z "$target" ]; then
	sed -n '2,9p' "$0" | sed 's/^#//' >&2
	exit 2
fi
if [ "$(id -u)" -eq 0 ]; then
	echo "test/one.sh runs as an ordinary user: PostgreSQL's initdb refuses root" >&2
	exit 2
fi

pgver=${PGVER:-$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1)}
pg_config=/usr/lib/postgresql/$pgver/bin/pg_config
if [ ! -x "$pg_config" ]; then
	echo "no PostgreSQL $pgver with its server dev package here: run sudo bash test/prepare.sh" >&2
	exit 2
fi

work=$(mktemp -d /tmp/queue-one.XXXXXX)
# The server's files, copied: PostgreSQL finds its share and lib folders
# from where its programs are, so the copy is an installation of its own.
root=$work/install
mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql"
cp -a "/usr/lib/postgresql/$pgver" "$root/usr/lib/postgresql/"
cp -a "/usr/share/postgresql/$pgver" "$root/usr/share/postgresql/"
bindir=$root/usr/lib/postgresql/$pgver/bin
pgxs=$root/usr/lib/postgresql/$pgver/lib/pgxs

# objects built for another major version must not be linked into this one
built_for="$repo/src/.built-for"
if [ "$(cat "$built_for" 2>/dev/null)" != "$pgver" ]; then
	make -s -C "$repo" PG_CONFIG="$pg_config" clean
fi
if ! make -s -C "$repo" PG_CONFIG="$pg_config" ||
	! make -s -C "$repo" PG_CONFIG="$pg_config" DESTDIR="$root" install; then
	echo "the build failed; work folder: $work" >&2
	exit 1
fi
echo "$pgver" > "$built_for"

cp -r "$repo/test" "$repo/sql" "$repo/expected" "$work/"
cd "$work" || exit 1
export PATH="$bindir:$PATH"

# start_server DATA PORT: a server loading the extension, on a socket in
# the work folder only
start_server() {
	initdb -D "$1" -A trust > "$work/initdb.log" 2>&1 || return 1
	printf "shared_preload_libraries = 'queue'\nlisten_addresses = ''\nunix_socket_directories = '%s'\nport = %s\n" \
		"$work" "$2" >> "$1/postgresql.conf"
	pg_ctl -D "$1" -l "$work/server.log" -w start > /dev/null
}

status=0
case $kind in
regress)
	# after sql/setup.sql, which makes the helpers every file uses
	"$pgxs/src/test/regress/pg_regress" --temp-instance="$work/tmp" \
		--temp-config=test/queue.conf --load-extension=queue --bindir="$bindir" \
		setup "$target" || status=1
	[ -f regression.diffs ] && cat regression.diffs
	;;
isolation)
	"$pgxs/src/test/isolation/pg_isolation_regress" --temp-instance="$work/tmp" \
		--temp-config=test/queue.conf --load-extension=queue --bindir="$bindir" \
		--inputdir=test/isolation --outputdir=test/isolation "$target" || status=1
	[ -f test/isolation/regression.diffs ] && cat test/isolation/regression.diffs
	;;
tap)
	env PERL5LIB="$pgxs/src/test/perl" TESTDIR="$work" \
		PG_REGRESS="$pgxs/src/test/regress/pg_regress" \
		prove -v "$target" || status=1
	;;
pgtap)
	start_server "$work/data" 55492 || status=1
	psql -h "$work" -p 55492 -d postgres -X -q \
		-c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION queue" || status=1
	pg_prove -v -h "$work" -p 55492 -d postgres "$target" || status=1
	pg_ctl -D "$work/data" -m fast -w stop > /dev/null
	;;
python | node)
	dsn="postgresql://$(id -un)@$(printf %s "$work" | sed 's|/|%2F|g'):55493/postgres"
	start_server "$work/data" 55493 || status=1
	psql "$dsn" -X -q -c "CREATE SCHEMA queue" -c "CREATE EXTENSION queue SCHEMA queue" || status=1
	export PGQUEUE_TEST_DSN=$dsn PGQUEUE_TEST_PGDATA=$work/data PGQUEUE_TEST_BINDIR=$bindir
	if [ "$kind" = python ]; then
		/usr/bin/python3 -m venv --system-site-packages "$work/venv" &&
			"$work/venv/bin/pip" install -q --no-build-isolation "$repo/clients/python" &&
			(cd "$work" && "$work/venv/bin/python" "$repo/clients/python/tests/run.py" "$target") || status=1
	else
		(cd "$repo/clients/node" && npm install --no-audit --no-fund --silent &&
			node --test "$repo/$target") || status=1
	fi
	pg_ctl -D "$work/data" -m fast -w stop > /dev/null
	;;
*)
	echo "test/one.sh: no kind \"$kind\" (regress, isolation, tap, pgtap, python, node)" >&2
	exit 2
	;;
esac

if [ "$status" -eq 0 ]; then
	rm -rf "$work"
else
	echo "failed; work folder kept: $work"
fi
exit "$status"
