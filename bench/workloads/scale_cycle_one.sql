-- scale, one queue: the cycle (put 1, get 1, delete 1, each its own
-- transaction) on the only queue of its database
SELECT queue_put('one', repeat('x', 1024));
SELECT coalesce(max(message_id), 0) AS mid, coalesce(max(pop_receipt::text), '') AS rcpt FROM queue_get('one') \gset
\if :mid > 0
SELECT queue_delete('one', :mid, :rcpt::uuid);
\endif
