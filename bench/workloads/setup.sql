-- The benchmark's queue, and the raw-SQL floor: a minimal table of the
-- same shape, worked with plain prepared SQL.
CREATE EXTENSION queue;
SELECT queue_create('bench', message_ttl => NULL, max_dequeue_count => NULL);
CREATE TABLE floor_q (
	id bigserial PRIMARY KEY,
	queue_id integer NOT NULL,
	visible_at timestamptz NOT NULL,
	receipt uuid,
	dequeue_count integer NOT NULL DEFAULT 0,
	body text NOT NULL
);
CREATE INDEX ON floor_q (queue_id, visible_at, id);
