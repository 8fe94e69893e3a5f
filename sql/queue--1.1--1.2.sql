/*
 * queue--1.1--1.2.sql
 *		Upgrade script of the queue extension from 1.1 to 1.2:
 *		ALTER EXTENSION queue UPDATE TO '1.2'.
 *
 * 1.2 warns, at install and at update, when roles other than the schema's
 * owner may create objects in the schema that holds the API: such a role
 * could create a function there that a call resolves to instead of ours
 * (queue_delete(text, integer, text) is a closer match for
 * queue_delete('q', 5, '...') than queue_delete(text, bigint, uuid)), and
 * that function would run with the rights of whoever calls it.  The schema
 * of the storage tables is the extension's own.  Nothing stored changes.
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.2'" to load this file. \quit

DO $$
DECLARE
	api_schema regnamespace := '@extschema@'::regnamespace;
	creators text;
BEGIN
	-- who may CREATE in it: not its owner, a superuser or the extension owner.
	-- Every function and operator is pg_catalog's, named so: this runs with
	-- search_path set to that schema, where such a role could have planted
	-- closer matches (quote_ident(name)) that would run as the superuser.
	SELECT pg_catalog.string_agg(
			CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
				 ELSE pg_catalog.quote_ident(r.rolname) END,
			', ' ORDER BY r.rolname NULLS FIRST)
	INTO creators
	FROM pg_catalog.pg_namespace n
	CROSS JOIN LATERAL pg_catalog.aclexplode(
		coalesce(n.nspacl, pg_catalog.acldefault('n', n.nspowner))) a
	LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) a.grantee
	WHERE n.oid OPERATOR(pg_catalog.=) api_schema
		AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
		AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner
		AND NOT coalesce(r.rolsuper, false)
		AND a.grantee OPERATOR(pg_catalog.<>) ALL (
			SELECT extowner FROM pg_catalog.pg_extension
			WHERE extname OPERATOR(pg_catalog.=) 'queue');
	IF creators IS NOT NULL THEN
		RAISE WARNING 'queue: roles other than its owner may create objects in schema %, which holds the queue functions: %',
			api_schema, creators
		USING DETAIL = 'A function such a role creates there, with argument types closer to a call than ours, runs instead of the queue function, with the rights of the role that calls it.',
			  HINT = pg_catalog.format('Take the right away (REVOKE CREATE ON SCHEMA %s FROM %s), or install into a schema of its own that only its owner may create in (CREATE SCHEMA queue; CREATE EXTENSION queue SCHEMA queue), and call the functions schema-qualified: SELECT * FROM queue.queue_get(...).',
						   api_schema, creators);
	END IF;
END
$$;
