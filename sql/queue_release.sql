-- queue_release: a consumer gives a message back as failed.  It is visible
-- again after the queue's retry delay for its delivery, or goes to the
-- poison queue at the dequeue limit.

-- the queue's retry policy, as created and as altered
SELECT queue_create('rel-q', max_dequeue_count => NULL, retry_delay => '10 seconds');
SELECT retry_delay, retry_backoff, retry_delay_max FROM queue_list() WHERE queue = 'rel-q';
SELECT queue_alter('rel-q', retry_backoff => true, retry_delay_max => '1 minute');
SELECT retry_delay, retry_backoff, retry_delay_max FROM queue_list() WHERE queue = 'rel-q';
SELECT queue_alter('rel-q', retry_delay => '1 second', retry_delay_max => '5 seconds');
SELECT retry_delay, retry_backoff, retry_delay_max FROM queue_list() WHERE queue = 'rel-q';
-- what is not given stays
SELECT queue_alter('rel-q', visibility_timeout => '1 minute');
SELECT retry_delay, retry_backoff, retry_delay_max FROM queue_list() WHERE queue = 'rel-q';
SELECT retry_delay, retry_backoff, retry_delay_max FROM queue_list() WHERE queue = 'rel-q-poison';

-- with backoff the delay doubles with each delivery (1, 2, 4 s, give or
-- take 10 %), up to the cap (5 s); each release returns a new receipt that
-- works, and the dequeue count stays
SELECT message_id AS id FROM queue_put('rel-q', 'job') \gset
CREATE TEMP TABLE delays (delivery integer, seconds float8);
DO $$
DECLARE
	id bigint;
	receipt uuid;
	visible timestamptz;
BEGIN
	FOR delivery IN 1..4 LOOP
		SELECT message_id, pop_receipt INTO id, receipt FROM queue_get('rel-q');
		SELECT pop_receipt, visible_at INTO receipt, visible FROM queue_release('rel-q', id, receipt);
		INSERT INTO delays SELECT delivery, extract(epoch FROM visible - clock_timestamp());
		-- visible again at once for the next delivery (update works with the new receipt)
		IF delivery < 4 THEN
			PERFORM queue_update('rel-q', id, receipt, '0');
		END IF;
	END LOOP;
END
$$;
SELECT delivery, seconds BETWEEN least(0.9 * 2 ^ (delivery - 1), 5) - 0.2 AND least(1.1 * 2 ^ (delivery - 1), 5) AS in_range
FROM delays ORDER BY delivery;
SELECT count(*) FROM queue_get('rel-q');
SELECT dequeue_count, state FROM queue_inspect('rel-q');

-- without backoff every delivery waits the same
SELECT queue_create('rel-flat', retry_delay => '30 seconds', max_dequeue_count => NULL);
SELECT message_id AS id FROM queue_put('rel-flat', 'job') \gset
SELECT pop_receipt AS r FROM queue_get('rel-flat') \gset
SELECT visible_at - clock_timestamp() BETWEEN '29 seconds' AND '30 seconds' AS thirty_seconds
FROM queue_release('rel-flat', :id, :'r');

-- no retry delay: visible at once, to the next get
SELECT queue_create('rel-now', max_dequeue_count => 2);
SELECT message_id AS id FROM queue_put('rel-now', 'job') \gset
SELECT pop_receipt AS r FROM queue_get('rel-now') \gset
SELECT pop_receipt IS NOT NULL AS has_receipt FROM queue_release('rel-now', :id, :'r');
SELECT pop_receipt AS r, dequeue_count FROM queue_get('rel-now') \gset
SELECT :dequeue_count AS dequeue_count;
-- at the dequeue limit (2) the release moves it to the poison queue: no receipt
SELECT pop_receipt IS NULL AS no_receipt FROM queue_release('rel-now', :id, :'r');
SELECT count(*) FROM queue_get('rel-now');
SELECT body, dequeue_count FROM queue_peek('rel-now-poison');
SELECT poisoned FROM queue_stats('rel-now');

-- at the limit it goes to poison whatever its retry delay
SELECT queue_create('rel-last', max_dequeue_count => 1, retry_delay => '1 hour');
SELECT message_id AS id FROM queue_put('rel-last', 'job') \gset
SELECT pop_receipt AS r FROM queue_get('rel-last') \gset
SELECT pop_receipt IS NULL AS no_receipt FROM queue_release('rel-last', :id, :'r');
SELECT body FROM queue_peek('rel-last-poison');

