-- topics: queue_topic_create, queue_topic_drop, queue_subscribe,
-- queue_unsubscribe, queue_publish and queue_topics.  A publish puts one
-- message into every subscribed queue whose filter matches its headers.

SELECT queue_topic_create('orders');
SELECT queue_create('all-orders');
SELECT queue_create('eu-orders');
SELECT queue_create('big-orders', message_ttl => '1 hour');
SELECT queue_subscribe('orders', 'all-orders');
SELECT queue_subscribe('orders', 'eu-orders', '{"region": ["eu-west", "eu-central"]}');
SELECT queue_subscribe('orders', 'big-orders', '{"total": [{"numeric": [">=", 100]}]}');
SELECT topic, queue, filter FROM queue_topics();

-- one message per matching queue, in the order of the queues' names
SELECT queue FROM queue_publish('orders', 'o1', '{"region": "eu-west", "total": 250}');
SELECT queue FROM queue_publish('orders', 'o2', '{"region": "us-east", "total": 10}');
SELECT queue FROM queue_publish('orders', 'o3');
SELECT queue, body, headers FROM
	(SELECT 'all-orders' AS queue, * FROM queue_peek('all-orders', 10)
	 UNION ALL SELECT 'eu-orders', * FROM queue_peek('eu-orders', 10)
	 UNION ALL SELECT 'big-orders', * FROM queue_peek('big-orders', 10)) m
ORDER BY queue, body;
-- the message id a row gives is the message's in that queue (the rows a
-- publish wrote are read by the next statement)
CREATE TEMP TABLE published AS
	SELECT * FROM queue_publish('orders', 'o4', '{"total": 100}');
SELECT p.queue, m.body, q.name = p.queue AS in_its_queue FROM published p
	JOIN queue_storage.messages m ON m.message_id = p.message_id
	JOIN queue_storage.queues q ON q.queue_id = m.queue_id ORDER BY p.queue;

-- each queue's settings: its ttl, unless the publish gives one; the delay given
TRUNCATE published;
INSERT INTO published SELECT * FROM queue_publish('orders', 'o5', '{"total": 500}');
SELECT p.queue, expires_at - inserted_at AS ttl, visible_at - inserted_at AS delay FROM published p
	JOIN queue_storage.messages m ON m.message_id = p.message_id ORDER BY p.queue;
TRUNCATE published;
INSERT INTO published
	SELECT * FROM queue_publish('orders', 'o6', '{"total": 500}', visibility_timeout => '1 minute', ttl => '2 hours');
SELECT p.queue, expires_at - inserted_at AS ttl, visible_at - inserted_at AS delay FROM published p
	JOIN queue_storage.messages m ON m.message_id = p.message_id ORDER BY p.queue;

-- all or nothing, in the caller's transaction
SELECT queue_clear('all-orders') + queue_clear('eu-orders') + queue_clear('big-orders') AS cleared;
BEGIN;
SELECT count(*) FROM queue_publish('orders', 'rolled back', '{"region": "eu-west", "total": 1000}');
ROLLBACK;
SELECT count(*) FROM queue_peek('all-orders', 10);
SELECT count(*) FROM queue_peek('eu-orders', 10);
SELECT count(*) FROM queue_peek('big-orders', 10);
-- a body too large for one queue fails the whole publish
SELECT queue_create('tiny', max_message_size => 4);
SELECT queue_subscribe('orders', 'tiny');
SELECT check_error($$SELECT queue_publish('orders', 'too large for tiny')$$);
SELECT count(*) FROM queue_peek('all-orders', 10);
SELECT queue_unsubscribe('orders', 'tiny');
SELECT queue_drop('tiny');

-- deduplication, groups and priority reach every queue
SELECT queue_create('dedup-q', deduplication_window => '1 minute');
SELECT queue_topic_create('events');
SELECT queue_subscribe('events', 'dedup-q');
SELECT queue_subscribe('events', 'all-orders');
SELECT message_id AS first_id FROM queue_publish('events', 'e1', deduplication_id => 'd1') WHERE queue = 'dedup-q' \gset
SELECT message_id = :first_id AS same_message FROM queue_publish('events', 'e1 again', deduplication_id => 'd1') WHERE queue = 'dedup-q';
SELECT count(*) FROM queue_peek('dedup-q', 10);
TRUNCATE published;
INSERT INTO published SELECT * FROM queue_publish('events', 'e2', group_id => 'g', priority => 7);
SELECT p.queue, group_id, priority FROM published p
	JOIN queue_storage.messages m ON m.message_id = p.message_id ORDER BY p.queue;

