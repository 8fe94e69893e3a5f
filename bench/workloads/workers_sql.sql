-- The statement our Workers send for each batch, run by pgbench without a
-- client around it (bench/workers.sh; its report lists the statements the
-- Workers sent, from log_statement = all): queue_delete_and_get deletes the
-- batch the previous call claimed (by id and receipt) and claims the next,
-- up to :batch messages leased for 30 s, waiting up to 20 s only when it has
-- nothing to delete, as the Workers ask with their default options.  The
-- Workers send SELECT * of the rows other than those of the deletes that
-- went well, and receive every column of them; pgbench keeps
-- one row (\gset), so the rows come back as one JSON array, every column
-- rendered as text as for the Workers, and the claimed ids and receipts as
-- two arrays, which \gset keeps for the next call (pgbench -D starts them
-- at {}).
SELECT coalesce(pg_catalog.array_agg(message_id) FILTER (WHERE status = 'claimed'), '{}') AS ids,
	coalesce(pg_catalog.array_agg(pop_receipt) FILTER (WHERE status = 'claimed'), '{}') AS receipts,
	pg_catalog.json_agg(r) AS rows
	FROM queue_delete_and_get(:queue, :ids::bigint[], :receipts::uuid[], coalesce(:batch::int, 1),
		pg_catalog.make_interval(secs => :lease::float8),
		coalesce(pg_catalog.make_interval(secs => :wait::float8), '0'), coalesce(:release::bool, false))
	WITH ORDINALITY AS r WHERE r.status OPERATOR(pg_catalog.<>) 'deleted' \gset
