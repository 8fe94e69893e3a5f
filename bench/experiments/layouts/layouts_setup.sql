-- Plain tables for layouts.sh.  lease_key and lease_beside hold a
-- message with its lease in one row, pages filled to half by inserts as
-- the extension's table is; lease_narrow (at the end) keeps the lease apart
-- from the body.  lease_key: the claim index is keyed by visible_at, which the
-- get moves to the lease's end (the extension's layout); every get writes
-- a version with index entries of its own.  lease_beside: the claim index is
-- keyed by ready_at, set at the put and never changed, and the lease lives
-- in lease_until beside it, in no index: the get's new version is a HOT
-- update, with no index entries, but a get has to pass over every message
-- in flight that the index still lists as ready.

-- lease_key is the floor's table (setup.sql) with its pages half filled.
CREATE TABLE lease_key (LIKE floor_q INCLUDING ALL) WITH (fillfactor = 50);
CREATE TABLE lease_beside (
	id bigserial PRIMARY KEY,
	queue_id integer NOT NULL,
	ready_at timestamptz NOT NULL,
	lease_until timestamptz NOT NULL DEFAULT '-infinity',
	receipt uuid,
	dequeue_count integer NOT NULL DEFAULT 0,
	body text NOT NULL
) WITH (fillfactor = 50);
CREATE INDEX ON lease_beside (queue_id, ready_at, id);

-- lease_narrow: the body in a table of its own, written once by the put and
-- never updated (its pages filled whole), and the lease in a narrow row
-- keyed as lease_key's claim index is: the get's new version is small, but
-- every message has two rows to insert and delete, and the body's row its
-- own primary key entry.
CREATE TABLE lease_narrow (
	id bigserial PRIMARY KEY,
	queue_id integer NOT NULL,
	visible_at timestamptz NOT NULL,
	receipt uuid,
	dequeue_count integer NOT NULL DEFAULT 0
) WITH (fillfactor = 50);
CREATE INDEX ON lease_narrow (queue_id, visible_at, id);
CREATE TABLE lease_narrow_body (
	id bigint PRIMARY KEY,
	body text NOT NULL
);
