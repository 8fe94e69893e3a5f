-- Bad input, table-driven: every function with NULLs, negative, zero, huge
-- timeouts (PostgreSQL 15 has no infinite interval: the largest intervals
-- it accepts stand in for them), bodies of 0 bytes and of
-- max_message_size + 1, names that are empty, 64 characters long, or hold
-- quotes, ';', '--', '$$', '%', upper case or unicode, forged receipts,
-- receipts of another queue, batches of 0 and 10^6.  Each case must fail
-- with the SQLSTATE the API documents, the server must stay up, and nothing
-- stored may change.

SELECT queue_create('bad-q', max_message_size => 100);
SELECT queue_create('bad-other');
SELECT message_id AS id, pop_receipt AS receipt FROM queue_put('bad-q', 'held') \gset
SELECT message_id AS other_id, pop_receipt AS other_receipt FROM queue_put('bad-other', 'elsewhere') \gset
SELECT pop_receipt AS receipt FROM queue_get('bad-q') \gset

CREATE TEMP TABLE storage_before AS
SELECT (SELECT md5(string_agg(m::text, ',' ORDER BY message_id)) FROM queue_storage.messages m) AS messages,
       (SELECT md5(string_agg(q::text, ',' ORDER BY queue_id)) FROM queue_storage.queues q) AS queues,
       (SELECT md5(string_agg(concat_ws(':', s.queue, s.puts, s.gets, s.deletes, s.poisoned, s.expired), ',' ORDER BY s.queue)) FROM queue_stats() s) AS counters,
       (SELECT md5(coalesce(string_agg(g::text, ','), '')) FROM queue_storage.grants g) AS grants;

CREATE TEMP TABLE bad_names (name text);
INSERT INTO bad_names VALUES (''), ('a.b'), (repeat('a', 81)), ('quo''te'), ('semi;colon'),
	('dash dash'), ('dollar$$'), ('per%cent'), ('Up.per'), ('ünïcode'), ('.lead'), ('trail.'),
	(' space'), ('x;DROP TABLE queue_storage.messages;--');

CREATE TEMP TABLE huge (value text);
INSERT INTO huge VALUES ('-1 second'), ('-178000000 years'), ('178000000 years'),
	('2147483647 days'), ('-2147483647 days'), ('1 microsecond ago'), ('2147483647 months');

CREATE TEMP TABLE cases (statement text, expected text);

-- every function with a bad name: 22023; with a NULL name: 22004
INSERT INTO cases
SELECT format(call, quote_literal(n.name)), '22023'
FROM bad_names n, (VALUES
	('SELECT queue_create(%s)'), ('SELECT queue_drop(%s)'), ('SELECT queue_clear(%s)'),
	('SELECT queue_stats(%s)'), ('SELECT queue_put(%s, ''x'')'),
	('SELECT queue_put_batch(%s, ARRAY[''x''])'), ('SELECT queue_get(%s)'),
	('SELECT queue_peek(%s)'), ('SELECT queue_update(%s, 1, gen_random_uuid(), ''0'')'),
	('SELECT queue_delete(%s, 1, gen_random_uuid())'),
	('SELECT queue_grant(%s, current_user::regrole, ''send'')'),
	('SELECT queue_revoke(%s, current_user::regrole, ''send'')')) AS f(call);
INSERT INTO cases
SELECT replace(call, '%s', 'NULL'), '22004'
FROM (VALUES
	('SELECT queue_create(%s)'), ('SELECT queue_drop(%s)'), ('SELECT queue_clear(%s)'),
	('SELECT queue_put(%s, ''x'')'), ('SELECT queue_put_batch(%s, ARRAY[''x''])'),
	('SELECT queue_get(%s)'), ('SELECT queue_peek(%s)'),
	('SELECT queue_update(%s, 1, gen_random_uuid(), ''0'')'),
	('SELECT queue_delete(%s, 1, gen_random_uuid())'),
	('SELECT queue_grant(%s, current_user::regrole, ''send'')'),
	('SELECT queue_revoke(%s, current_user::regrole, ''send'')')) AS f(call);

