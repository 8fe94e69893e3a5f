-- Memory: one backend (this psql session) makes 1,008 calls, reads its
-- memory, makes :statements x 3,000 more (bench/floor.sh: 999,000), reads it again.  Each statement runs put, get
-- and delete for each of its rows (one transaction a statement);
-- pg_backend_memory_contexts shows only the backend that reads it, so the
-- reads are in this session, into psql variables (a temporary table would
-- itself take local buffer memory between the two reads).  The first part is
-- six statements: a prepared statement gets its lasting generic plan on its
-- sixth run, and the counters are written once per transaction.
SET synchronous_commit = off;
SELECT queue_create('memory', message_ttl => NULL, max_dequeue_count => NULL) \gset
\o /dev/null
SELECT $q$SELECT count(queue_delete('memory', m.message_id, m.pop_receipt)) FROM generate_series(1, 56) g, LATERAL queue_put('memory', g::text) p, LATERAL queue_get('memory', 1 + 0 * g) m$q$
FROM generate_series(1, 6) \gexec
\o
SELECT count(*) AS contexts1, sum(total_bytes) AS total1, sum(used_bytes) AS used1 FROM pg_backend_memory_contexts \gset
\o /dev/null
SELECT $q$SELECT count(queue_delete('memory', m.message_id, m.pop_receipt)) FROM generate_series(1, 1000) g, LATERAL queue_put('memory', g::text) p, LATERAL queue_get('memory', 1 + 0 * g) m$q$
FROM generate_series(1, :statements) \gexec
\o
SELECT count(*) AS contexts2, sum(total_bytes) AS total2, sum(used_bytes) AS used2 FROM pg_backend_memory_contexts \gset
SELECT queue_drop('memory') \gset
-- calls, contexts, total bytes, used bytes: after the first part, at the end
SELECT 1008, :contexts1, :total1, :used1;
SELECT 1008 + :statements * 3000, :contexts2, :total2, :used2;
