# The install and update scripts run as the superuser who runs CREATE
# EXTENSION or ALTER EXTENSION UPDATE, with search_path set to the schema
# the extension goes into.  A role that may create objects in that schema
# plants a function or operator there under every name the installed
# scripts call (test/script_calls.py reads them with PostgreSQL's parser,
# as the layout suite's check does), with argument types from a set that
# holds closer matches than the built-in ones (quote_ident(name),
# format(text, regnamespace, text), oid = integer); each would, if it ran,
# warn, note itself in a table of its planter and make its planter a
# superuser.  A fresh install, and the install of 1.0 updated a version at
# a time to the newest, run none of them.  The same script with its
# pg_catalog qualifications taken out does run some: the planted ones are
# close enough matches to be taken.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;

# the Python that has Debian's python3-pglast (test/prepare.sh installs it)
my $python = '/usr/bin/python3';
my $script_calls = "$FindBin::Bin/../script_calls.py";
if (system("$python -c 'import pglast' 2>/dev/null") != 0)
{
	plan skip_all => "$python cannot import pglast (Debian's python3-pglast), which reads the names the scripts call";
}

my $node = PostgreSQL::Test::Cluster->new('planted');
$node->init;
$node->start;

# what the server runs: the installed scripts
my $extension_dir = $node->config_data('--sharedir') . '/extension';
my @called = split /\n/, `$python $script_calls names $extension_dir`;
is($?, 0, "test/script_calls.py reads the names called by the scripts in $extension_dir");
my (@functions, @operators);
foreach (@called)
{
	if (/^function (\S+) (\d+)$/) { push @functions, "('$1', $2)"; }
	elsif (/^(prefix )?operator (\S+)$/) { push @operators, "('$2', " . ($1 ? 'true' : 'false') . ")"; }
	else { die "unexpected line from script_calls.py: $_"; }
}
ok(@functions > 0 && @operators > 0, 'the scripts call '
	. scalar(@functions) . ' function names and ' . scalar(@operators) . ' operators: '
	. join(', ', @called));

# The schema the extension goes into, where mallory may create; and
# mallory's own schema, with the table the planted functions write to.
$node->safe_psql('postgres', q{
	CREATE ROLE mallory LOGIN;
	CREATE DATABASE planted;
});
$node->safe_psql('planted', q{
	CREATE SCHEMA api;
	GRANT USAGE, CREATE ON SCHEMA api TO mallory;
	CREATE SCHEMA evidence AUTHORIZATION mallory;
});

# Under each name, as mallory: every combination of the argument types
# below (up to three arguments; more take one type for all), returning what
# the built-in of that name returns; aggregates as aggregates.  Operators
# for every pair of types.
my $types = q{ARRAY['name', 'text', 'oid', 'regnamespace', 'regrole', 'regclass',
	'aclitem', '"char"', 'integer', 'smallint', 'bigint', 'boolean', 'anyelement']};
