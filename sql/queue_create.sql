-- queue_create: settings, poison queue, name rules, errors.

SELECT queue_create('create-defaults');
SELECT queue_create('create-custom', '5 minutes', '1 hour', 3, 1024);
SELECT queue_create('create-nopoison', max_dequeue_count => NULL);
SELECT queue_create('create-forever', message_ttl => NULL);
SELECT queue, visibility_timeout, message_ttl, max_dequeue_count,
       max_message_size, poison_queue
FROM queue_list() WHERE queue LIKE 'create-%' ORDER BY queue;

-- created_at is the clock at the call
BEGIN;
SELECT pg_sleep(0.05);
SELECT queue_create('create-clock');
SELECT created_at > now() + interval '40 ms' AS from_clock
FROM queue_list() WHERE queue = 'create-clock';
COMMIT;

-- names: the shortest and longest allowed; a poison queue must fit too
SELECT queue_create('abc');
SELECT queue_create(repeat('a', 73));
SELECT length(poison_queue) FROM queue_list() WHERE queue = repeat('a', 73);
SELECT check_error($$SELECT queue_create(repeat('b', 74))$$);
SELECT queue_create(repeat('b', 80), max_dequeue_count => NULL);
SELECT queue_create('0-9');

-- SQS's names (Azure's are among them): case-sensitive, '_', one character
SELECT queue_create(name, max_dequeue_count => NULL)
FROM unnest(ARRAY['x', 'ab', 'Upper', 'upper', 'under_score', '-lead', 'trail-',
                  'dou--ble', '_']) AS name;
SELECT queue FROM queue_list()
WHERE queue = ANY (ARRAY['x', 'ab', 'Upper', 'upper', 'under_score', '-lead', 'trail-',
                         'dou--ble', '_'])
ORDER BY queue COLLATE "C";
SELECT count(queue_drop(name))
FROM unnest(ARRAY['x', 'ab', 'Upper', 'upper', 'under_score', '-lead', 'trail-',
                  'dou--ble', '_']) AS name;

-- FIFO names end in ".fifo", counted in the 80; the poison queue of one is
-- FIFO too
SELECT queue_create('orders.fifo');
SELECT queue_create('f.fifo', max_dequeue_count => NULL);
SELECT queue_create(repeat('f', 75) || '.fifo', max_dequeue_count => NULL);
SELECT queue, poison_queue FROM queue_list() WHERE queue LIKE '%.fifo' ORDER BY queue;
SELECT count(queue_drop(name))
FROM unnest(ARRAY['orders.fifo', 'orders-poison.fifo', 'f.fifo', repeat('f', 75) || '.fifo']) AS name;

-- bad names: 22023
SELECT name, check_error(format('SELECT queue_create(%L)', name))
FROM unnest(ARRAY['', repeat('c', 81), 'dot.ted', '.fifo', 'orders.fifo.fifo', 'orders.FIFO', 'or.ders.fifo',
                  repeat('c', 76) || '.fifo', 'sp ace', 'quo''te',
                  'semi;colon', 'dollar$$', 'per%cent', 'ünï-code', 'sla/sh']) AS name;

-- NULL arguments: 22004 (message_ttl and max_dequeue_count may be NULL)
SELECT check_error($$SELECT queue_create(NULL)$$);
SELECT check_error($$SELECT queue_create('create-x', NULL)$$);
SELECT check_error($$SELECT queue_create('create-x', max_message_size => NULL)$$);

-- out of range: 22023
SELECT check_error($$SELECT queue_create('create-x', '0')$$);
SELECT check_error($$SELECT queue_create('create-x', '-1 second')$$);
SELECT check_error($$SELECT queue_create('create-x', '7 days 1 second')$$);
SELECT check_error($$SELECT queue_create('create-x', '1 year')$$);
SELECT check_error($$SELECT queue_create('create-x', message_ttl => '0')$$);
SELECT check_error($$SELECT queue_create('create-x', message_ttl => '-1 second')$$);
SELECT check_error($$SELECT queue_create('create-x', message_ttl => '1000000 years')$$);
SELECT check_error($$SELECT queue_create('create-x', max_dequeue_count => 0)$$);
SELECT check_error($$SELECT queue_create('create-x', max_dequeue_count => -1)$$);
SELECT check_error($$SELECT queue_create('create-x', max_message_size => 0)$$);
SELECT check_error($$SELECT queue_create('create-x', max_message_size => 1073741824)$$);
SELECT queue_create('create-limits', '7 days', '1 microsecond', 1, 1073741823);
SELECT queue, visibility_timeout, message_ttl, max_dequeue_count, max_message_size
FROM queue_list() WHERE queue = 'create-limits';

-- already exists: 42710, for the queue and for its poison queue
SELECT check_error($$SELECT queue_create('create-defaults')$$);
SELECT check_error($$SELECT queue_create('create-defaults-poison')$$);

-- a regular queue named like the poison queue of a new one is in the way
SELECT queue_create('blocker-poison', max_dequeue_count => NULL);
SELECT queue_create('blocker');
SELECT queue_create('blocker', max_dequeue_count => NULL);

-- a poison queue left by a dropped queue is taken over, messages and all
SELECT queue_create('adopt');
SELECT message_id AS adopted_id FROM queue_put('adopt-poison', 'dead letter') \gset
SELECT queue_drop('adopt');
SELECT queue_create('adopt', max_dequeue_count => 2);
SELECT queue, poison_queue FROM queue_list() WHERE queue LIKE 'adopt%' ORDER BY queue;
SELECT message_id = :adopted_id AS same_message, body FROM queue_peek('adopt-poison');

-- transactional: a rolled-back create never happened
BEGIN;
SELECT queue_create('create-rolled-back');
SELECT count(*) FROM queue_list() WHERE queue LIKE 'create-rolled-back%';
ROLLBACK;
SELECT count(*) FROM queue_list() WHERE queue LIKE 'create-rolled-back%';
SELECT check_error($$SELECT queue_put('create-rolled-back', 'x')$$);

-- created in the transaction that uses it
BEGIN;
SELECT queue_create('create-and-use');
SELECT pop_receipt IS NOT NULL AS put FROM queue_put('create-and-use', 'x');
SELECT body FROM queue_peek('create-and-use');
COMMIT;

SELECT drop_all_queues() > 0 AS dropped;
