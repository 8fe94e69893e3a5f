/*
 * queue--1.2--1.3.sql
 *		Upgrade script of the queue extension from 1.2 to 1.3:
 *		ALTER EXTENSION queue UPDATE TO '1.3'.
 *
 * 1.3 orders messages the way SQS FIFO queues and job queues do: message
 * groups handed out in put order and one at a time, deduplication of
 * repeated puts within a window, fairness between groups, and priorities.
 * The new columns have defaults that leave every stored message as it was
 * (priority 0, no group), so the update rewrites no row.
 *
 * WORK IN PROGRESS (branch ordering): storage only; the functions' new
 * arguments come next.
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.3'" to load this file. \quit

-- How long a put's deduplication_id is remembered.
ALTER TABLE queue_storage.queues
	ADD COLUMN deduplication_window interval NOT NULL DEFAULT '5 minutes';

-- Appended after body: the C reads the columns by position and runs on the
-- table of 1.2 too, until this update.
ALTER TABLE queue_storage.messages
	ADD COLUMN priority smallint NOT NULL DEFAULT 0,
	ADD COLUMN group_id text;

-- The deduplication_ids of a queue's recent puts, each with the message it
-- stored; kept until forget_at (the put's time plus the window), whether
-- the message is still there or not, and then deleted by the sweep.
CREATE TABLE queue_storage.deduplication (
	queue_id integer NOT NULL,
	deduplication_id text NOT NULL,
	message_id bigint NOT NULL,
	inserted_at timestamptz NOT NULL,
	forget_at timestamptz NOT NULL,
	PRIMARY KEY (queue_id, deduplication_id)
) WITH (
	autovacuum_vacuum_scale_factor = 0.01,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_cost_delay = 0
);
CREATE INDEX deduplication_forget ON queue_storage.deduplication (forget_at);
