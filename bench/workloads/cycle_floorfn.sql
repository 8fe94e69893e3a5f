-- cycle, the floor's statements inside PL/pgSQL functions (setup.sql): put 1, get 1, delete 1, each its own transaction
\set r random(1, 1000)
SELECT floor_put((SELECT body FROM bench_bodies WHERE id = :r));
SELECT coalesce(claimed_id, 0) AS mid, coalesce(claimed_receipt::text, '') AS rcpt FROM floor_get() \gset
\if :mid > 0
SELECT floor_delete(:mid, :rcpt::uuid);
\endif
