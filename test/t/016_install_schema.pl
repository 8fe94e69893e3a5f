# Installing into a schema that other roles may create objects in draws a
# WARNING with the fix: such a role could plant a function there that a
# call resolves to instead of ours (queue_delete(text, integer, text) is a
# closer match for queue_delete('q', 5, '...') than the real one) and have
# it run with the caller's rights.  The safe install -- a schema of its own,
# calls schema-qualified -- is shown to run our function even with such a
# function planted in public.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('install_schema');
$node->init;
$node->start;

# stderr of the statements, run as the superuser
sub warnings_of
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql, on_error_stop => 1);
	die "failed: $sql\n$err" if $ret != 0;
	return $err;
}

unlike(warnings_of('CREATE EXTENSION queue'), qr/WARNING/,
	'no warning in a schema only its owner may create in (public, since PostgreSQL 15)');
warnings_of('DROP EXTENSION queue');

warnings_of('GRANT CREATE ON SCHEMA public TO PUBLIC');
my $warned = warnings_of('CREATE EXTENSION queue');
like($warned, qr/WARNING:  queue: roles other than its owner may create objects in schema public, which holds the queue functions: PUBLIC/,
	'a schema PUBLIC may create in draws a warning');
like($warned, qr/HINT:  Take the right away \(REVOKE CREATE ON SCHEMA public FROM PUBLIC\), or install into a schema of its own/,
	'... with the fix');
warnings_of('DROP EXTENSION queue');

warnings_of(q{CREATE ROLE mallory LOGIN; CREATE SCHEMA shared; GRANT CREATE ON SCHEMA shared TO mallory});
like(warnings_of('CREATE EXTENSION queue SCHEMA shared'),
	qr/may create objects in schema shared, which holds the queue functions: mallory/,
	'a schema one other role may create in draws a warning naming it');
warnings_of('DROP EXTENSION queue');
like(warnings_of(q{CREATE EXTENSION queue VERSION '1.1' SCHEMA shared; ALTER EXTENSION queue UPDATE}),
	qr/WARNING:  queue: roles other than its owner/, '... and so does an update to this version');
warnings_of('DROP EXTENSION queue');

# The safe install, while mallory may still create in public.
unlike(warnings_of('CREATE SCHEMA queue; CREATE EXTENSION queue SCHEMA queue'), qr/WARNING/,
	'no warning in a schema of its own');
$node->safe_psql('postgres', q{
	SELECT queue.queue_create('orders');
	SELECT queue.queue_grant('orders', 'mallory', 'process');
	GRANT USAGE ON SCHEMA queue TO mallory;
});
# mallory plants a closer match in public, which is first in search_path
$node->safe_psql('postgres', q{
	CREATE FUNCTION public.queue_delete(text, integer, text) RETURNS void
	LANGUAGE sql AS 'ALTER ROLE mallory SUPERUSER';
}, extra_params => ['-U', 'mallory']);
my ($ret, $out, $err) = $node->psql('postgres',
	q{SET search_path = public, queue; SELECT queue.queue_delete('orders', 5, '00000000-0000-0000-0000-000000000000')});
like($err, qr/message 5 not found in queue "orders"/,
	'a schema-qualified call runs our function, not the one planted in public');
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'}), 'f',
	'... and the planted one never ran');
($ret, $out, $err) = $node->psql('postgres',
	q{SET search_path = public, queue; SELECT queue_delete('orders', 5, '00000000-0000-0000-0000-000000000000')});
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'}), 't',
	'an unqualified call with public first runs the planted one: why the docs qualify every call');

$node->stop;
done_testing();