my $function_list = join(', ', @functions);
my $operator_list = join(', ', @operators);
$node->safe_psql('planted', qq{
CREATE TABLE evidence.ran (what text);
CREATE TABLE evidence.planted (name text, signature text);
DO \$plant\$
DECLARE
	types text[] := $types;
	f record;
	o record;
	sig text[];
	kind "char";
	result text;
	label text;
	body text;
	n integer := 0;
BEGIN
	FOR f IN SELECT * FROM (VALUES $function_list) AS t(name, arity) LOOP
		SELECT p.prokind, pg_get_function_result(p.oid) INTO kind, result
		FROM pg_proc p
		WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname = f.name
		ORDER BY p.pronargs = f.arity DESC, p.provariadic <> 0 DESC, p.oid
		LIMIT 1;
		IF NOT FOUND OR result ~ '\\many' THEN
			kind := 'f';
			result := 'text';
		END IF;
		FOR sig IN
			WITH RECURSIVE c(sig) AS (
				SELECT ARRAY[]::text[]
				UNION ALL
				SELECT c.sig || t FROM c, unnest(types) t
				WHERE cardinality(c.sig) < f.arity AND f.arity <= 3)
			SELECT c.sig FROM c WHERE cardinality(c.sig) = f.arity
			UNION ALL
			SELECT array_fill(t, ARRAY[f.arity]) FROM unnest(types) t WHERE f.arity > 3
		LOOP
			n := n + 1;
			label := format('%s(%s)', f.name, array_to_string(sig, ', '));
			body := format('BEGIN RAISE WARNING %L, %L; INSERT INTO evidence.ran VALUES (%L); '
				'ALTER ROLE mallory SUPERUSER; %s END',
				'planted % ran', label, label,
				CASE WHEN kind <> 'a' AND (result ~ '^(SETOF|TABLE)' OR result = 'void')
					THEN 'RETURN;' ELSE 'RETURN NULL;' END);
			BEGIN
				IF kind = 'a' THEN
					EXECUTE format('CREATE FUNCTION evidence.planted_%s(%s, %s) RETURNS %s LANGUAGE plpgsql AS %L',
						n, result, array_to_string(sig, ', '), result, body);
					EXECUTE format('CREATE AGGREGATE api.%I(%s) (SFUNC = evidence.planted_%s, STYPE = %s)',
						f.name, array_to_string(sig, ', '), n, result);
				ELSE
					EXECUTE format('CREATE FUNCTION api.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L',
						f.name, array_to_string(sig, ', '), result, body);
				END IF;
				INSERT INTO evidence.planted VALUES (f.name, label);
			EXCEPTION WHEN OTHERS THEN
				RAISE NOTICE 'not planted: %: %', label, SQLERRM;
			END;
		END LOOP;
	END LOOP;

	FOR o IN SELECT * FROM (VALUES $operator_list) AS t(name, prefix) LOOP
		SELECT oprresult::regtype::text INTO result FROM pg_operator
		WHERE oprnamespace = 'pg_catalog'::regnamespace AND oprname = o.name
		ORDER BY oid LIMIT 1;
		IF NOT FOUND OR result ~ '\\many' THEN
			result := 'boolean';
		END IF;
		FOR sig IN
			SELECT CASE WHEN o.prefix THEN ARRAY[r] ELSE ARRAY[l, r] END
			FROM unnest(types) l, unnest(types) r
			WHERE NOT o.prefix OR l = types[1]
		LOOP
			n := n + 1;
			label := format('operator %s(%s)', o.name, array_to_string(sig, ', '));
			body := format('BEGIN RAISE WARNING %L, %L; INSERT INTO evidence.ran VALUES (%L); '
				'ALTER ROLE mallory SUPERUSER; RETURN NULL; END',
				'planted % ran', label, label);
			BEGIN
				EXECUTE format('CREATE FUNCTION evidence.planted_%s(%s) RETURNS %s LANGUAGE plpgsql AS %L',
					n, array_to_string(sig, ', '), result, body);
				EXECUTE format('CREATE OPERATOR api.%s (%s FUNCTION = evidence.planted_%s)',
					o.name,
					CASE WHEN o.prefix THEN format('RIGHTARG = %s,', sig[1])
						ELSE format('LEFTARG = %s, RIGHTARG = %s,', sig[1], sig[2]) END,
					n);
				INSERT INTO evidence.planted VALUES (o.name, label);
			EXCEPTION WHEN OTHERS THEN
				RAISE NOTICE 'not planted: %: %', label, SQLERRM;
			END;
		END LOOP;
	END LOOP;
END
\$plant\$;
}, extra_params => ['-U', 'mallory']);

my $planted = $node->safe_psql('planted', q{
	SELECT name || ' ' || count(*) FROM evidence.planted GROUP BY name ORDER BY name});
note "planted in schema api, per name: " . join(', ', split(/\n/, $planted));
my @unplanted = grep {
	my ($name) = /^\S+(?: operator)? (\S+)/;
	$planted !~ /^\Q$name\E \d+$/m
} @called;
is(join(', ', @unplanted), '', 'something is planted under every name the scripts call');

# the superuser's statements in a copy of the planted database
sub run_in
{
	my ($db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql);
	return ($ret, $err);
}

