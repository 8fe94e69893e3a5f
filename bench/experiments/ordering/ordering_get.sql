-- ordering: a get of 10 from the queue :q, leases of 1 ms (the messages
-- come back at once, so the queue keeps its shape)
SELECT count(*) FROM queue_get(:q, 10, '1 millisecond');
