-- ordering: a put, with a deduplication_id never seen when :dedup is 1
\if :dedup
SELECT count(*) FROM queue_put('dedup-q', 'x', deduplication_id => gen_random_uuid()::text);
\else
SELECT count(*) FROM queue_put('put-q', 'x');
\endif
