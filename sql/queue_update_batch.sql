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

-- keep_pop_receipts: the receipts given stay valid, as SQS's
-- ChangeMessageVisibility leaves a receipt handle valid
SELECT queue_create('ubatch-keep', max_dequeue_count => NULL);
SELECT count(*) FROM queue_put_batch('ubatch-keep', ARRAY['k1', 'k2']);
CREATE TEMP TABLE kept AS SELECT message_id, pop_receipt, body FROM queue_get('ubatch-keep', 2);
SELECT u.status, u.pop_receipt = k.pop_receipt AS same_receipt, u.visible_at > now() + interval '50 seconds' AS extended
FROM queue_update_batch('ubatch-keep', ARRAY(SELECT message_id FROM kept ORDER BY body),
                        ARRAY(SELECT pop_receipt FROM kept ORDER BY body), '1 minute', keep_pop_receipts => true) u
JOIN kept k USING (message_id) ORDER BY k.body;
SELECT count(queue_delete('ubatch-keep', message_id, pop_receipt)) AS deleted_with_first_receipts FROM kept;
SELECT status FROM queue_update_batch('ubatch-keep', ARRAY[1::bigint], ARRAY[NULL::uuid], '0', true);
SELECT queue_drop('ubatch-keep');

-- errors
SELECT check_error($$SELECT * FROM queue_update_batch('ubatch-q', ARRAY[1], ARRAY[gen_random_uuid()], NULL)$$);
SELECT check_error($$SELECT * FROM queue_update_batch('ubatch-q', ARRAY[1], ARRAY[gen_random_uuid()], '-1 second')$$);
SELECT check_error($$SELECT * FROM queue_update_batch('ubatch-q', ARRAY[1], ARRAY[gen_random_uuid()], '8 days')$$);
SELECT check_error($$SELECT * FROM queue_update_batch('ubatch-q', ARRAY[1, 2], ARRAY[gen_random_uuid()], '0')$$);
SELECT check_error($$SELECT * FROM queue_update_batch('ubatch-q', ARRAY[]::bigint[], ARRAY[]::uuid[], '0')$$);
SELECT check_error($$SELECT * FROM queue_update_batch('no-such-queue', ARRAY[1], ARRAY[gen_random_uuid()], '0')$$);

SELECT drop_all_queues();
