-- queue_inspect: every message with its state and times, never a receipt.

SELECT queue_create('inspect-q', max_dequeue_count => 1);
SELECT count(*) FROM queue_put('inspect-q', 'in flight');
SELECT body FROM queue_get('inspect-q', 1, '1 hour');
SELECT count(*) FROM queue_put('inspect-q', 'visible', headers => '{"h": 1}');
SELECT count(*) FROM queue_put('inspect-q', 'delayed', '1 hour');
SELECT count(*) FROM queue_put('inspect-q', 'expired', ttl => '1 millisecond');
SELECT pg_sleep(0.01);

SELECT body, state, dequeue_count, headers, source_queue,
       visible_at - inserted_at > interval '59 min' AS invisible_for_an_hour
FROM queue_inspect('inspect-q') ORDER BY message_id;
SELECT count(*) FROM queue_inspect('inspect-q', 2);
-- pages: after_message_id is the last id of the page before
SELECT array_agg(body ORDER BY message_id) AS first_page
FROM queue_inspect('inspect-q', 2, NULL);
SELECT array_agg(body ORDER BY message_id) AS second_page
FROM queue_inspect('inspect-q', 2,
	(SELECT max(message_id) FROM queue_inspect('inspect-q', 2)));
SELECT count(*) AS past_the_last
FROM queue_inspect('inspect-q', 2, (SELECT max(message_id) FROM queue_inspect('inspect-q')));
SELECT (SELECT array_agg(message_id) FROM (
		SELECT message_id FROM queue_inspect('inspect-q', 1) UNION ALL
		SELECT message_id FROM queue_inspect('inspect-q', 3,
			(SELECT message_id FROM queue_inspect('inspect-q', 1)))) p)
	= (SELECT array_agg(message_id) FROM queue_inspect('inspect-q')) AS pages_add_up;
SELECT position('pop_receipt' IN pg_get_function_result('queue_inspect(text,integer,bigint)'::regprocedure)) = 0
       AS no_receipt_column;

-- a poison queue shows where its messages came from
SELECT queue_create('inspect-p', max_dequeue_count => 1);
SELECT count(*) FROM queue_put('inspect-p', 'fails');
SELECT count(*) FROM queue_get('inspect-p', 1, '1 millisecond');
SELECT pg_sleep(0.01);
SELECT count(*) FROM queue_get('inspect-p');
SELECT body, state, dequeue_count, source_queue FROM queue_inspect('inspect-p-poison');

-- errors
SELECT check_error($$SELECT * FROM queue_inspect(NULL)$$);
SELECT check_error($$SELECT * FROM queue_inspect('inspect-q', NULL)$$);
SELECT check_error($$SELECT * FROM queue_inspect('inspect-q', 0)$$);
SELECT check_error($$SELECT * FROM queue_inspect('inspect-q', 10001)$$);
SELECT check_error($$SELECT * FROM queue_inspect('no-such-queue')$$);

SELECT drop_all_queues();
