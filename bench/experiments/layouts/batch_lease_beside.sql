-- batch on lease_beside (layouts.sh): insert 100, claim 100 by
-- setting lease_until (a HOT update), delete 100 by id and receipt
INSERT INTO lease_beside (queue_id, ready_at, body) SELECT 1, clock_timestamp(), repeat('x', 1024) FROM generate_series(1, 100);
WITH claimed AS (UPDATE lease_beside SET lease_until = clock_timestamp() + interval '30 s', receipt = gen_random_uuid(), dequeue_count = dequeue_count + 1 WHERE id = ANY(ARRAY(SELECT id FROM lease_beside WHERE queue_id = 1 AND ready_at <= clock_timestamp() AND lease_until <= clock_timestamp() ORDER BY ready_at, id LIMIT 100 FOR UPDATE SKIP LOCKED)) RETURNING id, receipt) SELECT count(*) AS n, coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(receipt), '{}') AS rcpts FROM claimed \gset
\if :n > 0
DELETE FROM lease_beside WHERE id = ANY(:ids::bigint[]) AND receipt = (:rcpts::uuid[])[array_position(:ids::bigint[], id)];
\endif
