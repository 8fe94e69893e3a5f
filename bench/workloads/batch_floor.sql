-- batch, raw-SQL floor: insert 100, claim 100, delete 100 by id and receipt.
-- Both the claim and the delete find rows by id in the primary key (= ANY),
-- as the extension's statements do: written as joins (id IN (SELECT ...),
-- DELETE ... USING unnest(...)), they were planned from the table's
-- statistics, which say empty after a vacuum of a drained queue, and the
-- claim became a nested loop over the whole primary key (EXPLAIN).
INSERT INTO floor_q (queue_id, visible_at, body) SELECT 1, clock_timestamp(), repeat('x', 1024) FROM generate_series(1, 100);
WITH claimed AS (UPDATE floor_q SET visible_at = clock_timestamp() + interval '30 s', receipt = gen_random_uuid(), dequeue_count = dequeue_count + 1 WHERE id = ANY(ARRAY(SELECT id FROM floor_q WHERE queue_id = 1 AND visible_at <= clock_timestamp() ORDER BY visible_at, id LIMIT 100 FOR UPDATE SKIP LOCKED)) RETURNING id, receipt) SELECT count(*) AS n, coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(receipt), '{}') AS rcpts FROM claimed \gset
\if :n > 0
DELETE FROM floor_q WHERE id = ANY(:ids::bigint[]) AND receipt = (:rcpts::uuid[])[array_position(:ids::bigint[], id)];
\endif
