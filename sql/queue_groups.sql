-- Message groups: a group's messages go out in put order, one group in
-- flight at a time; fairness between groups; the turn passes on when the
-- first message leaves (deleted, moved to poison, expired).

SELECT queue_create('group-q', visibility_timeout => '1 hour', max_dequeue_count => 2);

-- the first message of a group is visible, the next ones wait
SELECT n, group_id, priority, visible_at = 'infinity' AS waiting
FROM queue_put_batch('group-q', ARRAY['g1', 'g2', 'g3', 'h1'],
					 group_ids => ARRAY['g', 'g', 'g', 'h'])
	WITH ORDINALITY AS r(message_id, pop_receipt, visible_at, inserted_at,
						 expires_at, group_id, priority, n);
SELECT body, state, group_id FROM queue_inspect('group-q') ORDER BY message_id;
-- a single put into a group with messages waits too
SELECT message_id AS g4, pop_receipt AS g4_receipt, visible_at = 'infinity' AS waiting, group_id
FROM queue_put('group-q', 'g4', group_id => 'g') \gset
SELECT :'waiting' AS waiting, :'group_id' AS group_id;
-- waiting messages count as delayed
SELECT visible, in_flight, delayed FROM queue_stats('group-q');

-- peek and get show a group's first message only
SELECT body FROM queue_peek('group-q', 10);
SELECT message_id AS g1, pop_receipt AS r, body, group_id FROM queue_get('group-q') \gset
SELECT :'body' AS got, :'group_id' AS of_group;
SELECT message_id AS h1, pop_receipt AS h1_receipt, body FROM queue_get('group-q') \gset
SELECT :'body' AS got;
-- both groups in flight: nothing more to get or peek
SELECT count(*) AS got FROM queue_get('group-q', 10);
SELECT count(*) AS peeked FROM queue_peek('group-q', 10);

-- a released first message comes back before the next of its group
SELECT visible_at <= clock_timestamp() AS released FROM queue_update('group-q', :g1, :'r', '0');
SELECT message_id = :g1 AS same_message, pop_receipt AS r, body, dequeue_count
FROM queue_get('group-q') \gset
SELECT :'same_message' AS same_message, :'body' AS body, :dequeue_count AS dequeue_count;

-- deleted, its turn passes to the next: g2 becomes visible
SELECT queue_delete('group-q', :g1, :'r');
SELECT body, state FROM queue_inspect('group-q') WHERE group_id = 'g' ORDER BY message_id;
SELECT message_id AS g2, pop_receipt AS r, body FROM queue_get('group-q') \gset
SELECT :'body' AS got;

-- a message that waits keeps waiting when its put's receipt updates it
SELECT visible_at = 'infinity' AS waiting
FROM queue_update('group-q', :g4, :'g4_receipt', '0', body => 'g4 changed');
SELECT body, state FROM queue_inspect('group-q') WHERE message_id = :g4;

-- the poison limit (2): g2 released twice goes to the poison queue on the
-- next get, keeps its group there, and g3's turn comes
SELECT count(*) FROM queue_update('group-q', :g2, :'r', '0');
SELECT message_id AS g2, pop_receipt AS r, dequeue_count FROM queue_get('group-q') \gset
SELECT :dequeue_count AS dequeue_count;
SELECT count(*) FROM queue_update('group-q', :g2, :'r', '0');
SELECT body, group_id FROM queue_get('group-q');
SELECT body, group_id, state FROM queue_inspect('group-q-poison');
SELECT body, state FROM queue_inspect('group-q') WHERE group_id = 'g' ORDER BY message_id;

-- redriven, g2 keeps its group and goes to its end, with a new id, as a
-- put would: it waits behind g3 and g4
SELECT queue_redrive('group-q-poison');
SELECT body, state, group_id, message_id > :g4 AS after_g4
FROM queue_inspect('group-q') WHERE group_id = 'g' ORDER BY message_id;
SELECT count(*) AS got FROM queue_get('group-q', 10);

-- a redrive from a queue that is no poison queue hands the turn on there
SELECT queue_create('group-from');
SELECT queue_create('group-to');
SELECT count(*) FROM queue_put_batch('group-from', ARRAY['f1', 'f2'], group_ids => ARRAY['f', 'f']);
SELECT queue_redrive('group-from', 'group-to', 1);
SELECT body, state FROM queue_inspect('group-from');
SELECT body, state FROM queue_inspect('group-to');

-- fairness: a get of N takes the first message of up to N groups before a
-- second message of any group, then the next ones in put order
SELECT queue_create('fair-q');
SELECT count(*) FROM queue_put_batch('fair-q',
	ARRAY['big1', 'big2', 'big3', 'big4', 'big5'], group_ids => ARRAY['big', 'big', 'big', 'big', 'big']);
SELECT count(*) FROM queue_put('fair-q', 'one', group_id => 'one');
SELECT count(*) FROM queue_put('fair-q', 'plain');
SELECT count(*) FROM queue_put('fair-q', 'two1', group_id => 'two');
SELECT count(*) FROM queue_put('fair-q', 'two2', group_id => 'two');
SELECT body FROM queue_get('fair-q', 3);
-- the groups taken are in flight: only group two is left
SELECT body FROM queue_get('fair-q', 10);
-- a get larger than the groups: the first of each, then round after round
SELECT queue_create('rounds-q');
SELECT count(*) FROM queue_put_batch('rounds-q',
	ARRAY['big1', 'big2', 'big3', 'big4', 'one', 'two1', 'two2'],
	group_ids => ARRAY['big', 'big', 'big', 'big', 'one', 'two', 'two']);
SELECT body FROM queue_get('rounds-q', 10);

-- deleting every message of a group in one batch hands the turn on once
SELECT queue_create('batch-q');
SELECT count(*) FROM queue_put_batch('batch-q', ARRAY['a1', 'a2', 'a3'], group_ids => ARRAY['a', 'a', 'a']);
SELECT array_agg(message_id ORDER BY message_id) AS ids, array_agg(pop_receipt ORDER BY message_id) AS rs
FROM queue_get('batch-q', 2) \gset
SELECT status FROM queue_delete_batch('batch-q', :'ids', :'rs');
SELECT body FROM queue_get('batch-q', 10);

-- expiry: the first message expires, the sweep hands the turn on
SELECT queue_create('expiry-q');
SELECT count(*) FROM queue_put('expiry-q', 'short', ttl => '1 second', group_id => 'e');
SELECT count(*) FROM queue_put('expiry-q', 'next', group_id => 'e');
SELECT pg_sleep(1.1);
SELECT expired FROM queue_maintain();
SELECT body FROM queue_get('expiry-q');

-- a group's messages cannot be delayed; ids 1 to 128 characters
SELECT queue_put('group-q', 'late', '1 minute', group_id => 'g');
SELECT queue_put('group-q', 'x', group_id => '');
SELECT queue_put('group-q', 'x', group_id => repeat('x', 129));
SELECT count(*) FROM queue_put('group-q', 'x', group_id => repeat('x', 128));
SELECT queue_put_batch('group-q', ARRAY['x', 'y'], group_ids => ARRAY['a']);
SELECT queue_put_batch('group-q', ARRAY['x', 'y'], group_ids => ARRAY['a', '']);

-- groups are per queue, and group ids compare as written
SELECT queue_create('group-other');
SELECT visible_at = 'infinity' AS waiting FROM queue_put('group-other', 'x', group_id => 'g');
SELECT visible_at = 'infinity' AS waiting FROM queue_put('group-other', 'y', group_id => 'G');

SELECT drop_all_queues();
