-- queue_redrive: poison messages back to their queue (or elsewhere),
-- visible at once, dequeue_count 0.

SELECT queue_create('redrive-q', message_ttl => '1 hour', max_dequeue_count => 1);
SELECT queue_create('redrive-elsewhere', message_ttl => NULL);
SELECT count(*) FROM queue_put_batch('redrive-q', ARRAY['a', 'b', 'c']);
SELECT count(*) FROM queue_get('redrive-q', 3, '1 millisecond');
SELECT pg_sleep(0.01);
SELECT count(*) FROM queue_get('redrive-q', 3);
SELECT body, dequeue_count FROM queue_peek('redrive-q-poison', 10);

-- one back to where it came from
SELECT queue_redrive('redrive-q-poison', max_messages => 1);
SELECT body, dequeue_count, pop_receipt IS NULL AS no_receipt,
       expires_at - visible_at BETWEEN interval '59 min 59 s' AND interval '1 hour' AS new_ttl
FROM queue_peek('redrive-q', 10);
-- the rest to another queue
SELECT queue_redrive('redrive-q-poison', 'redrive-elsewhere');
SELECT body, dequeue_count, expires_at FROM queue_peek('redrive-elsewhere', 10);
SELECT queue_redrive('redrive-q-poison');
-- a redriven message goes through its dequeue counts again
SELECT body, dequeue_count FROM queue_get('redrive-q');

-- a message held by a consumer of the poison queue stays
SELECT count(*) FROM queue_put('redrive-q-poison', 'held');
SELECT count(*) FROM queue_get('redrive-q-poison');
SELECT queue_redrive('redrive-q-poison');

-- errors
SELECT check_error($$SELECT queue_redrive(NULL)$$);
SELECT check_error($$SELECT queue_redrive('no-such-queue')$$);
SELECT check_error($$SELECT queue_redrive('redrive-elsewhere')$$);
SELECT check_error($$SELECT queue_redrive('redrive-q-poison', 'no-such-queue')$$);
SELECT check_error($$SELECT queue_redrive('redrive-q-poison', 'redrive-q-poison')$$);
SELECT check_error($$SELECT queue_redrive('redrive-q-poison', max_messages => 0)$$);

SELECT drop_all_queues();
