-- queue_clear: deletes every message of the queue (visible, delayed and
-- in flight) and returns how many; the poison queue is not touched.

SELECT queue_create('clear-me');
SELECT count(*) FROM queue_put_batch('clear-me', ARRAY['a', 'b', 'c']);
SELECT count(*) FROM queue_put('clear-me', 'later', '1 hour');
SELECT count(*) FROM queue_get('clear-me');
SELECT count(*) FROM queue_put('clear-me-poison', 'dead');

SELECT queue_clear('clear-me');
SELECT visible, in_flight, delayed, total FROM queue_stats('clear-me');
SELECT total FROM queue_stats('clear-me-poison');
SELECT queue_clear('clear-me');

-- transactional
SELECT count(*) FROM queue_put_batch('clear-me', ARRAY['x', 'y']);
BEGIN;
SELECT queue_clear('clear-me');
ROLLBACK;
SELECT total FROM queue_stats('clear-me');

-- errors
SELECT check_error($$SELECT queue_clear(NULL)$$);
SELECT check_error($$SELECT queue_clear('x!')$$);
SELECT check_error($$SELECT queue_clear('no-such-queue')$$);

SELECT drop_all_queues();
