-- consumer loop, extension: put 1; then one call deletes the message the
-- previous loop got (by id and receipt) and gets the next: two transactions
-- per message where the cycle takes three.  pgbench -D starts mid at 0
-- (nothing to delete: a not_found row).
\set r random(1, 1000)
SELECT (queue_put('bench', (SELECT body FROM bench_bodies WHERE id = :r))).message_id;
SELECT coalesce(max(message_id) FILTER (WHERE status = 'claimed'), 0) AS mid, coalesce(max(pop_receipt::text) FILTER (WHERE status = 'claimed'), :rcpt) AS rcpt FROM queue_delete_and_get('bench', ARRAY[:mid]::bigint[], ARRAY[:rcpt::uuid]) \gset
