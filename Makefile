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
	src/utility.o
DATA = sql/queue--1.0.sql

PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-missing-field-initializers -Wno-sign-compare

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS does not track header dependencies: every object depends on queue.h.
$(OBJS): src/queue.h
