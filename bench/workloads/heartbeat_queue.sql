-- heartbeat, extension: put 1, get 1, update 1 (extend the lease), delete 1
SELECT queue_put('bench', repeat('x', 1024));
SELECT coalesce(max(message_id), 0) AS mid, coalesce(max(pop_receipt::text), '') AS rcpt FROM queue_get('bench') \gset
\if :mid > 0
SELECT pop_receipt AS rcpt FROM queue_update('bench', :mid, :rcpt::uuid, '30 seconds') \gset
SELECT queue_delete('bench', :mid, :rcpt::uuid);
\endif
