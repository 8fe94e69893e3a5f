"""The Azure SDK for Python (Debian's python3-azure-storage) against the
gateway's Azure side: the calls test/gateway/azure.test.js makes through
azure.storage.queue, connected by a connection string.  Reads the
connection string and a wrong account key from its arguments; prints one
JSON object of what the SDK gave back, and of the errors it raised (their
code and status)."""
import base64
import datetime
import json
import sys
import time

from azure.core.exceptions import HttpResponseError
from azure.storage.queue import (AccountSasPermissions, QueueClient, QueueServiceClient, ResourceTypes,
                                 TextBase64DecodePolicy, TextBase64EncodePolicy, generate_account_sas)


def error_of(call):
    """[error code, HTTP status] of what call raises; None if it raises nothing."""
    try:
        call()
    except HttpResponseError as err:
        return [err.error_code, err.status_code]
    return None


def main():
    connection, wrong_key = sys.argv[1:3]
    out = {}
    service = QueueServiceClient.from_connection_string(connection)
    queue = service.create_queue('py-orders', metadata={'Kind': 'python'})
    out['exists_twice'] = error_of(lambda: service.create_queue('py-orders', metadata={'kind': 'other'}))
    properties = queue.get_queue_properties()
    out['metadata'] = properties.metadata
    queue.set_queue_metadata({'a_1': 'x', 'a1': 'y', 'a_b': 'z', 'ab': 'w'})
    out['metadata_tricky'] = queue.get_queue_properties().metadata
    queue.set_queue_metadata({'Stage': 'test', 'n': '1'})
    out['metadata_set'] = queue.get_queue_properties().metadata

    # text as it is: XML escapes, line ends
    sent = queue.send_message('hello\r\nworld <&> "q" \u00e9\U0001F600')
    out['sent_id'] = sent.id
    out['sent_expiry_days'] = round((sent.expires_on - sent.inserted_on).total_seconds() / 86400)
    forever = queue.send_message('forever', time_to_live=-1, visibility_timeout=1)
    out['forever_year'] = forever.expires_on.year
    out['count'] = queue.get_queue_properties().approximate_message_count
    out['peeked'] = [[m.content, m.dequeue_count] for m in queue.peek_messages(max_messages=32)]
    time.sleep(1.1)
    got = list(queue.receive_messages(messages_per_page=32, visibility_timeout=30))
    out['received'] = [[m.content, m.dequeue_count] for m in got]
    first = got[0]
    out['received_year'] = [m.expires_on.year for m in got]
    out['nothing_left'] = len(list(queue.receive_messages()))
    updated = queue.update_message(first, visibility_timeout=0, content='updated')
    out['new_receipt'] = updated.pop_receipt != first.pop_receipt
    out['stale_receipt'] = error_of(lambda: queue.delete_message(first.id, first.pop_receipt))
    again = queue.receive_message()
    out['again'] = [again.content, again.dequeue_count]
    queue.delete_message(again)
    out['deleted_again'] = error_of(lambda: queue.delete_message(again))
    queue.delete_message(got[1])

    # the base64 encoding of the Azure Functions runtime
    functions = QueueClient.from_connection_string(
        connection, 'py-orders', message_encode_policy=TextBase64EncodePolicy(),
        message_decode_policy=TextBase64DecodePolicy())
    functions.send_message('{"order": 7, "note": "caf\u00e9"}')
    raw = queue.peek_messages()[0].content
    out['base64_raw'] = base64.b64decode(raw).decode('utf-8')
    out['base64_decoded'] = functions.receive_message().content
    queue.clear_messages()
    out['cleared_count'] = queue.get_queue_properties().approximate_message_count

    # list queues in pages of two, with metadata
    for name in ('py-list-1', 'py-list-2', 'py-list-3'):
        service.create_queue(name, metadata={'n': name[-1]})
    pages = service.list_queues(name_starts_with='py-list-', include_metadata=True, results_per_page=2).by_page()
    out['pages'] = [[[q.name, q.metadata['n']] for q in page] for page in pages]

    # errors
    missing = service.get_queue_client('py-missing')
    out['missing'] = error_of(missing.get_queue_properties)
    out['missing_send'] = error_of(lambda: missing.send_message('x'))
    out['bad_name'] = error_of(lambda: service.create_queue('Bad_Name'))
    out['too_large'] = error_of(lambda: queue.send_message('x' * 65537))
    out['unsupported'] = error_of(service.get_service_properties)
    wrong = QueueServiceClient.from_connection_string(connection.replace(connection.split('AccountKey=')[1].split(';')[0], wrong_key))
    out['wrong_key'] = error_of(lambda: wrong.get_queue_client('py-orders').get_queue_properties())
    service.delete_queue('py-orders')
    out['deleted_queue'] = error_of(queue.get_queue_properties)

    # an account SAS: add and process on messages, then read alone
    expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    token = generate_account_sas(service.account_name, service.credential.account_key,
                                 resource_types=ResourceTypes(object=True),
                                 permission=AccountSasPermissions(add=True, process=True), expiry=expiry)
    sas_queue = QueueServiceClient(service.url, credential=token).get_queue_client('py-list-1')
    sas_queue.send_message('by sas')
    message = sas_queue.receive_message()
    sas_queue.delete_message(message)
    out['sas_message'] = message.content
    out['sas_properties'] = error_of(sas_queue.get_queue_properties)
    read_token = generate_account_sas(service.account_name, service.credential.account_key,
                                      resource_types=ResourceTypes(object=True), permission=AccountSasPermissions(read=True),
                                      expiry=expiry)
    reader = QueueServiceClient(service.url, credential=read_token).get_queue_client('py-list-1')
    out['sas_read_peek'] = len(reader.peek_messages())
    out['sas_read_send'] = error_of(lambda: reader.send_message('x'))
    print(json.dumps(out))


if __name__ == '__main__':
    main()
