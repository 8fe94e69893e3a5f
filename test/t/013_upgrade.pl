# ALTER EXTENSION queue UPDATE with messages in flight.  For every earlier
# version the server offers (pg_available_extension_versions), a database
# gets that version and is filled as users fill it: a queue with a poison
# queue and one without, visible, delayed, leased and poisoned messages,
# headers, a grant, counters, and a long poll waiting while the update runs.
# After the update every stored row and counter is as it was, the receipts
# handed out before work, the grant holds, the waiting get is woken by a put,
# and the catalog is what a fresh install of the newest version makes.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use QueueFixture;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
# no sweep between the looks before and after: they must match exactly
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'queue'\nqueue.enable_worker = off\n");
$node->start;

my $newest = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'queue'});
my @earlier = split /\n/, $node->safe_psql('postgres', qq{
	SELECT version FROM pg_available_extension_versions
	WHERE name = 'queue' AND version <> '$newest' ORDER BY version});
ok(@earlier > 0, "earlier versions to update from: @earlier (newest $newest)");

# The extension's objects as the catalog describes them: each member with
# its comment, owner and privileges (and those pg_dump takes as the
# extension's own, pg_init_privs); functions with their arguments,
# defaults, results and properties; the columns of tables and of the
# composite types in order, with their defaults; constraints; indexes with
# their predicates; storage options and replica identity; sequences and
# the columns owning them; and the tables pg_dump keeps
# (pg_extension_config_dump), by name: an update that makes a table anew
# lists it last, and the order means nothing to pg_dump.
my $catalog_sql = q{
	WITH member AS (
		SELECT d.classid, d.objid, d.objsubid
		FROM pg_depend d
		JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'queue'
		WHERE d.deptype = 'e')
	SELECT pg_describe_object(m.classid, m.objid, m.objsubid) || ' | '
		|| coalesce(obj_description(m.objid, m.classid::regclass::name), '')
		|| ' | ' || coalesce(pg_get_function_result(p.oid) || ' '
			|| pg_get_function_arguments(p.oid) || ' ' || p.prokind::text || p.provolatile::text
			|| p.proparallel::text || ' strict ' || p.proisstrict || ' definer ' || p.prosecdef
			|| ' leakproof ' || p.proleakproof || ' cost ' || p.procost || ' rows ' || p.prorows
			|| ' ' || l.lanname || ' ' || coalesce(p.probin, '') || ' ' || p.prosrc
			|| ' ' || coalesce(array_to_string(p.proconfig, ','), ''), '')
		|| ' | owner ' || coalesce(p.proowner, c.relowner, t.typowner, n.nspowner)::regrole
		|| ' | acl ' || coalesce(coalesce(p.proacl, c.relacl, t.typacl, n.nspacl)::text, 'default')
		|| ' | ' || coalesce(c.relkind::text || c.relpersistence::text, '')
	FROM member m
	LEFT JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
	LEFT JOIN pg_language l ON l.oid = p.prolang
	LEFT JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
	LEFT JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
	LEFT JOIN pg_namespace n ON m.classid = 'pg_namespace'::regclass AND n.oid = m.objid
	UNION ALL
	SELECT 'initial privileges ' || pg_describe_object(i.classoid, i.objoid, i.objsubid)
		|| ' ' || i.privtype::text || ' ' || i.initprivs::text
	FROM pg_init_privs i
	JOIN pg_depend d ON d.classid = i.classoid AND d.objid = i.objoid AND d.deptype = 'e'
	JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'queue'
	UNION ALL
	SELECT 'column ' || a.attrelid::regclass || ' ' || a.attnum || ' ' || a.attname || ' '
		|| format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
		|| coalesce(' collate ' || co.collname, '')
		|| coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), '')
	FROM pg_attribute a
	LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
	LEFT JOIN pg_collation co ON co.oid = a.attcollation AND co.collname <> 'default'
	WHERE a.attrelid IN (
			SELECT oid FROM pg_class
			WHERE relnamespace = 'queue_storage'::regnamespace AND relkind = 'r'
			UNION ALL
			SELECT t.typrelid FROM pg_type t
			JOIN pg_depend d ON d.classid = 'pg_type'::regclass AND d.objid = t.oid
				AND d.deptype = 'e'
			JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'queue'
			WHERE t.typtype = 'c')
		AND a.attnum > 0 AND NOT a.attisdropped
	UNION ALL
	SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' '
		|| pg_get_constraintdef(oid)
	FROM pg_constraint WHERE connamespace = 'queue_storage'::regnamespace
	UNION ALL
	SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'queue_storage'
	UNION ALL
	SELECT 'storage options ' || c.oid::regclass || ' '
		|| coalesce(array_to_string(c.reloptions, ','), '')
		|| ' replica identity ' || c.relreplident::text
	FROM pg_class c
	WHERE c.relnamespace = 'queue_storage'::regnamespace AND c.relkind IN ('r', 'i')
	UNION ALL
	SELECT 'sequence ' || s.seqrelid::regclass || ' ' || format_type(s.seqtypid, NULL)
		|| ' start ' || s.seqstart || ' increment ' || s.seqincrement || ' min ' || s.seqmin
		|| ' max ' || s.seqmax || ' cache ' || s.seqcache || ' cycle ' || s.seqcycle
		|| coalesce(' owned by ' || (
			SELECT d.refobjid::regclass || '.' || a.attname
			FROM pg_depend d
			JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
			WHERE d.classid = 'pg_class'::regclass AND d.objid = s.seqrelid
				AND d.refclassid = 'pg_class'::regclass AND d.deptype = 'a'), '')
	FROM pg_sequence s
	JOIN pg_class c ON c.oid = s.seqrelid AND c.relnamespace = 'queue_storage'::regnamespace
	UNION ALL
	SELECT 'kept by pg_dump ' || coalesce((
			SELECT string_agg(t.relid::regclass || ' ' || coalesce(w.cond, 'NULL'), ', '
				ORDER BY t.relid::regclass::text)
			FROM unnest(e.extconfig) WITH ORDINALITY AS t(relid, n)
			LEFT JOIN unnest(e.extcondition) WITH ORDINALITY AS w(cond, n) ON w.n = t.n), '')
		|| ' | relocatable ' || e.extrelocatable || ' | owner ' || e.extowner::regrole
	FROM pg_extension e WHERE e.extname = 'queue'
	ORDER BY 1};

