-- bench/topics.sh: ten puts in one transaction, into the ten queues a
-- publish reaches, with the headers the publish carries
BEGIN;
SELECT 1 FROM queue_put('sub-1', 'event', headers => '{"kind": "order", "total": 120, "region": "eu-west"}');
SELECT 1 FROM queue_put('sub-2', 'event', headers => '{"kind": "order", "total": 120, "region": "eu-west"}');
SELECT 1 FROM queue_put('sub-3', 'event', headers => '{"kind": "order", "total": 120, "region": "eu-west"}');
SELECT 1 FROM queue_put('sub-4', 'event', headers => '{"kind": "order", "total": 120, "region": "eu-west"}');
SELECT 1 FROM queue_put('sub-5', 'event', headers => '{"kind": "order", "total": 120, "region": "eu-west"}');
SELECT 1 FROM queue_put('sub-6', 'event', headers => '{"kind": "order", "total": 120, "region": "eu-west"}');
SELECT 1 FROM queue_put('sub-7', 'event', headers => '{"kind": "order", "total": 120, "region": "eu-west"}');
SELECT 1 FROM queue_put('sub-8', 'event', headers => '{"kind": "order", "total": 120, "region": "eu-west"}');
SELECT 1 FROM queue_put('sub-9', 'event', headers => '{"kind": "order", "total": 120, "region": "eu-west"}');
SELECT 1 FROM queue_put('sub-10', 'event', headers => '{"kind": "order", "total": 120, "region": "eu-west"}');
COMMIT;
