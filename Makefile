# queue: visibility-timeout message queues inside PostgreSQL (PGXS build)

EXTENSION = queue
MODULE_big = queue
OBJS = \
	src/queue.o \
	src/arguments.o \
	src/storage.o \
	src/plans.o \
	src/catalog.o \
	src/permissions.o \
	src/counters.o \
	src/shared_counters.o \
	src/receipts.o \
	src/poison.o \
	src/wait.o \
	src/snapshot.o \
	src/admin.o \
	src/stats.o \
	src/put.o \
	src/get.o \
	src/messages_table.o \
	src/messages_indexes.o \
	src/claim.o \
	src/claim_start.o \
	src/update.o \
	src/delete.o \
	src/batch.o \
	src/maintain.o \
	src/launcher.o \
	src/worker.o \
	src/vacuum.o \
	src/registry.o \
	src/shmem.o \
	src/utility.o \
	src/session_leases.o
# the install script of every version, and the upgrade scripts between them
DATA = $(wildcard sql/queue--*.sql)

# Tests the PGXS way: "make installcheck" runs them against the running
# server PGHOST/PGPORT name, which must have queue in
# shared_preload_libraries and queue.enable_worker = off (test/queue.conf:
# a sweep between two statements would change what a test shows), as a
# role that may create databases.  The TAP tests start servers of their own.
REGRESS = $(shell sed -n 's/^test: //p' test/regress_schedule)
REGRESS_OPTS = --inputdir=test --outputdir=test --load-extension=queue
ISOLATION = $(patsubst test/isolation/specs/%.spec,%,$(wildcard test/isolation/specs/*.spec))
ISOLATION_OPTS = --inputdir=test/isolation --outputdir=test/isolation --load-extension=queue
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl
EXTRA_CLEAN = test/results test/regression.diffs test/regression.out \
	test/isolation/results test/isolation/regression.diffs test/isolation/regression.out \
	test/tmp_check

PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-missing-field-initializers -Wno-sign-compare

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS does not track header dependencies: every object depends on queue.h.
$(OBJS): src/queue.h

# The PGXN release zip, from the committed tree: queue-<version>.zip
DISTVERSION = $(shell sed -n 's/^   "version": "\(.*\)",$$/\1/p' META.json)
dist:
	git archive --format zip --prefix=queue-$(DISTVERSION)/ -o queue-$(DISTVERSION).zip HEAD
.PHONY: dist
