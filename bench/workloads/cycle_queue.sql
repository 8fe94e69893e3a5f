-- cycle, extension: put 1, get 1, delete 1, each its own transaction; the
-- put returns the new message's id, as the floor's insert and pgmq's send do
\set r random(1, 1000)
SELECT (queue_put('bench', (SELECT body FROM bench_bodies WHERE id = :r))).message_id;
SELECT coalesce(max(message_id), 0) AS mid, coalesce(max(pop_receipt::text), '') AS rcpt FROM queue_get('bench') \gset
\if :mid > 0
SELECT queue_delete('bench', :mid, :rcpt::uuid);
\endif
