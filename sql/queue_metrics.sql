-- queue_metrics: one row per queue and metric; the message counts come
-- from the last census (queue_maintain takes one here, where the worker is
-- off), the counters are read live.

SELECT queue_create('metrics-q', max_dequeue_count => 1);
SELECT queue_create('metrics-other', max_dequeue_count => NULL);
-- no census yet in this database, as after CREATE EXTENSION
DELETE FROM queue_storage.census;

SELECT count(*) FROM queue_put_batch('metrics-q', ARRAY['a', 'b', 'c']);
SELECT count(*) FROM queue_put('metrics-q', 'delayed', '1 hour');
SELECT count(*) FROM queue_get('metrics-q', 1, '1 hour');

-- before the first census the counts are unknown (NULL), the counters not
SELECT metric, type, value FROM queue_metrics() WHERE queue = 'metrics-q' ORDER BY metric;

SELECT count(*) FROM queue_maintain();
-- the census agrees with queue_stats, which counts the messages itself
SELECT m.queue,
	max(value) FILTER (WHERE metric = 'queue_messages_visible') = s.visible AS visible,
	max(value) FILTER (WHERE metric = 'queue_messages_in_flight') = s.in_flight AS in_flight,
	max(value) FILTER (WHERE metric = 'queue_messages_delayed') = s.delayed AS delayed,
	max(value) FILTER (WHERE metric = 'queue_puts_total') = s.puts AS puts,
	max(value) FILTER (WHERE metric = 'queue_gets_total') = s.gets AS gets,
	max(value) FILTER (WHERE metric = 'queue_oldest_message_age_seconds') > 0 AS aged,
	max(value) FILTER (WHERE metric = 'queue_census_age_seconds') BETWEEN 0 AND 60 AS fresh
FROM queue_metrics() m JOIN queue_stats() s ON s.queue = m.queue
WHERE m.queue LIKE 'metrics-%'
GROUP BY m.queue, s.visible, s.in_flight, s.delayed, s.puts, s.gets ORDER BY m.queue;
SELECT metric, value FROM queue_metrics()
WHERE queue = 'metrics-q' AND metric LIKE 'queue_messages_%' ORDER BY metric;
-- an empty queue's oldest message is 0 s old
SELECT value FROM queue_metrics()
WHERE queue = 'metrics-other' AND metric = 'queue_oldest_message_age_seconds';

-- between two censuses the counts stay, the counters move at once
SELECT count(*) FROM queue_put('metrics-q', 'e');
SELECT metric, value FROM queue_metrics()
WHERE queue = 'metrics-q' AND metric IN ('queue_messages_visible', 'queue_puts_total')
ORDER BY metric;
-- a queue created since the last census shows 0 until the next one
SELECT queue_create('metrics-new');
SELECT count(*) FROM queue_put('metrics-new', 'x');
SELECT metric, value FROM queue_metrics()
WHERE queue = 'metrics-new' AND metric IN ('queue_messages_visible', 'queue_puts_total')
ORDER BY metric;
SELECT count(*) FROM queue_maintain();
SELECT value FROM queue_metrics()
WHERE queue = 'metrics-new' AND metric = 'queue_messages_visible';

-- ten metrics for each queue, named the Prometheus way: counters end in
-- _total, gauges do not
SELECT queue, count(*) FROM queue_metrics() WHERE queue LIKE 'metrics-%'
GROUP BY queue ORDER BY queue;
SELECT count(*) AS misnamed FROM queue_metrics()
WHERE metric !~ '^queue_[a-z_]+$'
	OR (type = 'counter') <> (metric LIKE '%\_total')
	OR type NOT IN ('counter', 'gauge');

-- the census forgets dropped queues; a census writes only what changed
SELECT queue_drop('metrics-new');
SELECT taken_at AS other_taken FROM queue_storage.census c
	JOIN queue_storage.queues q USING (queue_id) WHERE q.name = 'metrics-other' \gset
SELECT count(*) FROM queue_maintain();
SELECT count(*) AS census_rows_of_dropped_queues FROM queue_storage.census c
WHERE c.queue_id <> 0 AND NOT EXISTS (SELECT 1 FROM queue_storage.queues q WHERE q.queue_id = c.queue_id);
SELECT taken_at = :'other_taken' AS unchanged_row_kept FROM queue_storage.census c
	JOIN queue_storage.queues q USING (queue_id) WHERE q.name = 'metrics-other';
SELECT taken_at > :'other_taken' AS census_time_moved FROM queue_storage.census WHERE queue_id = 0;

SELECT drop_all_queues();
