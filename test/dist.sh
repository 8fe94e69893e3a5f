#!/usr/bin/env bash
# The PGXN release: META.json checked against the PGXN meta specification
# (test/meta_check.py), "make dist" makes the zip from the committed tree,
# the zip holds exactly the committed files, and PGXN's own client
# (pgxnclient, Debian's package) builds and installs the extension from it.
#
# Run as root in a git checkout, by test/run.sh.  Prints TAP lines and ends
# with "N passed, N failed".
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pgver=${PGVER:-$(ls /usr/lib/postgresql | sort -n | tail -n 1)}
pg_config=/usr/lib/postgresql/$pgver/bin/pg_config
work=$(mktemp -d /tmp/queue-dist.XXXXXX)
passed=0
failed=0

result() {
	if [ "$1" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok $((passed + failed)) - $2"
	else
		failed=$((failed + 1))
		echo "not ok $((passed + failed)) - $2"
	fi
}

if ! command -v pgxn >/dev/null 2>&1 || ! command -v unzip >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		pgxnclient unzip > /dev/null
fi

# META.json: its own TAP lines, counted here
meta=$(python3 "$repo/test/meta_check.py" "$repo" 2>&1)
meta_status=$?
echo "$meta" | sed 's/^/# /'
result $((meta_status + $(echo "$meta" | grep -c '^not ok'))) \
	"META.json follows the PGXN meta specification ($(echo "$meta" | grep -c '^ok') checks)"

if [ ! -d "$repo/.git" ]; then
	echo "# not a git checkout: make dist needs one; the zip is not checked"
	result 1 "make dist"
else
	version=$(sed -n 's/^   "version": "\(.*\)",$/\1/p' "$repo/META.json")
	zip=$work/queue-$version.zip
	make -s -C "$repo" PG_CONFIG="$pg_config" dist > "$work/dist.log" 2>&1 &&
		mv "$repo/queue-$version.zip" "$zip"
	result $? "make dist makes queue-$version.zip"

	unzip -Z1 "$zip" | grep -v '/$' | sed "s|^queue-$version/||" | sort > "$work/zip.list"
	git -C "$repo" ls-tree -r --name-only HEAD | sort > "$work/git.list"
	diff "$work/git.list" "$work/zip.list" > "$work/list.diff"
	result $? "the zip holds exactly the committed files ($(wc -l < "$work/zip.list") files)"
	for file in LICENSE META.json queue.control Makefile; do
		grep -qx "$file" "$work/zip.list"
		result $? "the zip holds $file"
	done

	# PGXN's client unpacks, builds and installs it, as a PGXN user would
	(cd "$work" && pgxn install --yes --nosudo --pg_config "$pg_config" "./queue-$version.zip") \
		> "$work/pgxn.log" 2>&1
	result $? "pgxn install builds and installs the zip"
	sharedir=$($pg_config --sharedir)
	cmp -s "$repo/sql/queue--1.0--1.1.sql" "$sharedir/extension/queue--1.0--1.1.sql" &&
		[ -f "$($pg_config --pkglibdir)/queue.so" ]
	result $? "... into this PostgreSQL $pgver"
	[ "$failed" -eq 0 ] || tail -n 20 "$work/pgxn.log"
fi

rm -rf "$work"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
