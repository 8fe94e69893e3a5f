"""boto3 against the gateway: what test/gateway/features.test.js checks of
queue attributes, tags, visibility changes, dead-letter queues, message
move tasks and FIFO queues.  Debian 12's boto3 speaks the Query protocol,
the sid chroot's the JSON protocol.  Reads the endpoint and keys from its
arguments; prints one JSON object of what boto3 gave back."""
import json
import os
import sys
import tempfile
import time

from botocore.exceptions import ClientError

# boto3_calls.py, beside this file, gives Debian 12's botocore the message
# move tasks it predates
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from boto3_calls import sqs_client, write_model_with_move_tasks  # noqa: E402


def error_of(call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except ClientError as err:
        return [err.response['Error']['Code'], err.response['ResponseMetadata']['HTTPStatusCode']]
    return None


def main():
    endpoint, key, secret = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as model_folder:
        write_model_with_move_tasks(model_folder)
        print(json.dumps(scenario(sqs_client(endpoint, model_folder, key, secret))))


def scenario(sqs):
    out = {'protocol': sqs.meta.service_model.protocol}
    arn = 'arn:aws:sqs:us-east-1:000000000000:%s'

    # queue attributes kept and acted on
    url = sqs.create_queue(QueueName='feat-std', Attributes={
        'DelaySeconds': '1', 'ReceiveMessageWaitTimeSeconds': '2', 'Policy': '{"Version": "2012-10-17"}'},
        tags={'team': 'orders'})['QueueUrl']
    out['attributes'] = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
        'DelaySeconds', 'ReceiveMessageWaitTimeSeconds', 'Policy', 'SqsManagedSseEnabled'])['Attributes']
    out['same_again'] = sqs.create_queue(QueueName='feat-std', Attributes={'DelaySeconds': '1'})['QueueUrl'] == url
    out['other_again'] = error_of(sqs.create_queue, QueueName='feat-std', Attributes={'DelaySeconds': '5'})
    sqs.send_message(QueueUrl=url, MessageBody='delayed')
    out['delayed_at_once'] = len(sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0).get('Messages', []))
    started = time.monotonic()
    # no WaitTimeSeconds: the queue's 2 seconds, within which the delay ends
    got = sqs.receive_message(QueueUrl=url, VisibilityTimeout=1).get('Messages', [])
    out['delayed_later'] = [m['Body'] for m in got]
    out['waited'] = time.monotonic() - started
    handle = got[0]['ReceiptHandle']
    # the visibility change keeps the handle valid
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=30)
    time.sleep(1.5)
    out['hidden_after_change'] = len(sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0).get('Messages', []))
    batch = sqs.change_message_visibility_batch(QueueUrl=url, Entries=[
        {'Id': 'good', 'ReceiptHandle': handle, 'VisibilityTimeout': 60},
        {'Id': 'forged', 'ReceiptHandle': 'x' * 40, 'VisibilityTimeout': 60}])
    out['change_batch'] = [sorted(e['Id'] for e in batch.get('Successful', [])),
                           sorted([e['Id'], e['Code']] for e in batch.get('Failed', []))]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    out['change_deleted'] = error_of(sqs.change_message_visibility, QueueUrl=url, ReceiptHandle=handle,
                                     VisibilityTimeout=10)
    out['change_range'] = error_of(sqs.change_message_visibility, QueueUrl=url, ReceiptHandle=handle,
                                   VisibilityTimeout=43201)

    # tags
    sqs.tag_queue(QueueUrl=url, Tags={'env': 'test', 'cost': '7'})
    sqs.untag_queue(QueueUrl=url, TagKeys=['cost'])
    out['tags'] = sqs.list_queue_tags(QueueUrl=url).get('Tags', {})
    out['too_many_tags'] = error_of(sqs.tag_queue, QueueUrl=url, Tags={'t%d' % i: 'v' for i in range(50)})

    # a dead-letter queue named by RedrivePolicy, and a move back
    dlq = sqs.create_queue(QueueName='feat-dlq')['QueueUrl']
    src = sqs.create_queue(QueueName='feat-src', Attributes={'RedrivePolicy': json.dumps(
        {'deadLetterTargetArn': arn % 'feat-dlq', 'maxReceiveCount': 1})})['QueueUrl']
    out['redrive'] = json.loads(sqs.get_queue_attributes(QueueUrl=src, AttributeNames=['RedrivePolicy'])['Attributes']['RedrivePolicy'])
    out['missing_dlq'] = error_of(sqs.set_queue_attributes, QueueUrl=url, Attributes={'RedrivePolicy': json.dumps(
        {'deadLetterTargetArn': arn % 'feat-none', 'maxReceiveCount': 1})})
    sqs.send_message(QueueUrl=src, MessageBody='poison')
    sqs.receive_message(QueueUrl=src, VisibilityTimeout=0, WaitTimeSeconds=1)
    dead = sqs.receive_message(QueueUrl=dlq, WaitTimeSeconds=5, VisibilityTimeout=0).get('Messages', [])
    out['dead'] = [m['Body'] for m in dead]
    out['sources'] = sqs.list_dead_letter_source_queues(QueueUrl=dlq)['queueUrls']
    out['not_a_dlq'] = error_of(sqs.start_message_move_task, SourceArn=arn % 'feat-src')
    out['delete_dlq_in_use'] = error_of(sqs.delete_queue, QueueUrl=dlq)
    task = sqs.start_message_move_task(SourceArn=arn % 'feat-dlq')['TaskHandle']
    tasks = sqs.list_message_move_tasks(SourceArn=arn % 'feat-dlq')['Results']
    out['tasks'] = [[t['Status'], t['ApproximateNumberOfMessagesMoved'], t['DestinationArn']] for t in tasks]
    out['cancel'] = error_of(sqs.cancel_message_move_task, TaskHandle=task)
    out['moved_back'] = [m['Body'] for m in sqs.receive_message(QueueUrl=src, WaitTimeSeconds=2).get('Messages', [])]

    # FIFO queues: groups in order, deduplication, sequence numbers
    fifo = sqs.create_queue(QueueName='feat.fifo', Attributes={
        'FifoQueue': 'true', 'ContentBasedDeduplication': 'true'})['QueueUrl']
    first = sqs.send_message(QueueUrl=fifo, MessageBody='a', MessageGroupId='g1')
    sqs.send_message(QueueUrl=fifo, MessageBody='b', MessageGroupId='g1', MessageDeduplicationId='b-1')
    sqs.send_message(QueueUrl=fifo, MessageBody='c', MessageGroupId='g2')
    repeat = sqs.send_message(QueueUrl=fifo, MessageBody='a', MessageGroupId='g1')
    out['fifo_repeat_same_id'] = repeat['MessageId'] == first['MessageId']
    out['fifo_sequence'] = first.get('SequenceNumber')
    batch = sqs.send_message_batch(QueueUrl=fifo, Entries=[
        {'Id': 'd', 'MessageBody': 'd', 'MessageGroupId': 'g2'},
        {'Id': 'nogroup', 'MessageBody': 'e'}])
    out['fifo_batch'] = [[e['Id'], 'SequenceNumber' in e] for e in batch.get('Successful', [])] + \
        [[e['Id'], e['Code']] for e in batch.get('Failed', [])]
    got = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10, AttributeNames=['All']).get('Messages', [])
    out['fifo_received'] = [[m['Body'], m['Attributes'].get('MessageGroupId'),
                             m['Attributes'].get('SequenceNumber') is not None,
                             m['Attributes'].get('MessageDeduplicationId'),
                             int(m['Attributes']['ApproximateFirstReceiveTimestamp']) -
                             int(m['Attributes']['SentTimestamp'])] for m in got]
    out['fifo_in_flight_groups'] = len(sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10).get('Messages', []))
    out['fifo_no_group'] = error_of(sqs.send_message, QueueUrl=fifo, MessageBody='x')
    out['fifo_delay'] = error_of(sqs.send_message, QueueUrl=fifo, MessageBody='x', MessageGroupId='g', DelaySeconds=5)
    plain = sqs.create_queue(QueueName='feat2.fifo', Attributes={'FifoQueue': 'true'})['QueueUrl']
    out['fifo_no_dedup'] = error_of(sqs.send_message, QueueUrl=plain, MessageBody='x', MessageGroupId='g')
    out['std_dedup'] = error_of(sqs.send_message, QueueUrl=url, MessageBody='x', MessageDeduplicationId='d')
    out['fifo_attr_on_std'] = error_of(sqs.create_queue, QueueName='feat-notfifo', Attributes={'FifoQueue': 'true'})
    out['fifo_dlq_of_std'] = error_of(sqs.set_queue_attributes, QueueUrl=url, Attributes={'RedrivePolicy': json.dumps(
        {'deadLetterTargetArn': arn % 'feat2.fifo', 'maxReceiveCount': 1})})
    for queue in (url, src, dlq, fifo, plain):
        sqs.delete_queue(QueueUrl=queue)
    return out


main()
