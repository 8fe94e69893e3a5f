#!/usr/bin/env bash
# The main job: starts a throwaway PostgreSQL with the queue extension
# preloaded (in demo/cluster, git-ignored), runs demo/demo.sql against it,
# and stops it again.  A producer and a consumer go through put, a delayed
# put, get, update (extend and release), delete, a stale receipt refused, a
# message reaching <queue>-poison, and a message expiring.
#
# Afterwards it offers to start the web dashboard (dashboard/) on the demo's
# server, with redrive allowed, and the gateway (gateway/): SQS with a key
# made for the run (docs/sqs.md), Azure Queue Storage with the storage
# emulator's development account (docs/azure.md), until Ctrl-C; --dashboard
# and --gateway start them without asking, --no-dashboard and --no-gateway
# never ask.
#
# Needs root or sudo, once, to install what is missing (test/prepare.sh).
# Usage: bash demo/run.sh [--keep] [--dashboard | --no-dashboard] [--gateway | --no-gateway]
#	--keep leaves the server running
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

keep=no
dashboard=ask
gateway=ask
for arg in "$@"; do
	case $arg in
	--keep) keep=yes ;;
	--dashboard) dashboard=yes ;;
	--no-dashboard) dashboard=no ;;
	--gateway) gateway=yes ;;
	--no-gateway) gateway=no ;;
	*)
		echo "usage: bash demo/run.sh [--keep] [--dashboard | --no-dashboard] [--gateway | --no-gateway]" >&2
		exit 2
		;;
	esac
done

if [ "$(id -u)" -ne 0 ]; then
	exec sudo --preserve-env=PGVER bash "$0" "$@"
fi

pgver=$(bash "$repo/test/prepare.sh" | tail -n 1)
bindir=/usr/lib/postgresql/$pgver/bin

# PostgreSQL refuses to run as root: the server runs as the user who called
# sudo, else as queuetest.
user=queuetest
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
	user=$SUDO_USER
fi
as_user() {
	runuser -u "$user" -- env PATH="$bindir:/usr/bin:/bin" "$@"
}

cluster="$repo/demo/cluster"
if ! runuser -u "$user" -- test -x "$repo/demo"; then
	# the checkout is not reachable by $user (say, under /root)
	cluster=$(mktemp -d /tmp/queue-demo.XXXXXX)
	echo "note: $repo is not readable by $user; the demo server lives in $cluster"
fi
if [ -f "$cluster/data/postmaster.pid" ]; then
	as_user pg_ctl -D "$cluster/data" -m immediate stop >/dev/null 2>&1 || true
fi
rm -rf "$cluster"
mkdir -p "$cluster"
chown "$user" "$cluster"

as_user initdb -D "$cluster/data" -U postgres -A trust >/dev/null
cat >> "$cluster/data/postgresql.conf" <<CONF
shared_preload_libraries = 'queue'
listen_addresses = ''
unix_socket_directories = '$cluster'
CONF
as_user pg_ctl -D "$cluster/data" -l "$cluster/server.log" -w start >/dev/null

stop_server() {
	as_user pg_ctl -D "$cluster/data" -m fast -w stop >/dev/null
	rm -rf "$cluster"
}
if [ "$keep" = no ]; then
	trap stop_server EXIT
fi

echo "PostgreSQL $pgver with shared_preload_libraries = 'queue', socket in $cluster"
as_user psql -h "$cluster" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 \
	< "$repo/demo/demo.sql"

# ask WHAT QUESTION: WHAT when given; else yes when a terminal answers yes
# (the question goes to stderr, which read -p writes to)
interactive=no
[ -t 0 ] && [ -t 1 ] && interactive=yes
ask() {
	local what=$1 question=$2 answer=
	if [ "$what" != ask ]; then
		echo "$what"
		return
	fi
	[ "$interactive" = yes ] && read -r -p "$question [y/N] " answer
	case $answer in [yY]*) echo yes ;; *) echo no ;; esac
}
dashboard=$(ask "$dashboard" "Start the web dashboard on this server (http://127.0.0.1:8080, Ctrl-C stops it)?")
gateway=$(ask "$gateway" "Start the gateway on this server (SQS on http://127.0.0.1:9324, Azure Queue Storage on :10001; Ctrl-C stops it)?")

# The apps run as the server's user, from a copy that user can install into.
app=
if [ "$dashboard" = yes ] || [ "$gateway" = yes ]; then
	app=$(mktemp -d /tmp/queue-apps-demo.XXXXXX)
	tar -C "$repo" --exclude=node_modules --exclude=package-lock.json -cf - dashboard gateway clients/node |
		tar -C "$app" -xf -
	chown -R "$user" "$app"
	dsn="postgresql://postgres@$(printf %s "$cluster" | sed 's|/|%2F|g')/postgres"
fi

# The gateway in the background, with an access key made for this run that
# maps to the role postgres, and on Azurite's queue port the storage
# emulator's well-known development account and its published key, so that
# the Azure SDKs' "UseDevelopmentStorage=true" finds it.  The demo alone
# configures that account: its key is public.
devstore_key=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==
if [ "$gateway" = yes ]; then
	secret=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
	cat > "$app/gateway.json" <<JSON
{"database": "$dsn", "host": "127.0.0.1", "port": 9324,
 "receiptSecret": "$(head -c 32 /dev/urandom | base64)",
 "credentials": [{"accessKeyId": "DEMOKEY", "secretAccessKey": "$secret", "role": "postgres"}],
 "azurePort": 10001,
 "azureAccounts": [{"name": "devstoreaccount1", "key": "$devstore_key", "role": "postgres"}]}
JSON
	chown "$user" "$app/gateway.json"
	as_user env HOME="$app" bash "$app/gateway/run.sh" --config "$app/gateway.json" &
	gateway_pid=$!
	echo "gateway: http://127.0.0.1:9324; try it:"
	echo "  AWS_ACCESS_KEY_ID=DEMOKEY AWS_SECRET_ACCESS_KEY=$secret aws --region us-east-1 --endpoint-url http://127.0.0.1:9324 sqs list-queues"
	echo "gateway: Azure Queue Storage, for the Azure SDKs and Azure Functions (docs/azure.md):"
	echo "  UseDevelopmentStorage=true, or QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1 with its key"
fi
if [ "$dashboard" = yes ]; then
	echo "dashboard: http://127.0.0.1:8080 (redrive allowed; Ctrl-C stops it and the server)"
	as_user env HOME="$app" bash "$app/dashboard/run.sh" "$dsn" --port 8080 --allow-writes || true
elif [ "$gateway" = yes ]; then
	echo "(Ctrl-C stops the gateway and the server)"
	wait "$gateway_pid" || true
fi
if [ "$gateway" = yes ]; then
	kill "$gateway_pid" 2>/dev/null || true
fi
if [ -n "$app" ]; then
	rm -rf "$app"
fi

if [ "$keep" = yes ]; then
	echo "server left running: psql -h $cluster -U postgres"
fi
