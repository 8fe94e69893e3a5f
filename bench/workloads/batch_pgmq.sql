-- batch, pgmq: send_batch 100, read 100 (30 s visibility timeout), delete 100 by id array
\set r random(0, 900)
SELECT count(*) FROM pgmq.send_batch('bench', ARRAY(SELECT to_jsonb(body) FROM bench_bodies WHERE id > :r AND id <= :r + 100));
SELECT count(*) AS n, coalesce(array_agg(msg_id), '{}') AS ids FROM pgmq.read('bench', 30, 100) \gset
\if :n > 0
SELECT count(*) FROM pgmq.delete('bench', :ids::bigint[]);
\endif
