-- bench/topics.sh: one publish to the topic :topic, its own transaction
SELECT count(*) FROM queue_publish(:topic, 'event', '{"kind": "order", "total": 120, "region": "eu-west"}');
