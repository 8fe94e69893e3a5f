-- heartbeat in batches, extension: put_batch 100, get 100, update_batch 100, delete_batch 100
SELECT count(*) FROM queue_put_batch('bench', array_fill(repeat('x', 1024), ARRAY[100]));
SELECT count(*) AS n, coalesce(array_agg(message_id), '{}') AS ids, coalesce(array_agg(pop_receipt), '{}') AS rcpts FROM queue_get('bench', 100) \gset
\if :n > 0
SELECT coalesce(array_agg(message_id), '{}') AS ids, coalesce(array_agg(pop_receipt), '{}') AS rcpts FROM queue_update_batch('bench', :ids::bigint[], :rcpts::uuid[], '30 seconds') \gset
SELECT count(*) FROM queue_delete_batch('bench', :ids::bigint[], :rcpts::uuid[]);
\endif
