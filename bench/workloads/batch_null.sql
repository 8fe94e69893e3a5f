-- batch, round trips alone: three statements of the batch's shape (100
-- bodies in, 100 ids and receipts out and back in), each its own
-- transaction, that touch no table.
SELECT count(*) FROM unnest(array_fill(repeat('x', 1024), ARRAY[100]));
SELECT count(*) AS n, array_agg(i) AS ids, array_agg(gen_random_uuid()) AS rcpts FROM generate_series(1, 100) i \gset
\if :n > 0
SELECT count(*) FROM unnest(:ids::bigint[], :rcpts::uuid[]);
\endif
