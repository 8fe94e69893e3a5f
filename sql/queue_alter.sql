-- queue_alter: changes the settings given, keeps the messages.

SELECT queue_create('alter-q', '30 seconds', '1 day', NULL, 100);
SELECT count(*) FROM queue_put('alter-q', 'kept', ttl => '1 hour');
SELECT expires_at - inserted_at AS old_ttl FROM queue_peek('alter-q');

SELECT queue_alter('alter-q', visibility_timeout => '2 minutes', max_message_size => 10);
SELECT queue, visibility_timeout, message_ttl, max_dequeue_count, max_message_size, poison_queue
FROM queue_list() WHERE queue = 'alter-q';
-- the new size applies at once (the settings cache was told), stored
-- messages stay as they were
SELECT check_error($$SELECT queue_put('alter-q', 'eleven byte')$$);
SELECT body, expires_at - inserted_at AS old_ttl FROM queue_peek('alter-q');
SELECT visible_at - clock_timestamp() > interval '119 s' AS new_lease FROM queue_get('alter-q');

-- ttl: '-1 second' is never; poison routing on creates alter-q-poison
SELECT queue_alter('alter-q', message_ttl => '-1 second', max_dequeue_count => 3);
SELECT queue, message_ttl, max_dequeue_count, poison_queue
FROM queue_list() WHERE queue LIKE 'alter-q%' ORDER BY queue;
SELECT expires_at IS NULL AS never_expires FROM queue_put('alter-q', 'new');
-- changing the count keeps the poison queue; 0 stops routing, the poison
-- queue stays and can then be dropped
SELECT queue_alter('alter-q', max_dequeue_count => 5);
SELECT queue_alter('alter-q', max_dequeue_count => 0);
SELECT queue, max_dequeue_count, poison_queue FROM queue_list() WHERE queue LIKE 'alter-q%' ORDER BY queue;
SELECT queue_drop('alter-q-poison');
-- and on again: a new poison queue
SELECT queue_alter('alter-q', max_dequeue_count => 1, message_ttl => '5 minutes');
SELECT queue, message_ttl, max_dequeue_count, poison_queue FROM queue_list() WHERE queue LIKE 'alter-q%' ORDER BY queue;

-- a new max_dequeue_count applies to the stored messages: those handed out
-- that often already are on their last lease (marked for the sweep), the
-- others no longer
SELECT queue_create('limit-q', max_dequeue_count => 5);
SELECT count(*) FROM queue_put_batch('limit-q', ARRAY['twice', 'once']);
SELECT count(*) FROM queue_get('limit-q', 2, visibility_timeout => '1 millisecond');
SELECT pg_sleep(0.01);
SELECT body FROM queue_get('limit-q', visibility_timeout => '1 millisecond');
SELECT pg_sleep(0.01);
SELECT body, dequeue_count, last_lease FROM queue_storage.messages WHERE body IN ('once', 'twice') ORDER BY body;
SELECT queue_alter('limit-q', max_dequeue_count => 2);
SELECT body, dequeue_count, last_lease FROM queue_storage.messages WHERE body IN ('once', 'twice') ORDER BY body;
SELECT queue_alter('limit-q', max_dequeue_count => 1);
SELECT body, dequeue_count, last_lease FROM queue_storage.messages WHERE body IN ('once', 'twice') ORDER BY body;
SELECT queue_alter('limit-q', max_dequeue_count => 0);
SELECT body, dequeue_count, last_lease FROM queue_storage.messages WHERE body IN ('once', 'twice') ORDER BY body;
SELECT queue_alter('limit-q', max_dequeue_count => 2);
SELECT * FROM queue_maintain();
SELECT body, dequeue_count FROM queue_peek('limit-q-poison');
SELECT body, dequeue_count, last_lease FROM queue_storage.messages WHERE body IN ('once', 'twice') ORDER BY body;
-- rolled back, the marks are as they were
BEGIN;
SELECT queue_alter('limit-q', max_dequeue_count => 1);
SELECT body, last_lease FROM queue_storage.messages WHERE body = 'once';
ROLLBACK;
SELECT body, last_lease FROM queue_storage.messages WHERE body = 'once';

