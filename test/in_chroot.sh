#!/usr/bin/env bash
# Runs a command inside a chroot made by test/chroot.sh, with /proc, /sys
# and /dev (with /dev/shm and /dev/pts, which PostgreSQL and apt need)
# mounted.  The mounts are made in a mount namespace of the command's own,
# so they vanish when it ends and never show on the host.
#
# Run as root.  Usage: bash test/in_chroot.sh ROOT COMMAND [ARG...]
set -euo pipefail

root=${1:?usage: test/in_chroot.sh ROOT COMMAND [ARG...]}
shift

exec unshare --mount --propagation private -- bash -c '
	root=$1
	shift
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys"
	mount --rbind /dev "$root/dev"
	exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		CI="${CI:-}" PGVER="${PGVER:-}" CHAOS_SECONDS="${CHAOS_SECONDS:-}" CHAOS_ARGS="${CHAOS_ARGS:-}" QUEUE_TAP="${QUEUE_TAP:-}" "$@"
' queue-chroot "$root" "$@"