-- no subscription matches: no rows, no error; a topic without subscriptions too
SELECT queue_topic_create('quiet');
SELECT count(*) FROM queue_publish('quiet', 'nobody listens');
SELECT topic, queue, filter FROM queue_topics() WHERE topic = 'quiet';

-- subscribing again replaces the filter; unsubscribing twice is no error
SELECT queue_subscribe('orders', 'eu-orders', '{"region": ["us-east"]}');
SELECT filter FROM queue_topics() WHERE queue = 'eu-orders';
SELECT queue FROM queue_publish('orders', 'o7', '{"region": "us-east"}');
SELECT queue_unsubscribe('orders', 'eu-orders');
SELECT queue_unsubscribe('orders', 'eu-orders');
SELECT queue FROM queue_publish('orders', 'o8', '{"region": "us-east"}');

-- the filters, every operator: a subscription each, then which queues a
-- message with these headers reaches
SELECT queue_topic_create('f');
SELECT count(queue_create(q)) FROM unnest(ARRAY['f-exact', 'f-number', 'f-bool', 'f-prefix', 'f-but',
	'f-but-number', 'f-but-prefix', 'f-range', 'f-eq', 'f-lt', 'f-exists', 'f-missing',
	'f-and', 'f-nested', 'f-or', 'f-nested-missing']) AS q;
SELECT queue_subscribe('f', 'f-exact', '{"color": ["red", "blue"]}');
SELECT queue_subscribe('f', 'f-number', '{"size": [10]}');
SELECT queue_subscribe('f', 'f-bool', '{"urgent": [true]}');
SELECT queue_subscribe('f', 'f-prefix', '{"color": [{"prefix": "bl"}]}');
SELECT queue_subscribe('f', 'f-but', '{"color": [{"anything-but": ["red", "green"]}]}');
SELECT queue_subscribe('f', 'f-but-number', '{"size": [{"anything-but": 10}]}');
SELECT queue_subscribe('f', 'f-but-prefix', '{"color": [{"anything-but": {"prefix": "re"}}]}');
SELECT queue_subscribe('f', 'f-range', '{"size": [{"numeric": [">", 0, "<=", 10]}]}');
SELECT queue_subscribe('f', 'f-eq', '{"size": [{"numeric": ["=", 10.0]}]}');
SELECT queue_subscribe('f', 'f-lt', '{"size": [{"numeric": ["<", 5]}]}');
SELECT queue_subscribe('f', 'f-exists', '{"color": [{"exists": true}]}');
SELECT queue_subscribe('f', 'f-missing', '{"color": [{"exists": false}]}');
SELECT queue_subscribe('f', 'f-and', '{"color": ["red"], "size": [{"numeric": [">=", 10]}]}');
SELECT queue_subscribe('f', 'f-nested', '{"customer": {"tier": ["gold"]}}');
SELECT queue_subscribe('f', 'f-or', '{"color": ["red", {"prefix": "gr"}, {"exists": false}]}');
SELECT queue_subscribe('f', 'f-nested-missing', '{"customer": {"tier": [{"exists": false}]}}');

CREATE FUNCTION reached(headers jsonb) RETURNS text
LANGUAGE sql AS $$
	SELECT coalesce(string_agg(substr(queue, 3), ' '), '(none)') FROM queue_publish('f', 'x', headers)
$$;
SELECT h AS headers, reached(h::jsonb) FROM (VALUES
	('{"color": "red", "size": 10}'),
	('{"color": "blue", "size": 3}'),
	('{"color": "black", "size": 10.00}'),
	('{"color": "green"}'),
	('{"size": 10}'),
	('{"size": -1}'),
	('{"size": "10"}'),
	('{"color": 5}'),
	('{"color": null}'),
	('{"color": ["green", "red"]}'),
	('{"color": ["green"]}'),
	('{"urgent": true}'),
	('{"urgent": "true"}'),
	('{"customer": {"tier": "gold"}}'),
	('{"customer": {"tier": "silver"}}'),
	('{"customer": "gold"}'),
	('{}'),
	(NULL)
) AS t(h);

