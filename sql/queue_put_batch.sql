-- queue_put_batch: all or nothing, receipts in input order.

SELECT queue_create('batch-q', message_ttl => '1 day', max_message_size => 10);

-- receipts come back in input order, with increasing ids
SELECT count(*) AS receipts, count(DISTINCT pop_receipt) AS distinct_receipts,
       bool_and(visible_at = inserted_at) AS visible_now,
       bool_and(expires_at - inserted_at = '1 day') AS queue_ttl
FROM queue_put_batch('batch-q', ARRAY['one', 'two', 'three']);
SELECT body FROM queue_peek('batch-q', 10);
SELECT array_agg(message_id ORDER BY ordinality) = array_agg(message_id ORDER BY message_id) AS in_order
FROM queue_put_batch('batch-q', ARRAY['a', 'b', 'c', 'd', 'e']) WITH ORDINALITY;

-- delay, ttl and headers for the batch; a NULL header is allowed
SELECT visible_at - inserted_at AS delay, expires_at - inserted_at AS ttl
FROM queue_put_batch('batch-q', ARRAY['x', 'y'], '1 minute', '1 hour');
SELECT count(*) FROM queue_put_batch('batch-q', ARRAY['h1', 'h2'],
       headers => ARRAY['{"k": 1}', NULL]::jsonb[]);
SELECT body, headers FROM queue_peek('batch-q', 20) WHERE body LIKE 'h_' ORDER BY body;

-- the largest batch
SELECT count(*) FROM queue_put_batch('batch-q', array_fill('m'::text, ARRAY[1000]));

-- all or nothing: one body too large (54000) and nothing is stored
SELECT total AS before FROM queue_stats('batch-q') \gset
SELECT check_error($$SELECT queue_put_batch('batch-q', ARRAY['ok', 'much too large', 'ok'])$$);
SELECT check_error($$SELECT queue_put_batch('batch-q', ARRAY['ok', NULL])$$);
SELECT total = :before AS nothing_stored FROM queue_stats('batch-q');

-- NULLs: 22004
SELECT check_error($$SELECT queue_put_batch(NULL, ARRAY['x'])$$);
SELECT check_error($$SELECT queue_put_batch('batch-q', NULL)$$);

-- batch sizes, shapes and headers: 22023
SELECT check_error($$SELECT queue_put_batch('batch-q', ARRAY[]::text[])$$);
SELECT check_error($$SELECT queue_put_batch('batch-q', array_fill('m'::text, ARRAY[1001]))$$);
SELECT check_error($$SELECT queue_put_batch('batch-q', array_fill('m'::text, ARRAY[1000000]))$$);
SELECT check_error($$SELECT queue_put_batch('batch-q', ARRAY[['a', 'b'], ['c', 'd']])$$);
SELECT check_error($$SELECT queue_put_batch('batch-q', ARRAY['a', 'b'], headers => ARRAY['{}']::jsonb[])$$);
SELECT check_error($$SELECT queue_put_batch('batch-q', ARRAY['a'], headers => ARRAY['[]']::jsonb[])$$);
SELECT check_error($$SELECT queue_put_batch('batch-q', ARRAY['a'], '-1 second')$$);
SELECT check_error($$SELECT queue_put_batch('batch-q', ARRAY['a'], ttl => '0')$$);
SELECT check_error($$SELECT queue_put_batch('batch-q', ARRAY['a'], '2 days')$$);
SELECT check_error($$SELECT queue_put_batch('no-such-queue', ARRAY['a'])$$);

-- transactional
SELECT total AS before FROM queue_stats('batch-q') \gset
BEGIN;
SELECT count(*) FROM queue_put_batch('batch-q', ARRAY['r1', 'r2']);
ROLLBACK;
SELECT total = :before AS unchanged FROM queue_stats('batch-q');

-- a batch's rows go to the table 100 at a time, or sooner once 1 MiB of
-- bodies waits: batches past both bounds store every message, with its own
-- body, in input order
SELECT queue_create('batch-big');
SELECT count(*) FROM queue_put_batch('batch-big',
       ARRAY(SELECT i || ':' || repeat('b', 400000) FROM generate_series(1, 7) i));
SELECT count(*) FROM queue_put_batch('batch-big',
       ARRAY(SELECT 'small ' || i FROM generate_series(1, 250) i));
SELECT count(*) AS stored,
       count(*) FILTER (WHERE body = split_part(body, ':', 1) || ':' || repeat('b', 400000)) AS large_intact,
       array_agg(split_part(body, ':', 1) ORDER BY message_id) FILTER (WHERE body LIKE '%:%') AS large_in_order,
       array_agg(body ORDER BY message_id) FILTER (WHERE body LIKE 'small %')
         = ARRAY(SELECT 'small ' || i FROM generate_series(1, 250) i) AS small_in_order
FROM queue_get('batch-big', 1000, '1 hour');

SELECT drop_all_queues();
