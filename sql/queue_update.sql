-- queue_update: extend, release, rewrite; only the newest receipt works.

SELECT queue_create('update-q', message_ttl => '1 hour', max_dequeue_count => 3,
                    max_message_size => 30);
SELECT count(*) FROM queue_put('update-q', 'original', headers => '{"v": 1}');
SELECT message_id AS id, pop_receipt AS r1 FROM queue_get('update-q') \gset

-- extend the lease: a new receipt, dequeue_count unchanged
SELECT message_id = :id AS same_id, pop_receipt <> :'r1' AS new_receipt,
       visible_at BETWEEN clock_timestamp() + interval '4 min 59 s'
                      AND clock_timestamp() + interval '5 min' AS extended
FROM queue_update('update-q', :id, :'r1', '5 minutes');
SELECT pop_receipt AS r2 FROM queue_storage.messages WHERE message_id = :id \gset

-- the old receipt is refused: QU409
\x on
SELECT * FROM error_details(format('SELECT queue_update(%L, %s, %L, %L)', 'update-q', :id, :'r1', '1 minute'));
\x off
SELECT check_error(format('SELECT queue_update(%L, %s, %L, %L)', 'update-q', :id, :'r1', '1 minute'));

-- rewrite body and headers
SELECT pop_receipt AS r3 FROM queue_update('update-q', :id, :'r2', '1 minute', 'rewritten', '{"v": 2}') \gset
SELECT body, headers, dequeue_count FROM queue_storage.messages WHERE message_id = :id;
-- only the body: headers stay
SELECT pop_receipt AS r4 FROM queue_update('update-q', :id, :'r3', '1 minute', 'body only') \gset
SELECT body, headers FROM queue_storage.messages WHERE message_id = :id;
-- too large with the stored headers (8 bytes): 54000, and nothing changes
SELECT check_error(format('SELECT queue_update(%L, %s, %L, %L, %L)', 'update-q', :id, :'r4', '0', repeat('x', 23)));
SELECT pop_receipt = :'r4' AS receipt_unchanged, body FROM queue_storage.messages WHERE message_id = :id;
SELECT pop_receipt AS r5 FROM queue_update('update-q', :id, :'r4', '1 minute', repeat('x', 22)) \gset

-- release (0): visible at once, dequeue_count kept; the next get counts 2
SELECT visible_at <= clock_timestamp() AS visible_now
FROM queue_update('update-q', :id, :'r5', '0');
SELECT message_id = :id AS same_id, dequeue_count FROM queue_get('update-q');

-- a lease that ran out: the receipt still works until someone gets the
-- message again (as in Azure)
SELECT count(*) FROM queue_put('update-q', 'late');
SELECT message_id AS late_id, pop_receipt AS late_r FROM queue_get('update-q', visibility_timeout => '10 milliseconds') \gset
SELECT pg_sleep(0.02);
SELECT pop_receipt AS late_r2 FROM queue_update('update-q', :late_id, :'late_r', '10 milliseconds') \gset
SELECT pg_sleep(0.02);
SELECT count(*) FROM queue_get('update-q');
SELECT check_error(format('SELECT queue_update(%L, %s, %L, %L)', 'update-q', :late_id, :'late_r2', '0'));

-- a delayed message can be changed with the receipt of its put
SELECT message_id AS d_id, pop_receipt AS d_r FROM queue_put('update-q', 'delayed', '30 minutes') \gset
SELECT visible_at <= clock_timestamp() AS visible_now FROM queue_update('update-q', :d_id, :'d_r', '0');

-- never past the expiry
SELECT message_id AS e_id, pop_receipt AS e_r FROM queue_put('update-q', 'expiring', ttl => '1 minute') \gset
SELECT visible_at = expires_at AS capped FROM queue_update('update-q', :e_id, :'e_r', '2 minutes');

-- released after its last allowed delivery: moved to the poison queue at
-- once; the result holds no receipt
SELECT queue_create('update-once', max_dequeue_count => 1);
SELECT count(*) FROM queue_put('update-once', 'fragile');
SELECT message_id AS f_id, pop_receipt AS f_r FROM queue_get('update-once') \gset
SELECT message_id = :f_id AS same_id, pop_receipt, expires_at
FROM queue_update('update-once', :f_id, :'f_r', '0');
SELECT body, dequeue_count FROM queue_peek('update-once-poison');
SELECT check_error(format('SELECT queue_update(%L, %s, %L, %L)', 'update-once', :f_id, :'f_r', '0'));

-- not found: QU404 (no such id, another queue's message, expired)
SELECT check_error(format('SELECT queue_update(%L, %s, %L, %L)', 'update-q', -1, :'r1', '0'));
SELECT check_error(format('SELECT queue_update(%L, %s, %L, %L)', 'update-once', :d_id, :'d_r', '0'));
SELECT message_id AS x_id, pop_receipt AS x_r FROM queue_put('update-q', 'short', ttl => '1 millisecond') \gset
SELECT pg_sleep(0.01);
SELECT check_error(format('SELECT queue_update(%L, %s, %L, %L)', 'update-q', :x_id, :'x_r', '0'));

-- NULLs: 22004; ranges and headers: 22023; queue: 42704
SELECT check_error(format('SELECT queue_update(NULL, %s, %L, %L)', :d_id, :'d_r', '0'));
SELECT check_error(format('SELECT queue_update(%L, NULL, %L, %L)', 'update-q', :'d_r', '0'));
SELECT check_error(format('SELECT queue_update(%L, %s, NULL, %L)', 'update-q', :d_id, '0'));
SELECT check_error(format('SELECT queue_update(%L, %s, %L, NULL)', 'update-q', :d_id, :'d_r'));
SELECT check_error(format('SELECT queue_update(%L, %s, %L, %L)', 'update-q', :d_id, :'d_r', '-1 second'));
SELECT check_error(format('SELECT queue_update(%L, %s, %L, %L)', 'update-q', :d_id, :'d_r', '7 days 1 second'));
SELECT check_error(format('SELECT queue_update(%L, %s, %L, %L, NULL, %L)', 'update-q', :d_id, :'d_r', '0', '[1]'));
SELECT check_error(format('SELECT queue_update(%L, %s, %L, %L)', 'no-such-queue', :d_id, :'d_r', '0'));

-- transactional: a rolled-back update leaves the old receipt working
SELECT message_id AS t_id, pop_receipt AS t_r FROM queue_put('update-q', 'tx') \gset
BEGIN;
SELECT count(*) FROM queue_update('update-q', :t_id, :'t_r', '1 minute', 'changed');
ROLLBACK;
SELECT body FROM queue_storage.messages WHERE message_id = :t_id;
SELECT count(*) FROM queue_update('update-q', :t_id, :'t_r', '0');

SELECT drop_all_queues();
