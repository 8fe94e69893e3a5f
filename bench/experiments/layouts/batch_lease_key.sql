-- batch on lease_key (layouts.sh): insert 100, claim 100 by moving
-- visible_at, delete 100 by id and receipt
INSERT INTO lease_key (queue_id, visible_at, body) SELECT 1, clock_timestamp(), repeat('x', 1024) FROM generate_series(1, 100);
WITH claimed AS (UPDATE lease_key SET visible_at = clock_timestamp() + interval '30 s', receipt = gen_random_uuid(), dequeue_count = dequeue_count + 1 WHERE id = ANY(ARRAY(SELECT id FROM lease_key WHERE queue_id = 1 AND visible_at <= clock_timestamp() ORDER BY visible_at, id LIMIT 100 FOR UPDATE SKIP LOCKED)) RETURNING id, receipt) SELECT count(*) AS n, coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(receipt), '{}') AS rcpts FROM claimed \gset
\if :n > 0
DELETE FROM lease_key WHERE id = ANY(:ids::bigint[]) AND receipt = (:rcpts::uuid[])[array_position(:ids::bigint[], id)];
\endif
