-- queue_pause, queue_resume: a paused queue hands nothing out; puts,
-- peeks, updates, releases and deletes go on.

SELECT queue_create('pause-q');
SELECT message_id AS id FROM queue_put('pause-q', 'first') \gset
SELECT message_id AS id2, pop_receipt AS r2 FROM queue_get('pause-q', visibility_timeout => '1 minute') \gset
SELECT count(*) FROM queue_put('pause-q', 'second');
SELECT queue_pause('pause-q');
SELECT paused FROM queue_list() WHERE queue = 'pause-q';
SELECT value FROM queue_metrics() WHERE queue = 'pause-q' AND metric = 'queue_paused';
SELECT value FROM queue_metrics() WHERE queue = 'pause-q-poison' AND metric = 'queue_paused';

-- gets find nothing, waiting or not
SELECT count(*) FROM queue_get('pause-q', 10);
SELECT count(*) FROM queue_get('pause-q', 10, wait => '200 milliseconds');
SELECT status FROM queue_delete_and_get('pause-q', ARRAY[]::bigint[], ARRAY[]::uuid[], 10);

-- everything else goes on
SELECT body FROM queue_peek('pause-q');
SELECT count(*) FROM queue_put('pause-q', 'third');
SELECT pop_receipt AS r2 FROM queue_update('pause-q', :id2, :'r2', '1 minute') \gset
SELECT pop_receipt AS r2 FROM queue_release('pause-q', :id2, :'r2') \gset
SELECT visible FROM queue_stats('pause-q');

-- pausing twice is pausing; the poison queue is a queue of its own
SELECT queue_pause('pause-q');
SELECT queue, paused FROM queue_list() WHERE queue LIKE 'pause-q%' ORDER BY queue;

-- resumed, it hands out again, in order
SELECT queue_resume('pause-q');
SELECT queue_resume('pause-q');
SELECT paused FROM queue_list() WHERE queue = 'pause-q';
SELECT body FROM queue_get('pause-q', 10) ORDER BY message_id;

-- a pause in a transaction that rolls back never happened
BEGIN;
SELECT queue_pause('pause-q');
ROLLBACK;
SELECT paused FROM queue_list() WHERE queue = 'pause-q';

SELECT check_error($$SELECT queue_pause('no-such-queue')$$);
SELECT check_error($$SELECT queue_resume(NULL)$$);

SELECT drop_all_queues();
