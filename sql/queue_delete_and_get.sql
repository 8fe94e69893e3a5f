-- queue_delete_and_get: the finished messages deleted and the next ones
-- claimed in one call; a row per entry given, in input order, then a row
-- per message claimed.

SELECT queue_create('dget-q', message_ttl => '1 hour');
SELECT queue_create('dget-other');
SELECT count(*) FROM queue_put_batch('dget-q', ARRAY['a', 'b', 'c', 'd', 'e']);

-- nothing to delete (NULL or empty arrays): a plain get
CREATE TEMP TABLE first AS
	SELECT status, message_id, pop_receipt, body, dequeue_count
	FROM queue_delete_and_get('dget-q', NULL, NULL, 2);
SELECT status, body, dequeue_count, pop_receipt IS NOT NULL AS has_receipt FROM first ORDER BY body;
SELECT status, body FROM queue_delete_and_get('dget-q', '{}', '{}', 1);

-- a deletes; b has a forged receipt; an unknown id; NULLs; then d and e
-- are claimed in the same call
SELECT status, body, message_id IS NOT NULL AS has_id, pop_receipt IS NOT NULL AS has_receipt
FROM queue_delete_and_get('dget-q',
	ARRAY[(SELECT message_id FROM first WHERE body = 'a'),
	      (SELECT message_id FROM first WHERE body = 'b'),
	      -1, NULL],
	ARRAY[(SELECT pop_receipt FROM first WHERE body = 'a'),
	      gen_random_uuid(), gen_random_uuid(), NULL],
	max_messages => 5);
SELECT m.body FROM queue_storage.messages m WHERE m.body IN ('a', 'b') ORDER BY m.body;
SELECT deletes, gets FROM queue_stats('dget-q');

-- another queue's message is not_found, and stays
SELECT count(*) FROM queue_put('dget-other', 'x');
SELECT message_id AS other_id, pop_receipt AS other_r FROM queue_get('dget-other', 1) \gset
SELECT status FROM queue_delete_and_get('dget-q', ARRAY[:other_id]::bigint[], ARRAY[:'other_r']::uuid[]);
SELECT count(*) AS other_kept FROM queue_storage.messages WHERE message_id = :other_id;

-- given something to delete, it does not wait: with nothing visible, the
-- deletes come back at once (and commit); with nothing given, it waits
SELECT count(*) FROM queue_put('dget-q', 'f');
SELECT message_id AS f_id, pop_receipt AS f_r FROM queue_get('dget-q', 1) \gset
SELECT clock_timestamp() AS t0 \gset
SELECT status FROM queue_delete_and_get('dget-q', ARRAY[:f_id]::bigint[], ARRAY[:'f_r']::uuid[], wait => '2 seconds');
SELECT clock_timestamp() - :'t0' < interval '1 second' AS returned_at_once;
SELECT clock_timestamp() AS t0 \gset
SELECT status FROM queue_delete_and_get('dget-q', NULL, NULL, wait => '200 milliseconds');
SELECT clock_timestamp() - :'t0' >= interval '200 milliseconds' AS waited;

-- a rolled back call deletes nothing and claims nothing
SELECT count(*) FROM queue_put('dget-q', 'g');
SELECT message_id AS g_id, pop_receipt AS g_r FROM queue_get('dget-q', 1) \gset
SELECT count(*) FROM queue_put('dget-q', 'h');
BEGIN;
SELECT status, body FROM queue_delete_and_get('dget-q', ARRAY[:g_id]::bigint[], ARRAY[:'g_r']::uuid[]);
ROLLBACK;
SELECT body, dequeue_count FROM queue_storage.messages WHERE body IN ('g', 'h') ORDER BY body;

-- errors: one array NULL 22004; lengths, shapes, counts 22023; 42704
SELECT check_error($$SELECT * FROM queue_delete_and_get('dget-q', NULL, ARRAY[gen_random_uuid()])$$);
SELECT check_error($$SELECT * FROM queue_delete_and_get('dget-q', ARRAY[1], NULL)$$);
SELECT check_error($$SELECT * FROM queue_delete_and_get('dget-q', ARRAY[1, 2], ARRAY[gen_random_uuid()])$$);
SELECT check_error($$SELECT * FROM queue_delete_and_get('dget-q', ARRAY[[1]], ARRAY[[gen_random_uuid()]])$$);
SELECT check_error($$SELECT * FROM queue_delete_and_get('dget-q', NULL, NULL, 0)$$);
SELECT check_error($$SELECT * FROM queue_delete_and_get('dget-q', NULL, NULL, 1, '0 s')$$);
SELECT check_error($$SELECT * FROM queue_delete_and_get('dget-q', NULL, NULL, 1, NULL, '21 s')$$);
SELECT check_error($$SELECT * FROM queue_delete_and_get('dget-q', NULL, NULL, 1, NULL, '0', NULL)$$);
SELECT check_error($$SELECT * FROM queue_delete_and_get('dget-none', ARRAY[1], ARRAY[gen_random_uuid()])$$);
SELECT check_error($$SELECT * FROM queue_delete_and_get(NULL, NULL, NULL)$$);
SELECT drop_all_queues();
