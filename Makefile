# queue: visibility-timeout message queues inside PostgreSQL (PGXS build)

EXTENSION = queue
MODULE_big = queue
OBJS = \
	src/queue.o \
	src/settings.o \
	src/arguments.o \
	src/durability.o \
	src/api/alter.o \
	src/api/clear.o \
	src/api/create.o \
	src/api/cron_next.o \
	src/api/delete.o \
	src/api/delete_and_get.o \
	src/api/drop.o \
	src/api/get.o \
	src/api/grant.o \
	src/api/inspect.o \
	src/api/list.o \
	src/api/maintain.o \
	src/api/metrics.o \
	src/api/pause.o \
	src/api/peek.o \
	src/api/publish.o \
	src/api/put.o \
	src/api/redrive.o \
	src/api/release.o \
	src/api/replay.o \
	src/api/schedule.o \
	src/api/schedules.o \
	src/api/stats.o \
	src/api/subscribe.o \
	src/api/topic_create.o \
	src/api/topic_drop.o \
	src/api/topics.o \
	src/api/update.o \
	src/counters/counts.o \
	src/counters/shared.o \
	src/counters/transaction.o \
	src/messages/by_receipt.o \
	src/messages/claim.o \
	src/messages/claim_starts.o \
	src/messages/deduplication.o \
	src/messages/groups.o \
	src/messages/id_locks.o \
	src/messages/indexes.o \
	src/messages/insert.o \
	src/messages/poison.o \
	src/messages/receipts.o \
	src/messages/retained.o \
	src/messages/rules.o \
	src/messages/session_leases.o \
	src/messages/table.o \
	src/schedules/cron.o \
	src/schedules/due.o \
	src/shmem/shmem.o \
	src/topics/filter.o \
	src/topics/subscriptions.o \
	src/queue_storage/catalog.o \
	src/queue_storage/permissions.o \
	src/queue_storage/plans.o \
	src/queue_storage/queue_rows.o \
	src/queue_storage/schema.o \
	src/queue_storage/session.o \
	src/wait/snapshot.o \
	src/wait/wait.o \
	src/worker/census.o \
	src/worker/launcher.o \
	src/worker/registry.o \
	src/worker/sweep.o \
	src/worker/utility.o \
	src/worker/vacuum.o \
	src/worker/worker.o
# the install script of every version, and the upgrade scripts between them
DATA = $(wildcard sql/queue--*.sql)

# Tests the PGXS way: "make installcheck" runs them against the running
# server PGHOST/PGPORT name, which must have queue in
# shared_preload_libraries and queue.enable_worker = off (test/queue.conf:
# a sweep between two statements would change what a test shows), as a
# role that may create databases.  The TAP tests start servers of their own.
REGRESS = $(shell sed -n 's/^test: //p' test/regress_schedule)
REGRESS_OPTS = --load-extension=queue
ISOLATION = $(patsubst test/isolation/specs/%.spec,%,$(wildcard test/isolation/specs/*.spec))
ISOLATION_OPTS = --inputdir=test/isolation --outputdir=test/isolation --load-extension=queue
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl
EXTRA_CLEAN = results regression.diffs regression.out \
	test/isolation/results test/isolation/regression.diffs test/isolation/regression.out \
	test/tmp_check

# Headers are included by their path under src/ ("messages/messages.h").
PG_CPPFLAGS = -I$(srcdir)/src

PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-missing-field-initializers -Wno-sign-compare

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# make uninstall also takes away the scripts of versions an earlier source
# install left (the full script of a version this one ships as an upgrade)
uninstall: uninstall-earlier-scripts
uninstall-earlier-scripts:
	rm -f $(DESTDIR)$(datadir)/$(datamoduledir)/$(EXTENSION)--*.sql
.PHONY: uninstall-earlier-scripts

# PGXS does not track header dependencies: every object depends on every
# header of ours.
$(OBJS): $(wildcard src/*.h src/*/*.h)

# The PGXN release zip, from the committed tree: queue-<version>.zip
DISTVERSION = $(shell sed -n 's/^   "version": "\(.*\)",$$/\1/p' META.json)
dist:
	git archive --format zip --prefix=queue-$(DISTVERSION)/ -o queue-$(DISTVERSION).zip HEAD
.PHONY: dist
