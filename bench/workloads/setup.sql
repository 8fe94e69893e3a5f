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
-- the floor's table is stored as the extension's: the same fill factor and
-- vacuum settings
DO $$BEGIN
	EXECUTE (SELECT format('ALTER TABLE floor_q SET (%s)', array_to_string(reloptions, ', '))
		FROM pg_class WHERE oid = 'queue_storage.messages'::regclass);
END$$;

-- 1,000 bodies of 1 KiB of random hexadecimal text, one picked at random
-- by every put of every side (a body repeated from one message to the
-- next would flatter any side that compresses or dedups)
CREATE TABLE bench_bodies (id integer PRIMARY KEY, body text NOT NULL);
INSERT INTO bench_bodies
	SELECT i, string_agg(md5(random()::text || i || j), '' ORDER BY j)
	FROM generate_series(1, 1000) i, generate_series(1, 32) j GROUP BY i;

-- The floor's cycle with each statement inside a PL/pgSQL function, called
-- the way the extension's functions are (cycle_floorfn.sql): what any API
-- of server-side functions pays per call on top of the bare statement
-- (the function call, and the executor started again for the statement
-- inside it), before doing anything a queue needs.
CREATE FUNCTION floor_put(message text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO floor_q (queue_id, visible_at, body) VALUES (1, clock_timestamp(), message);
END
$$;
CREATE FUNCTION floor_get(OUT claimed_id bigint, OUT claimed_receipt uuid) LANGUAGE plpgsql AS $$
BEGIN
	UPDATE floor_q SET visible_at = clock_timestamp() + interval '30 s', receipt = gen_random_uuid(), dequeue_count = dequeue_count + 1 WHERE id = (SELECT id FROM floor_q WHERE queue_id = 1 AND visible_at <= clock_timestamp() ORDER BY visible_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, receipt INTO claimed_id, claimed_receipt;
END
$$;
CREATE FUNCTION floor_delete(message_id bigint, message_receipt uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM floor_q WHERE id = message_id AND receipt = message_receipt;
END
$$;
