# The extension's own statements are never JIT-compiled, whatever the
# session's jit settings: they are planned with some plan methods off,
# which up to PostgreSQL 17 gives a plan a cost far above jit_above_cost,
# and a cached plan marked for JIT is compiled again at every execution.
# With jit_above_cost = 0 every statement qualifies; pg_stat_statements,
# tracking nested statements, counts the functions compiled for each.  A
# query of the test's own is compiled, to show that JIT works on this
# server; a server without JIT (no llvmjit) skips the test and says so.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('no_jit');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue, pg_stat_statements'
queue.enable_worker = off
pg_stat_statements.track = all
jit = on
jit_above_cost = 0
});
$node->start;

if ($node->safe_psql('postgres', 'SELECT pg_jit_available()') ne 't')
{
	plan skip_all => 'this PostgreSQL has no JIT provider (llvmjit): nothing could be compiled';
}

$node->safe_psql('postgres', q{
	CREATE EXTENSION pg_stat_statements;
	CREATE EXTENSION queue;
	SELECT queue_create('nojit');
	SELECT count(*) FROM queue_put_batch('nojit', ARRAY['a', 'b', 'c']);
	SELECT pg_stat_statements_reset();
});
# every call that runs statements of the extension's
$node->safe_psql('postgres', q{
	SELECT * FROM queue_stats('nojit');
	SELECT count(*) FROM queue_peek('nojit', 10);
	SELECT count(*) FROM queue_list();
	SELECT count(*) FROM queue_inspect('nojit');
	SELECT count(*) FROM queue_metrics();
	SELECT queue_maintain();
	SELECT queue_alter('nojit', visibility_timeout => '45 seconds');
	SELECT queue_redrive('nojit-poison');
	SELECT queue_clear('nojit');
	SELECT sum(x) FROM generate_series(1, 10) AS x;
});

my $ours = $node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_statements WHERE query ~ 'queue_storage\.'});
my $compiled = $node->safe_psql('postgres', q{
	SELECT coalesce(string_agg(left(regexp_replace(query, '\s+', ' ', 'g'), 80), ' | '), '')
	FROM pg_stat_statements
	WHERE query ~ 'queue_storage\.' AND jit_functions > 0});
my $control = $node->safe_psql('postgres', q{
	SELECT sum(jit_functions) FROM pg_stat_statements
	WHERE query ~ 'generate_series'});

cmp_ok($ours, '>', 5, "pg_stat_statements saw the extension's statements ($ours)");
cmp_ok($control, '>', 0, "a query of the test's own was compiled ($control functions)");
is($compiled, '', "none of the extension's statements was compiled");

$node->stop;
done_testing();