-- every other required argument NULL: 22004
INSERT INTO cases VALUES
	('SELECT queue_create(''bad-new'', NULL)', '22004'),
	('SELECT queue_create(''bad-new'', max_message_size => NULL)', '22004'),
	('SELECT queue_put(''bad-q'', NULL)', '22004'),
	('SELECT queue_put_batch(''bad-q'', NULL)', '22004'),
	('SELECT queue_put_batch(''bad-q'', ARRAY[''x'', NULL])', '22004'),
	('SELECT queue_get(''bad-q'', NULL)', '22004'),
	('SELECT queue_get(''bad-q'', 1, ''1 s'', NULL)', '22004'),
	('SELECT queue_peek(''bad-q'', NULL)', '22004'),
	(format('SELECT queue_update(''bad-q'', NULL, %L, ''0'')', :'receipt'), '22004'),
	(format('SELECT queue_update(''bad-q'', %s, NULL, ''0'')', :id), '22004'),
	(format('SELECT queue_update(''bad-q'', %s, %L, NULL)', :id, :'receipt'), '22004'),
	(format('SELECT queue_delete(''bad-q'', NULL, %L)', :'receipt'), '22004'),
	(format('SELECT queue_delete(''bad-q'', %s, NULL)', :id), '22004'),
	('SELECT queue_grant(''bad-q'', NULL, ''send'')', '22004'),
	('SELECT queue_grant(''bad-q'', current_user::regrole, NULL)', '22004');

-- negative, zero and huge timeouts, ttls and waits: 22023
INSERT INTO cases
SELECT format(call, quote_literal(h.value)), '22023'
FROM huge h, (VALUES
	('SELECT queue_create(''bad-new'', %s)'),
	('SELECT queue_create(''bad-new'', message_ttl => %s)'),
	('SELECT queue_put(''bad-q'', ''x'', %s)'),
	('SELECT queue_put(''bad-q'', ''x'', ttl => %s)'),
	('SELECT queue_put_batch(''bad-q'', ARRAY[''x''], %s)'),
	('SELECT queue_get(''bad-q'', 1, %s)'),
	('SELECT queue_get(''bad-q'', 1, NULL, %s)')) AS f(call)
WHERE NOT (call LIKE '%ttl =>%' AND h.value = '-1 second');
INSERT INTO cases
SELECT format('SELECT queue_update(''bad-q'', %s, %L, %L)', :id, :'receipt', h.value), '22023'
FROM huge h;
INSERT INTO cases VALUES
	('SELECT queue_create(''bad-new'', ''0'')', '22023'),
	('SELECT queue_create(''bad-new'', message_ttl => ''0'')', '22023'),
	('SELECT queue_put(''bad-q'', ''x'', ttl => ''0'')', '22023'),
	('SELECT queue_get(''bad-q'', 1, ''0'')', '22023'),
	('SELECT queue_get(''bad-q'', 1, NULL, ''21 seconds'')', '22023'),
	('SELECT queue_put(''bad-q'', ''x'', ''1 minute'', ''1 minute'')', '22023');

