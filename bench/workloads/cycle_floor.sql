-- cycle, raw-SQL floor: insert returning the new id; claim with UPDATE ... SKIP LOCKED returning a receipt and the body; delete by id and receipt
\set r random(1, 1000)
INSERT INTO floor_q (queue_id, visible_at, body) VALUES (1, clock_timestamp(), (SELECT body FROM bench_bodies WHERE id = :r)) RETURNING id;
WITH claimed AS (UPDATE floor_q SET visible_at = clock_timestamp() + interval '30 s', receipt = gen_random_uuid(), dequeue_count = dequeue_count + 1 WHERE id = (SELECT id FROM floor_q WHERE queue_id = 1 AND visible_at <= clock_timestamp() ORDER BY visible_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, receipt, body) SELECT coalesce(max(id), 0) AS mid, coalesce(max(receipt::text), '') AS rcpt FROM claimed \gset
\if :mid > 0
DELETE FROM floor_q WHERE id = :mid AND receipt = :rcpt::uuid;
\endif
