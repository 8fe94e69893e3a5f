-- bench/policy.sh: get one message and give it back with queue_update(..., '0').
SELECT message_id, pop_receipt FROM queue_get('policy') \gset
SELECT 1 FROM queue_update('policy', :message_id, :pop_receipt, '0');
