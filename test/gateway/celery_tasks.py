"""A Celery app on kombu's SQS transport, pointed at the gateway, for
test/gateway/celery.test.js.

The worker loads it as it would any app (celery -A celery_tasks worker,
from this folder); run as a script, it is the producer:

    python3 -I celery_tasks.py send FIRST LAST

sends record(n) for n from FIRST to LAST - 1.  Both read the broker's URL
(sqs://KEY:SECRET@HOST:PORT, the secret URL-quoted) from
CELERY_GATEWAY_URL and the queue's name from CELERY_GATEWAY_QUEUE; each
task appends "n task-id" to the file named by CELERY_RECORD_FILE."""
import os
import sys

from celery import Celery

app = Celery('celery_tasks', broker=os.environ['CELERY_GATEWAY_URL'])
app.conf.update(
    # the endpoint is the broker URL's host and port, over plain HTTP
    broker_transport_options={'is_secure': False, 'region': 'us-east-1', 'wait_time_seconds': 2},
    task_default_queue=os.environ['CELERY_GATEWAY_QUEUE'],
    # no results: the tasks' record is the file
    task_ignore_result=True,
)


@app.task(name='record')
def record(n):
    # one write in append mode: the pool's processes do not interleave lines
    with open(os.environ['CELERY_RECORD_FILE'], 'a', encoding='utf-8') as out:
        out.write('%d %s\n' % (n, record.request.id))


def send(first, last):
    for n in range(first, last):
        record.delay(n)


if __name__ == '__main__':
    if len(sys.argv) != 4 or sys.argv[1] != 'send':
        sys.exit('usage: python3 -I celery_tasks.py send FIRST LAST')
    send(int(sys.argv[2]), int(sys.argv[3]))
