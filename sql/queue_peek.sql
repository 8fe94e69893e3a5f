-- queue_peek: what a get would return, without a receipt, changing nothing.

SELECT queue_create('peek-q', max_dequeue_count => 1);
SELECT count(*) FROM queue_put_batch('peek-q', ARRAY['first', 'second', 'third']);
SELECT count(*) FROM queue_put('peek-q', 'delayed', '1 hour');
SELECT count(*) FROM queue_put('peek-q', 'expired', ttl => '1 millisecond');
SELECT pg_sleep(0.01);

SELECT body, dequeue_count, pop_receipt FROM queue_peek('peek-q', 10);
SELECT body FROM queue_peek('peek-q');
-- peeking changes nothing
SELECT body, dequeue_count FROM queue_peek('peek-q', 10);
SELECT gets FROM queue_stats('peek-q');

-- in flight: not shown; released after its only delivery: on its way to the
-- poison queue, not shown either
SELECT body FROM queue_get('peek-q', visibility_timeout => '500 milliseconds');
SELECT body FROM queue_peek('peek-q', 10);
SELECT pg_sleep(0.55);
SELECT body FROM queue_peek('peek-q', 10);

-- errors
SELECT check_error($$SELECT * FROM queue_peek(NULL)$$);
SELECT check_error($$SELECT * FROM queue_peek('peek-q', NULL)$$);
SELECT check_error($$SELECT * FROM queue_peek('peek-q', 0)$$);
SELECT check_error($$SELECT * FROM queue_peek('peek-q', 1001)$$);
SELECT check_error($$SELECT * FROM queue_peek('peek.q')$$);
SELECT check_error($$SELECT * FROM queue_peek('no-such-queue')$$);

SELECT drop_all_queues();
