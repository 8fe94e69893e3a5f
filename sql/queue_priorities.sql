-- Priorities: among visible messages a higher priority goes out first,
-- equal priorities in visibility order; inside a group put order wins.

SELECT queue_create('prio-q');
SELECT priority FROM queue_put_batch('prio-q',
	ARRAY['normal1', 'low', 'urgent', 'normal2', 'high', 'lowest', 'urgent2'],
	priorities => ARRAY[0, -10, 100, NULL, 5, -100, 100]);
SELECT body, priority FROM queue_peek('prio-q', 10);
SELECT body, priority FROM queue_get('prio-q', 3);
SELECT body, priority FROM queue_get('prio-q', 10);

-- a delayed urgent message waits for its time, then comes first
SELECT queue_create('prio-delay');
SELECT count(*) FROM queue_put('prio-delay', 'later urgent', '1 second', priority => 50);
SELECT count(*) FROM queue_put('prio-delay', 'now normal');
SELECT body FROM queue_get('prio-delay');
SELECT count(*) FROM queue_put('prio-delay', 'now normal 2');
SELECT pg_sleep(1.1);
SELECT body FROM queue_get('prio-delay', 10);

-- a released message keeps its priority
SELECT queue_create('prio-release');
SELECT count(*) FROM queue_put('prio-release', 'plain');
SELECT message_id AS id, pop_receipt AS r FROM queue_put('prio-release', 'high', priority => 1) \gset
SELECT message_id AS id, pop_receipt AS r FROM queue_get('prio-release') \gset
SELECT count(*) FROM queue_update('prio-release', :id, :'r', '0');
SELECT body, priority, dequeue_count FROM queue_get('prio-release', 10);

-- inside a group put order wins over priority
SELECT queue_create('prio-group');
SELECT count(*) FROM queue_put('prio-group', 'first', group_id => 'g', priority => -5);
SELECT count(*) FROM queue_put('prio-group', 'second', group_id => 'g', priority => 50);
SELECT count(*) FROM queue_put('prio-group', 'other', priority => 10);
SELECT body, priority FROM queue_get('prio-group', 10);

-- a queue found with no message at another priority: its gets skip those
-- levels for a while, until a put of one says otherwise
SELECT queue_create('prio-skip');
SELECT count(*) FROM queue_get('prio-skip');
SELECT count(*) FROM queue_get('prio-skip');
SELECT count(*) FROM queue_put('prio-skip', 'plain');
SELECT count(*) FROM queue_put('prio-skip', 'urgent', priority => 5);
SELECT count(*) FROM queue_put('prio-skip', 'low', priority => -5);
SELECT body, priority FROM queue_get('prio-skip');
SELECT body, priority FROM queue_get('prio-skip', 10);
SELECT count(*) FROM queue_get('prio-skip');
SELECT count(*) FROM queue_put('prio-skip', 'low again', priority => -1);
SELECT body, priority FROM queue_get('prio-skip', 10);

-- so does a message moved to a poison queue found with none
SELECT queue_create('prio-moved', max_dequeue_count => 1);
SELECT count(*) FROM queue_get('prio-moved-poison');
SELECT count(*) FROM queue_get('prio-moved-poison');
SELECT count(*) FROM queue_put('prio-moved', 'urgent', priority => 5);
SELECT message_id AS id, pop_receipt AS r FROM queue_get('prio-moved') \gset
SELECT count(*) FROM queue_update('prio-moved', :id, :'r', '0');
SELECT body, priority FROM queue_get('prio-moved-poison');

-- -100 to 100, not NULL
SELECT queue_put('prio-q', 'x', priority => 101);
SELECT queue_put('prio-q', 'x', priority => -101);
SELECT queue_put('prio-q', 'x', priority => NULL);
SELECT queue_put_batch('prio-q', ARRAY['x'], priorities => ARRAY[200]);
SELECT queue_put_batch('prio-q', ARRAY['x', 'y'], priorities => ARRAY[1]);

SELECT drop_all_queues();
