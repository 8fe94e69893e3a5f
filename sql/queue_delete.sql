-- queue_delete: only with the newest receipt; refused otherwise.

SELECT queue_create('delete-q', message_ttl => '1 hour');
SELECT count(*) FROM queue_put('delete-q', 'done');
SELECT message_id AS id, pop_receipt AS r1 FROM queue_get('delete-q') \gset
SELECT queue_delete('delete-q', :id, :'r1');
SELECT count(*) FROM queue_storage.messages WHERE message_id = :id;
SELECT deletes FROM queue_stats('delete-q');
-- deleted: QU404
\x on
SELECT * FROM error_details(format('SELECT queue_delete(%L, %s, %L)', 'delete-q', :id, :'r1'));
\x off

-- a stale receipt: QU409, and the message stays
SELECT count(*) FROM queue_put('delete-q', 'twice');
SELECT message_id AS id, pop_receipt AS r1 FROM queue_get('delete-q', visibility_timeout => '10 milliseconds') \gset
SELECT pg_sleep(0.02);
SELECT pop_receipt AS r2 FROM queue_get('delete-q') \gset
\x on
SELECT * FROM error_details(format('SELECT queue_delete(%L, %s, %L)', 'delete-q', :id, :'r1'));
\x off
SELECT count(*) FROM queue_storage.messages WHERE message_id = :id;
SELECT queue_delete('delete-q', :id, :'r2');

-- a delayed message can be deleted with the receipt of its put
SELECT message_id AS d_id, pop_receipt AS d_r FROM queue_put('delete-q', 'later', '30 minutes') \gset
SELECT queue_delete('delete-q', :d_id, :'d_r');

-- a forged receipt, another queue, an expired message: refused
SELECT queue_create('delete-other');
SELECT message_id AS o_id, pop_receipt AS o_r FROM queue_put('delete-other', 'mine') \gset
SELECT check_error(format('SELECT queue_delete(%L, %s, %L)', 'delete-q', :o_id, :'o_r'));
SELECT check_error(format('SELECT queue_delete(%L, %s, %L)', 'delete-other', :o_id, gen_random_uuid()));
SELECT message_id AS x_id, pop_receipt AS x_r FROM queue_put('delete-q', 'short', ttl => '1 millisecond') \gset
SELECT pg_sleep(0.01);
SELECT check_error(format('SELECT queue_delete(%L, %s, %L)', 'delete-q', :x_id, :'x_r'));

-- NULLs: 22004; bad name 22023; no queue 42704
SELECT check_error(format('SELECT queue_delete(NULL, %s, %L)', :o_id, :'o_r'));
SELECT check_error(format('SELECT queue_delete(%L, NULL, %L)', 'delete-other', :'o_r'));
SELECT check_error(format('SELECT queue_delete(%L, %s, NULL)', 'delete-other', :o_id));
SELECT check_error(format('SELECT queue_delete(%L, %s, %L)', 'x!', :o_id, :'o_r'));
SELECT check_error(format('SELECT queue_delete(%L, %s, %L)', 'no-such-queue', :o_id, :'o_r'));

-- transactional: a rolled-back delete leaves the message and its receipt
BEGIN;
SELECT queue_delete('delete-other', :o_id, :'o_r');
ROLLBACK;
SELECT body FROM queue_peek('delete-other');
SELECT queue_delete('delete-other', :o_id, :'o_r');
SELECT count(*) FROM queue_peek('delete-other');

SELECT drop_all_queues();