# the lines of one catalog description not in the other: "updated: ..."
# for a line only the updated install has, "fresh: ..." for the other way
sub catalog_difference
{
	my ($updated, $fresh) = @_;
	my (%in_updated, %in_fresh);
	$in_updated{$_}++ foreach split /\n/, $updated;
	$in_fresh{$_}++ foreach split /\n/, $fresh;
	my $difference = join("\n",
		(map { "updated: $_" } grep { !$in_fresh{$_} } split /\n/, $updated),
		(map { "fresh: $_" } grep { !$in_updated{$_} } split /\n/, $fresh));
	return $difference if $difference ne '' || $updated eq $fresh;
	return 'the same lines, not as many times each';
}

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION queue');
my $fresh_catalog = $node->safe_psql('fresh', $catalog_sql);
$node->safe_psql('postgres', 'CREATE ROLE producer');

foreach my $version (@earlier)
{
	my $db = "from_$version";
	$db =~ s/\./_/g;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION queue VERSION '$version'; CREATE EXTENSION dblink");
	my $connstr = 'host=' . $node->host . ' port=' . $node->port . " dbname=$db";

	# the queue plain only has a get waiting on it while the update runs
	$node->safe_psql($db, q{SELECT queue_create('plain', max_dequeue_count => NULL)});
	fill_queues($node, $db);
	# a backlog, so that the update holds the messages table's lock long
	# enough (1.7 copies the table) for the waiting get below to look, and
	# wait for the lock, meanwhile
	$node->safe_psql($db, q{SELECT queue_create('backlog');
		SELECT count(*) FROM generate_series(1, 30000) i, queue_put('backlog', 'waiting ' || i) p});
	# leases taken before the update: their receipts are used after it
	my @leases = take_leases($node, $db);
	is($node->safe_psql($db, q{SELECT count(*) FROM queue_inspect('orders-poison')}), '1',
		"$version: a message is in the poison queue before the update");

	my $before = queues_state($node, $db, 'plain', 'backlog');

	# the update runs while a get waits on the queue plain
	my $waited = $node->safe_psql($db, qq{
DO \$\$
DECLARE
	started timestamptz := clock_timestamp();
	waiting boolean := false;
BEGIN
	PERFORM dblink_connect('waiter', '$connstr');
	PERFORM dblink_send_query('waiter',
		'SELECT body FROM queue_get(''plain'', 1, NULL, ''20 s'')');
	-- the update starts once the get is seen waiting
	FOR i IN 1..1000 LOOP
		-- pg_stat_activity is read once per transaction unless cleared
		PERFORM pg_stat_clear_snapshot();
		waiting := EXISTS (SELECT FROM pg_stat_activity
			WHERE query LIKE '%queue_get(''plain''%' AND pid <> pg_backend_pid()
				AND wait_event_type = 'Extension');
		EXIT WHEN waiting;
		PERFORM pg_sleep(0.01);
	END LOOP;
	ALTER EXTENSION queue UPDATE;
	COMMIT;
	PERFORM queue_put('plain', 'put after the update');
	COMMIT;
	CREATE TEMP TABLE waited AS
		SELECT body, clock_timestamp() - started < '15 s' AS in_time, waiting
		FROM dblink_get_result('waiter') AS t(body text);
	PERFORM dblink_disconnect('waiter');
END
\$\$;
SELECT 'waiting: ' || waiting || ', got: ' || body || ', in time: ' || in_time FROM waited;});
	is($waited, 'waiting: true, got: put after the update, in time: true',
		"$version: a get waiting through the update is woken by a put after it");
	is($node->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'queue'}),
		$newest, "$version: updated to $newest");

	is($node->safe_psql($db, q{SELECT puts || ' ' || gets FROM queue_stats('plain')}), '1 1',
		"$version: the put after the update and the get it woke are counted");
	is($node->safe_psql($db, q{SELECT count(*) FROM queue_peek('backlog', 1000)}),
		'1000', "$version: the backlog is still there to get");
	is($node->safe_psql($db, q{SELECT visible FROM queue_stats('backlog')}),
		'30000', "$version: ... all of it");
	is(queues_state($node, $db, 'plain', 'backlog'), $before,
		"$version: every queue, message (visibility, dequeue count, receipt), grant and counter unchanged");
	is($node->safe_psql($db, q{
		SELECT count(*) FILTER (WHERE priority <> 0 OR group_id IS NOT NULL) || ' '
			|| (SELECT count(*) FILTER (WHERE deduplication_window <> '5 minutes')
				FROM queue_storage.queues)
		FROM queue_storage.messages}),
		'0 0', "$version: stored messages have priority 0 and no group, queues a 5 minute deduplication window");
	is($node->safe_psql($db, q{
		SELECT count(*) FILTER (WHERE delay <> '0' OR attributes <> '{}' OR tags <> '{}')
		FROM queue_storage.queues}),
		'0', "$version: stored queues have no delay, attributes or tags");
	is($node->safe_psql($db, q{
		SELECT count(*) FILTER (WHERE retry_delay <> '0' OR retry_backoff OR retry_delay_max IS NOT NULL
			OR paused)
		FROM queue_storage.queues}),
		'0', "$version: stored queues have no retry delay, no backoff, no cap, and are not paused");
	is($node->safe_psql($db, q{
		SELECT count(*) FILTER (WHERE retention IS NOT NULL) || ' '
			|| (SELECT count(*) FROM queue_storage.retained)
		FROM queue_storage.queues}),
		'0 0', "$version: stored queues keep nothing, and nothing is kept");

	# receipts from before the update still work
	is(scalar(@leases), 2, "$version: two leases taken before the update");
	is($node->safe_psql($db, qq{
		SELECT count(*) FROM queue_update('orders', $leases[0][0], '$leases[0][1]', '0')}),
		'1', "$version: an update with a receipt from before the update works");
	$node->safe_psql($db, qq{SELECT queue_delete('orders', $leases[1][0], '$leases[1][1]')});
	is($node->safe_psql($db, qq{SELECT count(*) FROM queue_inspect('orders') WHERE message_id = $leases[1][0]}),
		'0', "$version: a delete with a receipt from before the update works");
	my ($code) = $node->psql($db, qq{SELECT queue_delete('orders', $leases[0][0], '$leases[0][1]')});
	isnt($code, 0, "$version: the receipt the update replaced is refused");
	# the consumer loop of the newest version
	my ($id, $receipt) = split /\|/, $node->safe_psql($db,
		q{SELECT message_id, pop_receipt FROM queue_get('orders', 1)});
	is($node->safe_psql($db, qq{
		SELECT string_agg(status, ',' ORDER BY status) FROM queue_delete_and_get('orders',
			ARRAY[$id]::bigint[], ARRAY['$receipt']::uuid[], 1)}),
		'claimed,deleted', "$version: queue_delete_and_get deletes a message and leases the next");

	# the grant holds, and only as far as it went
	is($node->safe_psql($db, q{SET ROLE producer; SELECT count(*) FROM queue_put('orders', 'by producer')}),
		'1', "$version: the send grant holds after the update");
	my ($denied, $out, $err) = $node->psql($db, q{SET ROLE producer; SELECT * FROM queue_get('orders')});
	like($err, qr/permission denied/, "$version: ... and gives no more than send");

	# a stored queue given a retention keeps what is deleted, and replays it
	$node->safe_psql($db, q{SELECT queue_alter('orders', retention => '1 day')});
	my ($kept, $kept_receipt) = split /\|/, $node->safe_psql($db,
		q{SELECT message_id, pop_receipt FROM queue_get('orders', 1)});
	$node->safe_psql($db, qq{SELECT queue_delete('orders', $kept, '$kept_receipt')});
	is($node->safe_psql($db, qq{
		SELECT state FROM queue_inspect('orders', 10000) WHERE message_id = $kept}),
		'deleted', "$version: a delete after the update is kept once the queue has a retention");
	is($node->safe_psql($db, qq{
		SELECT queue_replay('orders', message_ids => ARRAY[$kept]::bigint[])}),
		'1', "$version: ... and replayed");

	# a stored queue subscribes to a topic, and a publish reaches it
	$node->safe_psql($db, q{SELECT queue_topic_create('updates');
		SELECT queue_subscribe('updates', 'orders', '{"kind": ["order"]}');
		SELECT queue_subscribe('updates', 'plain')});
	is($node->safe_psql($db, q{
		SELECT string_agg(queue, ',' ORDER BY queue) FROM queue_publish('updates', 'published', '{"kind": "order"}')}),
		'orders,plain', "$version: a topic publishes to stored queues after the update");
	is($node->safe_psql($db, q{
		SELECT string_agg(queue, ',' ORDER BY queue) FROM queue_publish('updates', 'published', '{"kind": "other"}')}),
		'plain', "$version: ... filtered by its headers");
	my ($taken) = $node->psql($db, q{SELECT queue_topic_create('orders')});
	isnt($taken, 0, "$version: a topic may not take a stored queue's name");
	# a stored queue gets a schedule, whose due time a sweep serves
	$node->safe_psql($db, q{SELECT queue_schedule('hourly', 'plain', '@hourly', 'tick');
		UPDATE queue_storage.schedules SET next_at = now() - interval '1 minute'});
	$node->safe_psql($db, q{SELECT queue_maintain()});
	is($node->safe_psql($db, q{
		SELECT count(*) FROM queue_peek('plain', 100) WHERE headers ->> 'schedule' = 'hourly'}),
		'1', "$version: a schedule on a stored queue puts its message");

	is(catalog_difference($node->safe_psql($db, $catalog_sql), $fresh_catalog), '',
		"$version: the catalog is what a fresh install of $newest makes");
}

$node->stop;
done_testing();