-- malformed filters: 22023 when subscribing, with what is wrong
SELECT message, detail FROM (VALUES
	('"red"'),
	('[]'),
	('{}'),
	('{"color": "red"}'),
	('{"color": []}'),
	('{"color": [null]}'),
	('{"color": [["red"]]}'),
	('{"color": {}}'),
	('{"color": [{"suffix": "ed"}]}'),
	('{"color": [{"prefix": "r", "exists": true}]}'),
	('{"color": [{"prefix": 5}]}'),
	('{"color": [{"prefix": ""}]}'),
	('{"color": [{"anything-but": []}]}'),
	('{"color": [{"anything-but": [true]}]}'),
	('{"color": [{"anything-but": {"suffix": "x"}}]}'),
	('{"size": [{"numeric": [">", "5"]}]}'),
	('{"size": [{"numeric": ["!=", 5]}]}'),
	('{"size": [{"numeric": [">", 5, "<"]}]}'),
	('{"size": [{"numeric": ["<", 5, ">", 1]}]}'),
	('{"size": [{"numeric": [">", 5, "<", 5]}]}'),
	('{"size": [{"numeric": ["=", 5, "<", 9]}]}'),
	('{"size": [{"exists": "yes"}]}'),
	('{"a": {"b": [{"numeric": 5}]}}')
) AS t(filter),
LATERAL error_details(format('SELECT queue_subscribe(%L, %L, %L)', 'f', 'f-exact', filter));
-- a failed subscribe leaves the subscription as it was
SELECT filter FROM queue_topics() WHERE queue = 'f-exact';

-- one namespace: a topic may not take a queue's name, nor a queue a topic's
SELECT check_error($$SELECT queue_topic_create('all-orders')$$);
SELECT check_error($$SELECT queue_create('orders')$$);
SELECT check_error($$SELECT queue_topic_create('orders')$$);
-- a queue whose poison queue would take a topic's name
SELECT queue_topic_create('clash-poison');
SELECT check_error($$SELECT queue_create('clash')$$);

-- bad arguments
SELECT check_error($$SELECT queue_topic_create(NULL)$$);
SELECT check_error($$SELECT queue_topic_create('no spaces')$$);
SELECT check_error($$SELECT queue_publish(NULL, 'x')$$);
SELECT check_error($$SELECT queue_publish('orders', NULL)$$);
SELECT check_error($$SELECT queue_publish('orders', 'x', '[1]')$$);
SELECT check_error($$SELECT queue_publish('orders', 'x', priority => 101)$$);
SELECT check_error($$SELECT queue_publish('orders', 'x', priority => NULL)$$);
SELECT check_error($$SELECT queue_publish('orders', 'x', group_id => '')$$);
SELECT check_error($$SELECT queue_publish('orders', 'x', visibility_timeout => '8 days')$$);
SELECT check_error($$SELECT queue_publish('orders', 'x', ttl => '0')$$);
SELECT check_error($$SELECT queue_publish('no-such-topic', 'x')$$);
SELECT check_error($$SELECT queue_subscribe('no-such-topic', 'all-orders')$$);
SELECT check_error($$SELECT queue_subscribe('orders', 'no-such-queue')$$);
SELECT check_error($$SELECT queue_subscribe('orders', NULL)$$);
SELECT check_error($$SELECT queue_unsubscribe('orders', 'no-such-queue')$$);
SELECT check_error($$SELECT queue_topic_drop('no-such-topic')$$);

-- dropping a queue ends its subscriptions; dropping a topic leaves the
-- queues and their messages
SELECT queue_drop('big-orders');
SELECT topic, queue FROM queue_topics() WHERE topic = 'orders';
SELECT count(*) FROM queue_peek('all-orders', 10) AS before_drop;
SELECT queue_topic_drop('orders');
SELECT count(*) FROM queue_peek('all-orders', 10) AS after_drop;
SELECT count(*) FROM queue_topics() WHERE topic = 'orders';
SELECT check_error($$SELECT queue_publish('orders', 'x')$$);
-- the name is free again, for a queue as for a topic
SELECT queue_create('orders');
SELECT queue_drop('orders');

SELECT queue_topic_drop(topic) FROM (SELECT DISTINCT topic FROM queue_topics()) t;
SELECT drop_all_queues() > 0 AS dropped;
DROP FUNCTION reached(jsonb);
DROP TABLE published;
