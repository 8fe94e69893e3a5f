"""boto3 against the gateway: the calls test/gateway/gateway.test.js makes
through Debian's boto3 (Query protocol).  Reads the endpoint, keys and
queue name from its arguments; prints one JSON object of what boto3 gave
back, or of the error it raised."""
import json
import sys

import boto3
from botocore.exceptions import ClientError


def main():
    endpoint, key, secret, queue = sys.argv[1:5]
    sqs = boto3.client('sqs', endpoint_url=endpoint, region_name='us-east-1',
                       aws_access_key_id=key, aws_secret_access_key=secret)
    out = {'protocol': sqs.meta.service_model.protocol}
    url = sqs.create_queue(QueueName=queue, Attributes={'VisibilityTimeout': '30'})['QueueUrl']
    out['url'] = url
    out['same_url'] = sqs.get_queue_url(QueueName=queue)['QueueUrl']
    sent = sqs.send_message(QueueUrl=url, MessageBody='hello\r\nworld \U0001F600',
                            MessageAttributes={'kind': {'DataType': 'String', 'StringValue': 'greeting'},
                                               'n': {'DataType': 'Number', 'StringValue': '42'},
                                               'raw': {'DataType': 'Binary', 'BinaryValue': b'\x00\x01\xff'}})
    out['sent_md5'] = sent['MD5OfMessageBody']
    batch = sqs.send_message_batch(QueueUrl=url, Entries=[
        {'Id': 'a', 'MessageBody': 'one'}, {'Id': 'b', 'MessageBody': 'two'}])
    out['batch_ok'] = sorted(e['Id'] for e in batch.get('Successful', []))
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=['All'],
                              AttributeNames=['All'], WaitTimeSeconds=1)
    messages = got.get('Messages', [])
    out['bodies'] = sorted(m['Body'] for m in messages)
    first = [m for m in messages if m['Body'].startswith('hello')][0]
    out['attributes'] = {k: v.get('StringValue', v.get('BinaryValue', b'').hex())
                         for k, v in first['MessageAttributes'].items()}
    out['receive_count'] = first['Attributes']['ApproximateReceiveCount']
    out['deleted'] = sqs.delete_message_batch(QueueUrl=url, Entries=[
        {'Id': 'm%d' % i, 'ReceiptHandle': m['ReceiptHandle']} for i, m in enumerate(messages)])['Successful']
    out['deleted'] = len(out['deleted'])
    out['left'] = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=['All'])['Attributes']
    try:
        sqs.delete_message(QueueUrl=url, ReceiptHandle='forged' * 10)
    except ClientError as err:
        out['forged'] = [err.response['Error']['Code'], err.response['ResponseMetadata']['HTTPStatusCode']]
    try:
        sqs.get_queue_url(QueueName='no-such-queue')
    except ClientError as err:
        out['missing'] = [err.response['Error']['Code'], err.response['ResponseMetadata']['HTTPStatusCode']]
    out['listed'] = sqs.list_queues(QueueNamePrefix=queue[:5]).get('QueueUrls', [])
    # a dead-letter queue by RedrivePolicy, and attributes changed
    source = sqs.create_queue(QueueName=queue + '-src')['QueueUrl']
    sqs.create_queue(QueueName=queue + '-src-dlq')
    dlq_arn = 'arn:aws:sqs:us-east-1:000000000000:%s-src-dlq' % queue
    sqs.set_queue_attributes(QueueUrl=source, Attributes={
        'VisibilityTimeout': '45',
        'RedrivePolicy': json.dumps({'deadLetterTargetArn': dlq_arn, 'maxReceiveCount': 3})})
    attributes = sqs.get_queue_attributes(QueueUrl=source, AttributeNames=['VisibilityTimeout', 'RedrivePolicy'])['Attributes']
    out['set_visibility'] = attributes['VisibilityTimeout']
    out['redrive'] = json.loads(attributes['RedrivePolicy'])
    dlq = sqs.get_queue_url(QueueName=queue + '-src-dlq')['QueueUrl']
    out['dlq_sources'] = sqs.list_dead_letter_source_queues(QueueUrl=dlq)['queueUrls']
    out['source_url'] = source
    try:
        sqs.set_queue_attributes(QueueUrl=source, Attributes={'RedrivePolicy': json.dumps(
            {'deadLetterTargetArn': 'arn:aws:sqs:us-east-1:000000000000:elsewhere', 'maxReceiveCount': 3})})
    except ClientError as err:
        out['other_dlq'] = [err.response['Error']['Code'], err.response['ResponseMetadata']['HTTPStatusCode']]
    sqs.delete_queue(QueueUrl=source)
    sqs.delete_queue(QueueUrl=dlq)
    sqs.delete_queue(QueueUrl=url)
    bad = boto3.client('sqs', endpoint_url=endpoint, region_name='us-east-1',
                       aws_access_key_id=key, aws_secret_access_key=secret + 'x')
    try:
        bad.list_queues()
    except ClientError as err:
        out['bad_secret'] = [err.response['Error']['Code'], err.response['ResponseMetadata']['HTTPStatusCode']]
    print(json.dumps(out))


main()