-- never visible past its expiry
SELECT queue_create('rel-ttl', message_ttl => '1 minute', retry_delay => '1 hour',
	max_dequeue_count => NULL);
SELECT message_id AS id FROM queue_put('rel-ttl', 'job') \gset
SELECT pop_receipt AS r FROM queue_get('rel-ttl') \gset
SELECT visible_at = expires_at AS at_expiry FROM queue_release('rel-ttl', :id, :'r');

-- a lease taken with release_on_disconnect and given back is no longer
-- held: its session's end (here DISCARD ALL) does not cut the delay short
SELECT queue_create('rel-held', retry_delay => '1 minute', max_dequeue_count => NULL);
SELECT message_id AS id FROM queue_put('rel-held', 'job') \gset
SELECT pop_receipt AS r FROM queue_get('rel-held', release_on_disconnect => true) \gset
SELECT count(*) FROM queue_release('rel-held', :id, :'r');
DISCARD ALL;
SELECT state, visible_at > now() + '50 seconds' AS still_delayed FROM queue_inspect('rel-held');

-- errors: as queue_update's (the receipt above is no longer the newest)
SELECT check_error(format('SELECT queue_release(%L, %s, %L)', 'rel-ttl', :id, :'r'));
SELECT check_error($$SELECT queue_release('rel-ttl', -1, gen_random_uuid())$$);
SELECT check_error($$SELECT queue_release('rel-ttl', NULL, gen_random_uuid())$$);
SELECT check_error($$SELECT queue_release('rel-ttl', 1, NULL)$$);
SELECT check_error($$SELECT queue_release('no-such-queue', 1, gen_random_uuid())$$);
SELECT check_error($$SELECT queue_create('rel-bad', retry_delay => '-1 second')$$);
SELECT check_error($$SELECT queue_create('rel-bad', retry_delay => '8 days')$$);
SELECT check_error($$SELECT queue_create('rel-bad', retry_delay => NULL)$$);
SELECT check_error($$SELECT queue_create('rel-bad', retry_backoff => NULL)$$);
SELECT check_error($$SELECT queue_create('rel-bad', retry_delay_max => '-1 second')$$);
SELECT check_error($$SELECT queue_alter('rel-ttl', retry_delay_max => '8 days')$$);
SELECT count(*) FROM queue_list() WHERE queue = 'rel-bad';

-- the batch: a row per entry, in input order
SELECT queue_create('rel-batch', max_dequeue_count => 1, retry_delay => '1 minute');
SELECT count(*) FROM queue_put_batch('rel-batch', ARRAY['a', 'b']);
SELECT array_agg(message_id ORDER BY message_id) AS ids,
	array_agg(pop_receipt ORDER BY message_id) AS rs
FROM queue_get('rel-batch', 2, visibility_timeout => '1 minute') \gset
SELECT queue_alter('rel-batch', max_dequeue_count => 2);
SELECT message_id = (:'ids'::bigint[])[1] AS first, pop_receipt IS NOT NULL AS has_receipt,
	visible_at > now() + '50 seconds' AS later, status
FROM queue_release_batch('rel-batch',
	ARRAY[(:'ids'::bigint[])[1], (:'ids'::bigint[])[2], -1, NULL, (:'ids'::bigint[])[1]],
	ARRAY[(:'rs'::uuid[])[1], gen_random_uuid(), gen_random_uuid(), gen_random_uuid(),
		(:'rs'::uuid[])[1]]);
-- back at the limit of 1, the other one goes to the poison queue
SELECT queue_alter('rel-batch', max_dequeue_count => 1);
SELECT message_id = (:'ids'::bigint[])[2] AS second, pop_receipt IS NULL AS no_receipt, status
FROM queue_release_batch('rel-batch', ARRAY[(:'ids'::bigint[])[2]], ARRAY[(:'rs'::uuid[])[2]]);
SELECT body FROM queue_peek('rel-batch-poison');
SELECT check_error($$SELECT queue_release_batch('rel-batch', ARRAY[1], ARRAY[]::uuid[])$$);
SELECT check_error($$SELECT queue_release_batch('no-such-queue', ARRAY[1], ARRAY[gen_random_uuid()])$$);

SELECT drop_all_queues();
