-- retention and queue_replay: a queue with a retention keeps what its
-- consumers deleted, as 'deleted' in queue_inspect and nowhere else, until
-- the worker removes it; queue_replay puts it back.

SELECT queue_create('keep-q', retention => '1 hour');
SELECT queue_create('plain-q');
SELECT queue, retention FROM queue_list() WHERE queue IN ('keep-q', 'keep-q-poison', 'plain-q') ORDER BY queue;

-- a delete, a batch delete and a delete_and_get all keep what they delete
SELECT message_id AS id1 FROM queue_put('keep-q', 'one', headers => '{"k": 1}') \gset
SELECT message_id AS id2 FROM queue_put('keep-q', 'two') \gset
SELECT message_id AS id3 FROM queue_put('keep-q', 'three') \gset
SELECT message_id AS id4 FROM queue_put('keep-q', 'four') \gset
SELECT message_id AS g1, pop_receipt AS r1 FROM queue_get('keep-q') \gset
SELECT queue_delete('keep-q', :g1, :'r1');
SELECT message_id AS g2, pop_receipt AS r2 FROM queue_get('keep-q') \gset
SELECT status FROM queue_delete_batch('keep-q', ARRAY[:g2]::bigint[], ARRAY[:'r2']::uuid[]);
SELECT message_id AS g3, pop_receipt AS r3 FROM queue_get('keep-q') \gset
SELECT status, body FROM queue_delete_and_get('keep-q', ARRAY[:g3]::bigint[], ARRAY[:'r3']::uuid[]);

-- shown as deleted, in id order among the live ones, with the delete's time
SELECT message_id = :id1 AS first, state, dequeue_count, body, headers,
	visible_at IS NULL AS no_visible_at, deleted_at IS NOT NULL AS has_deleted_at
FROM queue_inspect('keep-q') ORDER BY message_id;
SELECT count(*) FROM queue_inspect('keep-q', 2);
SELECT state FROM queue_inspect('keep-q', 2, :id2);

-- never handed out, peeked or counted
SELECT count(*) FROM queue_peek('keep-q', 32);
SELECT visible, in_flight, delayed, total FROM queue_stats('keep-q');
SELECT count(*) FROM queue_get('keep-q', 32);

-- the same receipt again: gone, as without retention
SELECT check_error(format('SELECT queue_delete(%L, %s, %L)', 'keep-q', :g1, :'r1'));

-- a rolled back delete keeps nothing
SELECT count(*) FROM queue_put('keep-q', 'five');
SELECT message_id AS g5, pop_receipt AS r5 FROM queue_get('keep-q', visibility_timeout => '1 minute') \gset
BEGIN;
SELECT queue_delete('keep-q', :g5, :'r5');
ROLLBACK;
SELECT count(*) FILTER (WHERE state = 'deleted') AS deleted, count(*) AS all FROM queue_inspect('keep-q');

-- a queue without retention keeps nothing
SELECT message_id AS p, pop_receipt AS pr FROM queue_put('plain-q', 'x') \gset
SELECT message_id AS p, pop_receipt AS pr FROM queue_get('plain-q') \gset
SELECT queue_delete('plain-q', :p, :'pr');
SELECT count(*) FROM queue_inspect('plain-q');

-- replay by id: back with its id, visible at once, dequeue_count 0
SELECT queue_replay('keep-q', message_ids => ARRAY[:g1]::bigint[]);
SELECT message_id = :g1 AS same_id, state, dequeue_count, body, headers
FROM queue_inspect('keep-q') WHERE message_id = :g1;
SELECT queue_replay('keep-q', message_ids => ARRAY[:g1]::bigint[]);

-- replay by time: the window is [since, until)
SELECT queue_replay('keep-q', until => '-infinity');
SELECT queue_replay('keep-q', since => now() + interval '1 hour');
SELECT queue_replay('keep-q', since => now() - interval '1 hour', max_messages => 1);
SELECT queue_replay('keep-q', since => now() - interval '1 hour', until => now() + interval '1 hour');
SELECT count(*) FILTER (WHERE state = 'deleted') AS deleted, count(*) AS all FROM queue_inspect('keep-q');

-- handed out and deleted again, kept again
SELECT count(*) FROM (SELECT queue_delete('keep-q', message_id, pop_receipt)
	FROM queue_get('keep-q', 32)) d;
