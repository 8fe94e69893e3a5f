-- cycle, round trips alone: three statements of the cycle's shape, each its
-- own transaction, that touch no table (the bodies, as on every side, are
-- made by the server).  No queue can go faster over the same statements.
SELECT length(repeat('x', 1024));
SELECT 1::bigint AS mid, '00000000-0000-0000-0000-000000000001' AS rcpt \gset
\if :mid > 0
SELECT :mid = 1 AND :rcpt::uuid IS NOT NULL;
\endif