-- delay: of the puts that name no visibility_timeout, from now on
SELECT queue_create('alter-delay', max_dequeue_count => NULL);
SELECT visible_at = inserted_at AS at_once FROM queue_put('alter-delay', 'before');
SELECT queue_alter('alter-delay', delay => '30 seconds');
SELECT delay FROM queue_list() WHERE queue = 'alter-delay';
SELECT visible_at - inserted_at AS delayed_by FROM queue_put('alter-delay', 'after');
SELECT body, visible_at > now() AS delayed FROM queue_storage.messages m
JOIN queue_storage.queues q USING (queue_id) WHERE q.name = 'alter-delay' ORDER BY body;
SELECT queue_alter('alter-delay', delay => '0');
SELECT delay FROM queue_list() WHERE queue = 'alter-delay';
SELECT check_error($$SELECT queue_alter('alter-delay', delay => '-1 second')$$);
SELECT check_error($$SELECT queue_alter('alter-delay', delay => '8 days')$$);

-- attributes and tags: merged in, a key set to null removed, strings only
SELECT queue_alter('alter-delay', attributes => '{"Policy": "{}", "KmsDataKeyReusePeriodSeconds": "300"}',
                   tags => '{"team": "orders", "env": "prod"}');
SELECT queue_alter('alter-delay', tags => '{"env": null, "cost": "7"}');
SELECT queue_alter('alter-delay', attributes => '{"Policy": null}');
SELECT attributes, tags FROM queue_list() WHERE queue = 'alter-delay';
SELECT check_error($$SELECT queue_alter('alter-delay', tags => '["a"]')$$);
SELECT check_error($$SELECT queue_alter('alter-delay', tags => '{"n": 1}')$$);
SELECT check_error($$SELECT queue_alter('alter-delay', attributes => '{"a": {"b": "c"}}')$$);
SELECT check_error($$SELECT queue_alter('alter-delay', attributes => '"text"')$$);

-- poison_queue: any other queue takes the poison messages
SELECT queue_create('alter-dlq', max_dequeue_count => NULL);
SELECT queue_alter('alter-delay', max_dequeue_count => 1, poison_queue => 'alter-dlq');
SELECT max_dequeue_count, poison_queue FROM queue_list() WHERE queue = 'alter-delay';
SELECT count(*) FROM queue_get('alter-delay', 10, '1 second');
SELECT count(*) FROM queue_update_batch('alter-delay',
	ARRAY(SELECT message_id FROM queue_storage.messages m JOIN queue_storage.queues q USING (queue_id) WHERE q.name = 'alter-delay'),
	ARRAY(SELECT pop_receipt FROM queue_storage.messages m JOIN queue_storage.queues q USING (queue_id) WHERE q.name = 'alter-delay'),
	'0');
SELECT body, source_queue FROM queue_inspect('alter-dlq') ORDER BY body;
SELECT queue FROM queue_list() WHERE queue = 'alter-delay-poison';
SELECT check_error($$SELECT queue_alter('alter-delay', poison_queue => 'alter-delay')$$);
SELECT check_error($$SELECT queue_alter('alter-delay', poison_queue => 'no-such-queue')$$);
SELECT check_error($$SELECT queue_alter('alter-dlq', poison_queue => 'alter-delay')$$);
SELECT check_error($$SELECT queue_alter('alter-delay', max_dequeue_count => 0, poison_queue => 'alter-dlq')$$);
SELECT queue_drop('alter-delay');
SELECT queue_drop('alter-dlq');

-- nothing given: nothing changes
SELECT queue_alter('alter-q');
SELECT visibility_timeout, message_ttl, max_dequeue_count, max_message_size FROM queue_list() WHERE queue = 'alter-q';

-- errors
SELECT check_error($$SELECT queue_alter(NULL)$$);
SELECT check_error($$SELECT queue_alter('no-such-queue')$$);
SELECT check_error($$SELECT queue_alter('alter-q', visibility_timeout => '0')$$);
SELECT check_error($$SELECT queue_alter('alter-q', visibility_timeout => '8 days')$$);
SELECT check_error($$SELECT queue_alter('alter-q', message_ttl => '0')$$);
SELECT check_error($$SELECT queue_alter('alter-q', message_ttl => '-2 seconds')$$);
SELECT check_error($$SELECT queue_alter('alter-q', max_dequeue_count => -1)$$);
SELECT check_error($$SELECT queue_alter('alter-q', max_message_size => 0)$$);
SELECT check_error($$SELECT queue_alter('alter-q-poison', max_dequeue_count => 2)$$);
SELECT queue_create(repeat('l', 77), max_dequeue_count => NULL);
SELECT check_error(format('SELECT queue_alter(%L, max_dequeue_count => 2)', repeat('l', 77)));

-- transactional
BEGIN;
SELECT queue_alter('alter-q', max_message_size => 1000);
ROLLBACK;
SELECT max_message_size FROM queue_list() WHERE queue = 'alter-q';

SELECT drop_all_queues();
