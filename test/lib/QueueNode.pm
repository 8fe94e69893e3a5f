# A throwaway server for the TAP tests of waiting getters (006, 008, 018,
# 020, 021 in test/t/): the library preloaded, the extension and dblink
# (whose connections are the getters) created in database postgres.
package QueueNode;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;

our @EXPORT = qw(getters_node);

# Starts and returns the node; $settings: more lines for postgresql.conf
sub getters_node
{
	my ($name, $settings) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'queue'\n" . ($settings // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION queue; CREATE EXTENSION dblink;');
	return $node;
}

1;
