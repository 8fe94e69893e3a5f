-- queue_list: one row per queue, with its settings and poison queue.

SELECT count(*) FROM queue_list();

SELECT queue_create('list-b', '1 minute', '2 days', 7, 4096);
SELECT queue_create('list-a', max_dequeue_count => NULL, message_ttl => NULL);
SELECT queue, visibility_timeout, message_ttl, max_dequeue_count,
       max_message_size, poison_queue, created_at <= clock_timestamp() AS created
FROM queue_list();

-- the result columns
SELECT pg_get_function_result('queue_list()'::regprocedure);

SELECT drop_all_queues();
SELECT count(*) FROM queue_list();
