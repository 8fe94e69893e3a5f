-- batch, pgmq: send_batch 100, read 100 (30 s visibility timeout), delete 100 by id array
SELECT count(*) FROM pgmq.send_batch('bench', array_fill(to_jsonb(repeat('x', 1024)), ARRAY[100]));
SELECT count(*) AS n, coalesce(array_agg(msg_id), '{}') AS ids FROM pgmq.read('bench', 30, 100) \gset
\if :n > 0
SELECT count(*) FROM pgmq.delete('bench', :ids::bigint[]);
\endif
