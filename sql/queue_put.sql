-- queue_put: receipts, delays, ttl, headers, size limit, errors,
-- transactions.

SELECT queue_create('put-q', message_ttl => '1 hour', max_message_size => 20);

-- the receipt: id, a pop receipt, visible now, expiring after the queue's ttl
SELECT message_id > 0 AS has_id, pop_receipt IS NOT NULL AS has_receipt,
       visible_at - inserted_at AS delay, expires_at - inserted_at AS ttl
FROM queue_put('put-q', 'hello');

-- times come from the clock at the call, not the start of the transaction
BEGIN;
SELECT pg_sleep(0.05);
SELECT inserted_at > now() + interval '40 ms' AS from_clock FROM queue_put('put-q', 'clock');
ROLLBACK;

-- a delayed message, a ttl of its own, one that never expires
SELECT visible_at - inserted_at AS delay, expires_at - inserted_at AS ttl
FROM queue_put('put-q', 'later', '10 minutes');
SELECT visible_at - inserted_at AS delay, expires_at - inserted_at AS ttl
FROM queue_put('put-q', 'short', ttl => '5 minutes');
SELECT expires_at IS NULL AS never_expires FROM queue_put('put-q', 'forever', ttl => '-1 second');
SELECT visible_at - inserted_at AS delay FROM queue_put('put-q', 'max delay', '7 days', '8 days');
SELECT expires_at - inserted_at AS ttl FROM queue_put('put-q', 'ms', ttl => '1 millisecond');
SELECT expires_at - inserted_at AS ttl FROM queue_put('put-q', 'long', ttl => '200 years');

-- a queue whose messages never expire
SELECT queue_create('put-forever', message_ttl => NULL);
SELECT expires_at IS NULL AS never_expires FROM queue_put('put-forever', 'x');
SELECT expires_at - inserted_at AS ttl FROM queue_put('put-forever', 'x', ttl => '1 day');

-- headers and the empty body
SELECT count(*) FROM queue_put('put-q', 'hdr', headers => '{"t": 1}');
SELECT count(*) FROM queue_put('put-q', '');
SELECT body, headers FROM queue_peek('put-q', 10) WHERE body IN ('hdr', '') ORDER BY body;

-- size: body octets plus headers as text (here 20 bytes at most)
SELECT count(*) FROM queue_put('put-q', repeat('x', 20));
SELECT check_error($$SELECT queue_put('put-q', repeat('x', 21))$$);
SELECT count(*) FROM queue_put('put-q', repeat('é', 10));
SELECT check_error($$SELECT queue_put('put-q', repeat('é', 11))$$);
SELECT count(*) FROM queue_put('put-q', repeat('x', 10), headers => '{"a": 1}');
SELECT check_error($$SELECT queue_put('put-q', repeat('x', 13), headers => '{"a": 1}')$$);
\set VERBOSITY default
SELECT queue_put('put-q', repeat('x', 100));

-- every receipt is new
SELECT count(DISTINCT r.pop_receipt) AS distinct_receipts, count(DISTINCT r.message_id) AS ids
FROM generate_series(1, 100) g, LATERAL queue_put('put-forever', 'x' || g) r;

-- NULL arguments: 22004 (visibility_timeout, ttl and headers may be NULL)
SELECT check_error($$SELECT queue_put(NULL, 'x')$$);
SELECT check_error($$SELECT queue_put('put-q', NULL)$$);

-- no visibility_timeout: the queue's delay (0 unless queue_alter set one);
-- one given wins, and a message of a group is not delayed by the queue
SELECT queue_create('put-delayed');
SELECT visible_at = inserted_at AS visible_at_once FROM queue_put('put-delayed', 'x', NULL);
SELECT queue_alter('put-delayed', delay => '1 minute');
SELECT visible_at - inserted_at AS delayed_by FROM queue_put('put-delayed', 'x');
SELECT visible_at - inserted_at AS delayed_by FROM queue_put('put-delayed', 'x', '0');
SELECT visible_at - inserted_at AS delayed_by FROM queue_put('put-delayed', 'x', '5 seconds');
SELECT visible_at - inserted_at AS delayed_by FROM queue_put('put-delayed', 'x', group_id => 'g');
SELECT visible_at - inserted_at AS delayed_by FROM queue_put_batch('put-delayed', ARRAY['a', 'b']);
SELECT check_error($$SELECT queue_put('put-delayed', 'x', ttl => '30 seconds')$$);
SELECT queue_drop('put-delayed');
SELECT count(*) FROM queue_put('put-q', 'x', ttl => NULL, headers => NULL);

-- out of range: 22023
SELECT check_error($$SELECT queue_put('put-q', 'x', '-1 second')$$);
SELECT check_error($$SELECT queue_put('put-q', 'x', '7 days 1 second')$$);
SELECT check_error($$SELECT queue_put('put-q', 'x', ttl => '0')$$);
SELECT check_error($$SELECT queue_put('put-q', 'x', ttl => '-2 seconds')$$);
SELECT check_error($$SELECT queue_put('put-q', 'x', '1 minute', '1 minute')$$);
SELECT check_error($$SELECT queue_put('put-q', 'x', '2 hours')$$);
SELECT check_error($$SELECT queue_put('put-q', 'x', ttl => '106751990 days')$$);
SELECT check_error($$SELECT queue_put('put-q', 'x', ttl => '1000000 years')$$);
SELECT check_error($$SELECT queue_put('put-q', 'x', headers => '[1, 2]')$$);
SELECT check_error($$SELECT queue_put('put-q', 'x', headers => '"text"')$$);
SELECT check_error($$SELECT queue_put('put.q', 'x')$$);

-- no such queue: 42704
SELECT check_error($$SELECT queue_put('no-such-queue', 'x')$$);

-- transactional: a put in a rolled-back transaction never happened
SELECT total AS before, puts AS puts_before FROM queue_stats('put-q') \gset
BEGIN;
SELECT count(*) FROM queue_put('put-q', 'rolled back');
ROLLBACK;
SELECT total = :before AS same_total, puts = :puts_before AS same_puts FROM queue_stats('put-q');
SELECT count(*) FROM queue_peek('put-q', 1000) WHERE body = 'rolled back';

SELECT drop_all_queues();