SELECT count(*) FILTER (WHERE state = 'deleted') AS deleted, count(*) AS all FROM queue_inspect('keep-q');

-- a message of a group comes back at the end of its group, with a new id
SELECT queue_create('keep-groups', retention => '1 day');
SELECT message_id AS ga FROM queue_put('keep-groups', 'a', group_id => 'g') \gset
SELECT message_id AS gb FROM queue_put('keep-groups', 'b', group_id => 'g') \gset
SELECT queue_delete('keep-groups', message_id, pop_receipt) FROM queue_get('keep-groups');
SELECT queue_replay('keep-groups');
SELECT body, message_id > :gb AS renumbered, state FROM queue_inspect('keep-groups') ORDER BY message_id;
SELECT body FROM queue_get('keep-groups');

-- priorities come back with their message
SELECT queue_create('keep-prio', retention => '1 day');
SELECT count(*) FROM queue_put('keep-prio', 'low');
SELECT count(*) FROM queue_put('keep-prio', 'high', priority => 5);
SELECT queue_delete('keep-prio', message_id, pop_receipt) FROM queue_get('keep-prio');
SELECT queue_replay('keep-prio');
SELECT body, priority FROM queue_get('keep-prio');

-- queue_maintain removes what is past the retention; retention '0' keeps no more
SELECT (queue_maintain()).expired;
SELECT count(*) FROM queue_inspect('keep-q') WHERE state = 'deleted';
SELECT queue_alter('keep-q', retention => '0');
SELECT retention FROM queue_list() WHERE queue = 'keep-q';
SELECT (queue_maintain()).expired;
SELECT count(*) FROM queue_inspect('keep-q') WHERE state = 'deleted';
SELECT message_id AS k, pop_receipt AS kr FROM queue_put('keep-q', 'after') \gset
SELECT queue_delete('keep-q', message_id, pop_receipt) FROM queue_get('keep-q', 32);
SELECT count(*) FROM queue_inspect('keep-q') WHERE state = 'deleted';
SELECT queue_alter('keep-q', retention => '2 days');
SELECT retention FROM queue_list() WHERE queue = 'keep-q';

-- a large body (stored out of line) is kept and comes back whole
SELECT queue_create('keep-big', retention => '1 day');
SELECT string_agg(md5(i::text), '') AS big FROM generate_series(1, 4000) i \gset
SELECT count(*) FROM queue_put('keep-big', :'big', headers => jsonb_build_object('pad', :'big'));
SELECT queue_delete('keep-big', message_id, pop_receipt) FROM queue_get('keep-big');
SELECT state, length(body), body = :'big' AS same_body, headers->>'pad' = :'big' AS same_headers
FROM queue_inspect('keep-big');
SELECT queue_replay('keep-big');
SELECT length(body), body = :'big' AS same_body, headers->>'pad' = :'big' AS same_headers
FROM queue_get('keep-big');
SELECT pg_relation_size(reltoastrelid) > 0 AS kept_out_of_line
FROM pg_class WHERE oid = 'queue_storage.retained'::regclass;

-- a retention is kept as days and time: a month is 30 days
SELECT queue_alter('keep-big', retention => '1 mon');
SELECT retention FROM queue_list() WHERE queue = 'keep-big';
SELECT queue_alter('keep-big', retention => '1 mon -29 days');
SELECT retention FROM queue_list() WHERE queue = 'keep-big';

-- dropping a queue drops what it kept
SELECT queue_drop('keep-prio');
SELECT count(*) FROM queue_storage.retained r
	WHERE NOT EXISTS (SELECT 1 FROM queue_storage.queues q WHERE q.queue_id = r.queue_id);

-- errors
SELECT check_error($$SELECT queue_create('bad-keep', retention => '-1 second')$$);
SELECT check_error($$SELECT queue_create('bad-keep', retention => '366 days')$$);
SELECT check_error($$SELECT queue_alter('keep-q', retention => '-1 day')$$);
SELECT check_error($$SELECT queue_replay('no-such-queue')$$);
SELECT check_error($$SELECT queue_replay(NULL)$$);
SELECT check_error($$SELECT queue_replay('keep-q', max_messages => 0)$$);
SELECT * FROM error_details($$SELECT queue_replay('keep-q', since => '2026-01-02', until => '2026-01-01')$$);

SELECT drop_all_queues();
