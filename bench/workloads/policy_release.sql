-- bench/policy.sh: get one message and give it back with queue_release
-- (the queue's retry delay is 0: visible at once).
SELECT message_id, pop_receipt FROM queue_get('policy') \gset
SELECT 1 FROM queue_release('policy', :message_id, :pop_receipt);