sub nothing_ran
{
	my ($db, $what, $err) = @_;
	my %seen;
	my @warned = grep { !$seen{$_}++ } $err =~ /planted (.*) ran/g;
	is(join(', ', @warned), '', "$what: no planted function or operator ran (warnings)");
	is($node->safe_psql($db, q{SELECT string_agg(DISTINCT what, ', ') FROM evidence.ran}), '',
		"$what: ... none noted itself");
	is($node->safe_psql($db, q{SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'}), 'f',
		"$what: ... and mallory is not a superuser");
}

# (a) a fresh install: the full script of the newest version
$node->safe_psql('postgres', 'CREATE DATABASE fresh TEMPLATE planted');
my ($ret, $err) = run_in('fresh', 'CREATE EXTENSION queue SCHEMA api');
is($ret, 0, 'CREATE EXTENSION queue into the planted schema succeeds') or diag $err;
like($err, qr/may create objects in schema api, which holds the queue functions: mallory/,
	'... and warns about the schema, naming mallory');
nothing_ran('fresh', 'CREATE EXTENSION', $err);
my $newest = $node->safe_psql('fresh', q{SELECT extversion FROM pg_extension WHERE extname = 'queue'});

# (b) 1.0, then ALTER EXTENSION UPDATE a version at a time
$node->safe_psql('postgres', 'CREATE DATABASE stepwise TEMPLATE planted');
my @versions = split /\n/, $node->safe_psql('stepwise', q{
	SELECT version FROM pg_available_extension_versions WHERE name = 'queue'
	ORDER BY string_to_array(version, '.')::int[]});
is($versions[0], '1.0', "versions from 1.0: @versions");
($ret, $err) = run_in('stepwise', q{CREATE EXTENSION queue VERSION '1.0' SCHEMA api});
is($ret, 0, "CREATE EXTENSION queue VERSION '1.0' into the planted schema succeeds") or diag $err;
my $all_err = $err;
foreach my $version (@versions[1 .. $#versions])
{
	($ret, $err) = run_in('stepwise', qq{ALTER EXTENSION queue UPDATE TO '$version'});
	is($ret, 0, "ALTER EXTENSION queue UPDATE TO '$version' succeeds") or diag $err;
	$all_err .= $err;
}
is($node->safe_psql('stepwise', q{SELECT extversion FROM pg_extension WHERE extname = 'queue'}),
	$newest, "updated step by step to $newest");
nothing_ran('stepwise', 'CREATE EXTENSION 1.0 and every update', $all_err);

# The control: the scripts of (b), their pg_catalog qualifications taken
# out, run by hand in a transaction rolled back.  Some planted function and
# some planted operator run: the ones planted are closer matches than the
# built-in ones for what the scripts call.
my $script = '';
my $previous;
foreach my $version (@versions)
{
	my $file = defined $previous ? "queue--$previous--$version.sql" : "queue--$version.sql";
	open my $fh, '<', "$extension_dir/$file" or die "$file: $!";
	$script .= do { local $/; <$fh> };
	close $fh;
	$previous = $version;
}
$script =~ s/^\\echo.*$//mg;
$script =~ s/\@extschema\@/api/g;
$script =~ s/MODULE_PATHNAME/\$libdir\/queue/g;
$script =~ s/OPERATOR\(pg_catalog\.([^)]+)\)/$1/g;
$script =~ s/pg_catalog\.(\w+)\(/$1(/g;
$node->safe_psql('postgres', 'CREATE DATABASE control TEMPLATE planted');
my ($out);
($ret, $out, $err) = $node->psql('control',
	"\\set ON_ERROR_ROLLBACK on\nBEGIN;\nSET LOCAL search_path = api;\n$script\nROLLBACK;",
	on_error_stop => 0);
my %ran = map { $_ => 1 } $err =~ /planted (.*) ran/g;
note 'with the qualifications taken out, these ran: ' . join(', ', sort keys %ran);
ok((grep { !/^operator / } keys %ran) && (grep { /^operator / } keys %ran),
	'with the qualifications taken out, planted functions and operators run');

$node->stop;
done_testing();
