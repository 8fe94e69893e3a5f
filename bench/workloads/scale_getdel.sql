-- scale, depth: get 1 from the queue named by the pgbench variable queue
-- (-D queue=...) and delete it, two transactions
SELECT coalesce(max(message_id), 0) AS mid, coalesce(max(pop_receipt::text), '') AS rcpt FROM queue_get(:queue) \gset
\if :mid > 0
SELECT queue_delete(:queue, :mid, :rcpt::uuid);
\endif
