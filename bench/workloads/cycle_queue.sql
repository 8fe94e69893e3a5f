-- cycle, extension: put 1, get 1, delete 1, each its own transaction
SELECT queue_put('bench', repeat('x', 1024));
SELECT coalesce(max(message_id), 0) AS mid, coalesce(max(pop_receipt::text), '') AS rcpt FROM queue_get('bench') \gset
\if :mid > 0
SELECT queue_delete('bench', :mid, :rcpt::uuid);
\endif