-- counts, sizes and batch shapes
INSERT INTO cases VALUES
	('SELECT queue_create(''bad-new'', max_dequeue_count => 0)', '22023'),
	('SELECT queue_create(''bad-new'', max_dequeue_count => -2147483648)', '22023'),
	('SELECT queue_create(''bad-new'', max_message_size => 0)', '22023'),
	('SELECT queue_create(''bad-new'', max_message_size => -1)', '22023'),
	('SELECT queue_create(''bad-new'', max_message_size => 2147483647)', '22023'),
	('SELECT queue_get(''bad-q'', 0)', '22023'),
	('SELECT queue_get(''bad-q'', -1)', '22023'),
	('SELECT queue_get(''bad-q'', 1001)', '22023'),
	('SELECT queue_get(''bad-q'', 2147483647)', '22023'),
	('SELECT queue_peek(''bad-q'', 0)', '22023'),
	('SELECT queue_peek(''bad-q'', 1000000)', '22023'),
	('SELECT queue_put_batch(''bad-q'', ARRAY[]::text[])', '22023'),
	('SELECT queue_put_batch(''bad-q'', array_fill(''x''::text, ARRAY[1000000]))', '22023'),
	('SELECT queue_put_batch(''bad-q'', ARRAY[[''x'']])', '22023'),
	('SELECT queue_put_batch(''bad-q'', ARRAY[''x'', ''y''], headers => ARRAY[''{}'']::jsonb[])', '22023'),
	('SELECT queue_put(''bad-q'', ''x'', headers => ''[1]'')', '22023'),
	('SELECT queue_put(''bad-q'', ''x'', headers => ''null'')', '22023'),
	('SELECT queue_grant(''bad-q'', current_user::regrole, ''write'')', '22023'),
	('SELECT queue_grant(''bad-q'', current_user::regrole, '''')', '22023'),
	('SELECT queue_put(''bad-q'', repeat(''x'', 101))', '54000'),
	('SELECT queue_put(''bad-q'', repeat(''x'', 95), headers => ''{"a": 1}'')', '54000'),
	('SELECT queue_put_batch(''bad-q'', ARRAY[''x'', repeat(''x'', 101)])', '54000'),
	(format('SELECT queue_update(''bad-q'', %s, %L, ''0'', repeat(''x'', 101))', :id, :'receipt'), '54000');

-- no such queue: 42704; already exists: 42710
INSERT INTO cases
SELECT replace(call, '%s', '''no-such-queue'''), '42704'
FROM (VALUES
	('SELECT queue_drop(%s)'), ('SELECT queue_clear(%s)'), ('SELECT queue_stats(%s)'),
	('SELECT queue_put(%s, ''x'')'), ('SELECT queue_put_batch(%s, ARRAY[''x''])'),
	('SELECT queue_get(%s)'), ('SELECT queue_peek(%s)'),
	('SELECT queue_update(%s, 1, gen_random_uuid(), ''0'')'),
	('SELECT queue_delete(%s, 1, gen_random_uuid())'),
	('SELECT queue_grant(%s, current_user::regrole, ''send'')')) AS f(call);
INSERT INTO cases VALUES ('SELECT queue_create(''bad-q'')', '42710'),
	('SELECT queue_create(''bad-q-poison'')', '42710');
-- regrole takes any number: no grant to a role that does not exist
INSERT INTO cases VALUES
	('SELECT queue_grant(''bad-q'', 4000000000::oid::regrole, ''send'')', '42704'),
	('SELECT queue_grant(''*'', 4000000000::oid::regrole, ''manage'')', '42704');

-- forged receipts and receipts or ids of another queue
INSERT INTO cases VALUES
	(format('SELECT queue_delete(''bad-q'', %s, gen_random_uuid())', :id), 'QU409'),
	(format('SELECT queue_update(''bad-q'', %s, gen_random_uuid(), ''0'')', :id), 'QU409'),
	(format('SELECT queue_delete(''bad-q'', %s, ''00000000-0000-0000-0000-000000000000'')', :id), 'QU409'),
	(format('SELECT queue_delete(''bad-q'', %s, %L)', :id, :'other_receipt'), 'QU409'),
	(format('SELECT queue_delete(''bad-q'', %s, %L)', :other_id, :'other_receipt'), 'QU404'),
	(format('SELECT queue_update(''bad-q'', %s, %L, ''0'')', :other_id, :'other_receipt'), 'QU404'),
	(format('SELECT queue_delete(''bad-other'', %s, %L)', :id, :'receipt'), 'QU404'),
	(format('SELECT queue_delete(''bad-q'', %s, %L)', -9223372036854775808, :'receipt'), 'QU404'),
	(format('SELECT queue_delete(''bad-q'', %s, %L)', 9223372036854775807, :'receipt'), 'QU404');

-- run them all
CREATE TEMP TABLE outcomes AS
SELECT statement, expected, check_error(statement) AS got FROM cases;

SELECT count(*) AS cases_tried FROM outcomes;
SELECT statement, expected, got FROM outcomes WHERE got NOT LIKE expected || ':%';

-- nothing stored changed
SELECT b.messages = a.messages AS messages_unchanged, b.queues = a.queues AS queues_unchanged,
       b.counters = a.counters AS counters_unchanged, b.grants = a.grants AS grants_unchanged
FROM storage_before b,
LATERAL (SELECT (SELECT md5(string_agg(m::text, ',' ORDER BY message_id)) FROM queue_storage.messages m) AS messages,
       (SELECT md5(string_agg(q::text, ',' ORDER BY queue_id)) FROM queue_storage.queues q) AS queues,
       (SELECT md5(string_agg(concat_ws(':', s.queue, s.puts, s.gets, s.deletes, s.poisoned, s.expired), ',' ORDER BY s.queue)) FROM queue_stats() s) AS counters,
       (SELECT md5(coalesce(string_agg(g::text, ','), '')) FROM queue_storage.grants g) AS grants) a;

SELECT drop_all_queues();
