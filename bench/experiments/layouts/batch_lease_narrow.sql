-- batch on lease_narrow (layouts.sh): insert 100 leases and their
-- bodies, claim 100 by moving the narrow row's visible_at, delete 100 leases
-- by id and receipt and their bodies
WITH lease AS (INSERT INTO lease_narrow (queue_id, visible_at) SELECT 1, clock_timestamp() FROM generate_series(1, 100) RETURNING id) INSERT INTO lease_narrow_body (id, body) SELECT id, repeat('x', 1024) FROM lease;
WITH claimed AS (UPDATE lease_narrow SET visible_at = clock_timestamp() + interval '30 s', receipt = gen_random_uuid(), dequeue_count = dequeue_count + 1 WHERE id = ANY(ARRAY(SELECT id FROM lease_narrow WHERE queue_id = 1 AND visible_at <= clock_timestamp() ORDER BY visible_at, id LIMIT 100 FOR UPDATE SKIP LOCKED)) RETURNING id, receipt) SELECT count(*) AS n, coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(receipt), '{}') AS rcpts FROM claimed \gset
\if :n > 0
WITH gone AS (DELETE FROM lease_narrow WHERE id = ANY(:ids::bigint[]) AND receipt = (:rcpts::uuid[])[array_position(:ids::bigint[], id)] RETURNING id) DELETE FROM lease_narrow_body WHERE id IN (SELECT id FROM gone);
\endif
