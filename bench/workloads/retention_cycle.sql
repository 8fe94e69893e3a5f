-- bench/retention.sh: the cycle on the queue :queue, each statement its
-- own transaction; pgbench -r times the get and the delete apart
SELECT 1 FROM queue_put(:queue, 'job');
SELECT message_id, pop_receipt FROM queue_get(:queue) \gset
SELECT 1 FROM queue_delete(:queue, :message_id, :pop_receipt);
