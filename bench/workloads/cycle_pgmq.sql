-- cycle, pgmq: send 1, read 1 (30 s visibility timeout), delete 1, each its own transaction
\set r random(1, 1000)
SELECT pgmq.send('bench', to_jsonb((SELECT body FROM bench_bodies WHERE id = :r)));
SELECT coalesce(max(msg_id), 0) AS mid FROM pgmq.read('bench', 30, 1) \gset
\if :mid > 0
SELECT pgmq.delete('bench', :mid::bigint);
\endif
