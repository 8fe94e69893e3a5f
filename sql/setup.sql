-- Helpers for the regression tests (the extension itself is created by
-- pg_regress --load-extension=queue).

-- Runs a statement that should fail; returns "SQLSTATE: message".  Message
-- ids are shown as N: they depend on how many puts earlier tests made.
CREATE FUNCTION check_error(statement text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE statement;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, 'message \d+', 'message N');
END
$$;

-- The same, with the error's detail and hint.
CREATE FUNCTION error_details(statement text,
	OUT code text, OUT message text, OUT detail text, OUT hint text)
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE statement;
	code := 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
		detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
	message := regexp_replace(message, 'message \d+', 'message N');
END
$$;

-- Drops every queue, parents before their poison queues.
CREATE FUNCTION drop_all_queues() RETURNS bigint
LANGUAGE sql AS $$
	SELECT count(queue_drop(queue))
	FROM (SELECT queue FROM queue_list() ORDER BY poison_queue IS NULL, queue) q
$$;

-- The API is in the extension's schema, storage in queue_storage.
SELECT n.nspname, count(*)
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'queue'
GROUP BY n.nspname;
SELECT c.relname, c.relkind FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'queue_storage' ORDER BY c.relname;
