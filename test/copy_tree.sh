#!/usr/bin/env bash
# Copies the source tree into DEST as a source package holds it: without
# git, the chroots' cache, build output, node_modules or test leftovers, so
# that a build there starts clean (test/run.sh, package.sh, pg_upgrade.sh).
# Usage: bash test/copy_tree.sh DEST
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=${1:?usage: test/copy_tree.sh DEST}

mkdir -p "$dest"
tar -C "$repo" --exclude=./.cache --exclude=./.git --exclude=./demo/cluster \
	--exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=node_modules \
	--exclude=./src/.built-for --exclude=./tmp_check \
	--exclude=__pycache__ --exclude='*.egg-info' --exclude=./clients/python/build -cf - . | tar -C "$dest" -xf -
