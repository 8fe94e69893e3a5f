-- batch, raw-SQL floor: insert 100, claim 100 (returning their bodies, as a
-- get does), delete 100 by id and receipt.
-- Both the claim and the delete find rows by id in the primary key (= ANY),
-- as the extension's statements do: written as joins (id IN (SELECT ...),
-- DELETE ... USING unnest(...)), they were planned from the table's
-- statistics, which say empty after a vacuum of a drained queue, and the
-- claim became a nested loop over the whole primary key (EXPLAIN).
\set r random(0, 900)
INSERT INTO floor_q (queue_id, visible_at, body) SELECT 1, clock_timestamp(), body FROM bench_bodies WHERE id > :r AND id <= :r + 100;
WITH claimed AS (UPDATE floor_q SET visible_at = clock_timestamp() + interval '30 s', receipt = gen_random_uuid(), dequeue_count = dequeue_count + 1 WHERE id = ANY(ARRAY(SELECT id FROM floor_q WHERE queue_id = 1 AND visible_at <= clock_timestamp() ORDER BY visible_at, id LIMIT 100 FOR UPDATE SKIP LOCKED)) RETURNING id, receipt, body) SELECT count(*) AS n, coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(receipt), '{}') AS rcpts FROM claimed \gset
\if :n > 0
DELETE FROM floor_q WHERE id = ANY(:ids::bigint[]) AND receipt = (:rcpts::uuid[])[array_position(:ids::bigint[], id)];
\endif
