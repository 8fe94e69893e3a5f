-- backlog and in flight, extension: get 1, delete it (two transactions)
SELECT coalesce(max(message_id), 0) AS mid, coalesce(max(pop_receipt::text), '') AS rcpt FROM queue_get('bench') \gset
\if :mid > 0
SELECT queue_delete('bench', :mid, :rcpt::uuid);
\endif
