-- queue_update_batch: one row per entry, in input order; updated rows get
-- a new receipt; a bad entry raises nothing.

SELECT queue_create('ubatch-q', message_ttl => '1 hour', max_dequeue_count => 1);
SELECT count(*) FROM queue_put_batch('ubatch-q', ARRAY['a', 'b', 'c']);
CREATE TEMP TABLE held AS SELECT message_id, pop_receipt, body FROM queue_get('ubatch-q', 3);

-- extend a and b; c has a forged receipt; an unknown id
CREATE TEMP TABLE extended AS
SELECT row_number() OVER () AS ord, u.*
FROM queue_update_batch('ubatch-q',
	ARRAY[(SELECT message_id FROM held WHERE body = 'a'),
	      (SELECT message_id FROM held WHERE body = 'b'),
	      (SELECT message_id FROM held WHERE body = 'c'), -1],
	ARRAY[(SELECT pop_receipt FROM held WHERE body = 'a'),
	      (SELECT pop_receipt FROM held WHERE body = 'b'),
	      gen_random_uuid(), gen_random_uuid()],
	'10 minutes') u;
SELECT e.ord, h.body, e.status, e.pop_receipt IS NOT NULL AS has_receipt,
       e.pop_receipt <> h.pop_receipt AS new_receipt,
       e.visible_at BETWEEN clock_timestamp() + interval '9 min 59 s'
                        AND clock_timestamp() + interval '10 min' AS extended
FROM extended e LEFT JOIN held h USING (message_id) ORDER BY e.ord;
-- the old receipts no longer work (the release below uses a new one)
SELECT status FROM queue_delete_batch('ubatch-q',
	ARRAY(SELECT message_id FROM held WHERE body IN ('a', 'b') ORDER BY body),
	ARRAY(SELECT pop_receipt FROM held WHERE body IN ('a', 'b') ORDER BY body));

-- released (0) after its only allowed delivery: moved to the poison queue,
-- no receipt in its row
SELECT status, pop_receipt FROM queue_update_batch('ubatch-q',
	ARRAY(SELECT message_id FROM extended WHERE status = 'updated' ORDER BY ord LIMIT 1),
	ARRAY(SELECT pop_receipt FROM extended WHERE status = 'updated' ORDER BY ord LIMIT 1), '0');
SELECT body, dequeue_count FROM queue_peek('ubatch-q-poison');

-- arrays that start at other subscripts still pair each id with the
-- receipt at the same position
SELECT count(*) FROM queue_put_batch('ubatch-q', ARRAY['e', 'f']);
CREATE TEMP TABLE held2 AS SELECT message_id, pop_receipt, body FROM queue_get('ubatch-q', 2);
SELECT body FROM held2 ORDER BY body;
SELECT status, pop_receipt IS NOT NULL AS has_receipt FROM queue_update_batch('ubatch-q',
	('[0:1]={' || (SELECT string_agg(message_id::text, ',' ORDER BY body) FROM held2) || '}')::bigint[],
	('[-3:-2]={' || (SELECT string_agg(pop_receipt::text, ',' ORDER BY body) FROM held2) || '}')::uuid[],
	'1 minute');

-- errors
SELECT check_error($$SELECT * FROM queue_update_batch('ubatch-q', ARRAY[1], ARRAY[gen_random_uuid()], NULL)$$);
SELECT check_error($$SELECT * FROM queue_update_batch('ubatch-q', ARRAY[1], ARRAY[gen_random_uuid()], '-1 second')$$);
SELECT check_error($$SELECT * FROM queue_update_batch('ubatch-q', ARRAY[1], ARRAY[gen_random_uuid()], '8 days')$$);
SELECT check_error($$SELECT * FROM queue_update_batch('ubatch-q', ARRAY[1, 2], ARRAY[gen_random_uuid()], '0')$$);
SELECT check_error($$SELECT * FROM queue_update_batch('ubatch-q', ARRAY[]::bigint[], ARRAY[]::uuid[], '0')$$);
SELECT check_error($$SELECT * FROM queue_update_batch('no-such-queue', ARRAY[1], ARRAY[gen_random_uuid()], '0')$$);

SELECT drop_all_queues();
