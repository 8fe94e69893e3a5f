-- queue_delete_batch: one row per entry, in input order; a bad entry
-- raises nothing.

SELECT queue_create('dbatch-q', message_ttl => '1 hour');
SELECT queue_create('dbatch-other');
SELECT count(*) FROM queue_put_batch('dbatch-q', ARRAY['a', 'b', 'c', 'd']);
CREATE TEMP TABLE held AS SELECT message_id, pop_receipt, body FROM queue_get('dbatch-q', 4);
SELECT message_id AS other_id, pop_receipt AS other_r FROM queue_put('dbatch-other', 'x') \gset
SELECT message_id AS short_id, pop_receipt AS short_r FROM queue_put('dbatch-q', 'short', ttl => '1 millisecond') \gset
SELECT pg_sleep(0.01);

-- a deletes, b has a forged receipt, c is given twice, an unknown id,
-- another queue's message, an expired one, NULLs
SELECT b.ord, h.body, b.status
FROM held h
RIGHT JOIN LATERAL (
	SELECT row_number() OVER () AS ord, d.message_id, d.status
	FROM queue_delete_batch('dbatch-q',
		ARRAY[(SELECT message_id FROM held WHERE body = 'a'),
		      (SELECT message_id FROM held WHERE body = 'b'),
		      (SELECT message_id FROM held WHERE body = 'c'),
		      (SELECT message_id FROM held WHERE body = 'c'),
		      -1, :other_id, :short_id, NULL],
		ARRAY[(SELECT pop_receipt FROM held WHERE body = 'a'),
		      gen_random_uuid(),
		      (SELECT pop_receipt FROM held WHERE body = 'c'),
		      (SELECT pop_receipt FROM held WHERE body = 'c'),
		      gen_random_uuid(), :'other_r', :'short_r', NULL]) d
) b ON b.message_id = h.message_id
ORDER BY b.ord;
SELECT m.body FROM queue_storage.messages m JOIN held USING (message_id) ORDER BY m.body;
SELECT deletes FROM queue_stats('dbatch-q');
SELECT count(*) AS other_untouched FROM queue_peek('dbatch-other');

-- arrays that start at other subscripts still pair each id with the
-- receipt at the same position
SELECT count(*) FROM queue_put_batch('dbatch-q', ARRAY['e', 'f']);
CREATE TEMP TABLE held2 AS SELECT message_id, pop_receipt, body FROM queue_get('dbatch-q', 2);
SELECT body FROM held2 ORDER BY body;
SELECT status FROM queue_delete_batch('dbatch-q',
	('[0:1]={' || (SELECT string_agg(message_id::text, ',' ORDER BY body) FROM held2) || '}')::bigint[],
	('[5:6]={' || (SELECT string_agg(pop_receipt::text, ',' ORDER BY body) FROM held2) || '}')::uuid[]);

-- entries are taken in order, each with its own receipt: a wrong receipt
-- and then the right one for the same message; a NULL receipt for a
-- message that is there
SELECT count(*) FROM queue_put_batch('dbatch-q', ARRAY['g', 'h']);
CREATE TEMP TABLE held3 AS SELECT message_id, pop_receipt, body FROM queue_get('dbatch-q', 2);
SELECT status FROM queue_delete_batch('dbatch-q',
	ARRAY[(SELECT message_id FROM held3 WHERE body = 'g'),
	      (SELECT message_id FROM held3 WHERE body = 'g'),
	      (SELECT message_id FROM held3 WHERE body = 'h')],
	ARRAY[gen_random_uuid(), (SELECT pop_receipt FROM held3 WHERE body = 'g'), NULL]);
SELECT m.body FROM queue_storage.messages m JOIN held3 USING (message_id);

-- errors: NULL arrays 22004; lengths, shapes and sizes 22023; 42704
SELECT check_error($$SELECT * FROM queue_delete_batch('dbatch-q', NULL, ARRAY[gen_random_uuid()])$$);
SELECT check_error($$SELECT * FROM queue_delete_batch('dbatch-q', ARRAY[1], NULL)$$);
SELECT check_error($$SELECT * FROM queue_delete_batch('dbatch-q', ARRAY[1, 2], ARRAY[gen_random_uuid()])$$);
SELECT check_error($$SELECT * FROM queue_delete_batch('dbatch-q', ARRAY[]::bigint[], ARRAY[]::uuid[])$$);
SELECT check_error($$SELECT * FROM queue_delete_batch('dbatch-q', array_fill(1::bigint, ARRAY[1001]), array_fill(gen_random_uuid(), ARRAY[1001]))$$);
SELECT check_error($$SELECT * FROM queue_delete_batch('dbatch-q', ARRAY[[1]], ARRAY[[gen_random_uuid()]])$$);
SELECT check_error($$SELECT * FROM queue_delete_batch('no-such-queue', ARRAY[1], ARRAY[gen_random_uuid()])$$);
SELECT check_error($$SELECT * FROM queue_delete_batch(NULL, ARRAY[1], ARRAY[gen_random_uuid()])$$);

-- transactional
BEGIN;
SELECT status FROM queue_delete_batch('dbatch-q',
	ARRAY[(SELECT message_id FROM held WHERE body = 'd')], ARRAY[(SELECT pop_receipt FROM held WHERE body = 'd')]);
ROLLBACK;
SELECT status FROM queue_delete_batch('dbatch-q',
	ARRAY[(SELECT message_id FROM held WHERE body = 'd')], ARRAY[(SELECT pop_receipt FROM held WHERE body = 'd')]);

SELECT drop_all_queues();
