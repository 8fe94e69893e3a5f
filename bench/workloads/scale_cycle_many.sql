-- scale, many queues: the same cycle on one of the first 1,000 of the
-- database's 10,000 queues, picked at random for each cycle
\set q random(1, 1000)
SELECT queue_put('many' || :q, repeat('x', 1024));
SELECT coalesce(max(message_id), 0) AS mid, coalesce(max(pop_receipt::text), '') AS rcpt FROM queue_get('many' || :q) \gset
\if :mid > 0
SELECT queue_delete('many' || :q, :mid, :rcpt::uuid);
\endif
