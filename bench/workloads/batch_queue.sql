-- batch, extension: put_batch 100, get 100, delete_batch 100
\set r random(0, 900)
SELECT count(*) FROM queue_put_batch('bench', ARRAY(SELECT body FROM bench_bodies WHERE id > :r AND id <= :r + 100));
SELECT count(*) AS n, coalesce(array_agg(message_id), '{}') AS ids, coalesce(array_agg(pop_receipt), '{}') AS rcpts FROM queue_get('bench', 100) \gset
\if :n > 0
SELECT count(*) FROM queue_delete_batch('bench', :ids::bigint[], :rcpts::uuid[]);
\endif
