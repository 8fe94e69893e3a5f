"""Requests signed by botocore, for test/gateway/sigv4.test.js.

Signs a set of SQS requests with botocore's Signature Version 4 signers at a
fixed time: its own (SigV4Auth, SigV4QueryAuth), the AWS CRT's that it uses
instead when awscrt is installed (as Debian's awscli installs it), and the
boto3 SQS client, whichever of the two it picks. Prints them as JSON: the
credentials and time used, and each request as it goes on the wire
(method, request target, headers in order, body in base64).
Needs Debian's python3-boto3 (apt-get install python3-boto3).
Usage: /usr/bin/python3 -I test/gateway/sign_with_botocore.py
"""
import base64
import datetime
import hashlib
import json
import sys
import types
from urllib.parse import quote, urlencode, urlsplit

try:
    import boto3
    import botocore
    import botocore.auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
except ImportError as err:
    sys.exit(f"sign_with_botocore.py: botocore is missing ({err}): apt-get install -y python3-boto3")

ACCESS_KEY_ID = 'AKIDEXAMPLEGATEWAY01'
SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYgatewayKEY'
SESSION_TOKEN = 'FwoGZXIvYXdzEXAMPLEsessionTOKEN//+=='
REGION = 'eu-west-3'
ENDPOINT = 'http://127.0.0.1:9324'
QUEUE_PATH = '/123456789012/my-queue'
# Late on a leap day: the day of the scope is the day of the signature.
SIGNED_AT = datetime.datetime(2024, 2, 29, 23, 55, 7)


class FixedClock(datetime.datetime):
    """Older signers read the signing time from datetime.datetime.utcnow."""

    @classmethod
    def utcnow(cls):
        return cls(*SIGNED_AT.timetuple()[:6])


def fixed_current_datetime(remove_tzinfo=True):
    """Newer signers read it from botocore.compat.get_current_datetime."""
    if remove_tzinfo:
        return SIGNED_AT
    return SIGNED_AT.replace(tzinfo=datetime.timezone.utc)


FIXED_DATETIME_MODULE = types.SimpleNamespace(datetime=FixedClock, timezone=datetime.timezone)
botocore.auth.datetime = FIXED_DATETIME_MODULE
if hasattr(botocore.auth, 'get_current_datetime'):
    botocore.auth.get_current_datetime = fixed_current_datetime
try:
    import botocore.crt.auth
    botocore.crt.auth.datetime = FIXED_DATETIME_MODULE
    if hasattr(botocore.crt.auth, 'get_current_datetime'):
        botocore.crt.auth.get_current_datetime = fixed_current_datetime
    CRT_SIGNERS = (botocore.crt.auth.CrtSigV4Auth, botocore.crt.auth.CrtSigV4QueryAuth)
except ImportError:
    CRT_SIGNERS = None


def credentials(token=None):
    return Credentials(ACCESS_KEY_ID, SECRET, token)


def wire(name, request):
    """The request as an HTTP client sends it after botocore signed it."""
    prepared = request.prepare()
    parts = urlsplit(prepared.url)
    target = parts.path or '/'
    if parts.query:
        target += '?' + parts.query
    body = prepared.body or b''
    if isinstance(body, str):
        body = body.encode('utf-8')
    # the original headers keep a repeated header's every value
    headers = list(request.headers.items())
    names = {key.lower() for key, _ in headers}
    if 'host' not in names:
        headers.insert(0, ('Host', parts.netloc))
    if 'content-length' not in names and (body or prepared.method not in ('GET', 'HEAD')):
        headers.append(('Content-Length', str(len(body))))
    return {
        'name': name,
        'method': prepared.method,
        'url': target,
        'headers': [[key, value] for key, value in headers],
        'body': base64.b64encode(body).decode('ascii'),
    }


def signed(name, method, url, data=None, headers=None, params=None, token=None, context=None,
           signer=botocore.auth.SigV4Auth):
    request = AWSRequest(method=method, url=url, data=data, headers=headers or {}, params=params or {})
    request.context.update(context or {})
    signer(credentials(token), 'sqs', REGION).add_auth(request)
    return wire(name, request)


def presigned(name, url, params, expires, token=None, signer=botocore.auth.SigV4QueryAuth):
    request = AWSRequest(method='GET', url=url, params=params)
    signer(credentials(token), 'sqs', REGION, expires=expires).add_auth(request)
    return wire(name, request)


class Captured(Exception):
    pass


def from_boto3_client(name, call):
    """A request the boto3 SQS client itself builds and signs, caught just
    before it is sent."""
    session = boto3.session.Session(aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=SECRET,
                                    region_name=REGION)
    client = session.client('sqs', endpoint_url=ENDPOINT)
    caught = {}

    def before_send(request, **kwargs):
        caught['request'] = request
        raise Captured()

    client.meta.events.register('before-send.sqs', before_send)
    try:
        call(client)
    except Captured:
        pass
    request = caught['request']
    parts = urlsplit(request.url)
    body = request.body or b''
    if isinstance(body, str):
        body = body.encode('utf-8')
    headers = [(key, value.decode('latin1') if isinstance(value, bytes) else value)
               for key, value in request.headers.items()]
    if 'host' not in {key.lower() for key, _ in headers}:
        headers.insert(0, ('Host', parts.netloc))
    target = (parts.path or '/') + ('?' + parts.query if parts.query else '')
    return {'name': name, 'method': request.method, 'url': target,
            'headers': [[key, value] for key, value in headers],
            'body': base64.b64encode(body).decode('ascii')}


def presigned_by_boto3_client(name, operation, params, expires, method=None):
    """A presigned URL from the boto3 SQS client. Unless told otherwise it
    signs it for the operation's own method, POST for SQS's Query protocol:
    the URL is to be POSTed, with an empty body."""
    session = boto3.session.Session(aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=SECRET,
                                    region_name=REGION)
    client = session.client('sqs', endpoint_url=ENDPOINT)
    url = client.generate_presigned_url(operation, Params=params, ExpiresIn=expires, HttpMethod=method)
    parts = urlsplit(url)
    headers = [['Host', parts.netloc]]
    if method != 'GET':
        headers.append(['Content-Length', '0'])
    return {'name': name, 'method': method or 'POST', 'url': parts.path + '?' + parts.query,
            'headers': headers, 'body': ''}


QUEUE_URL = ENDPOINT + QUEUE_PATH
MESSAGE = 'héllo wörld ✓ & a+b=c %20 ~tilde\n\ttab'

query_body = urlencode([
    ('Action', 'SendMessage'),
    ('Version', '2012-11-05'),
    ('QueueUrl', QUEUE_URL),
    ('MessageBody', MESSAGE),
    ('DelaySeconds', '0'),
]).encode('utf-8')

json_body = json.dumps({'QueueUrl': QUEUE_URL, 'MessageBody': MESSAGE}, ensure_ascii=False).encode('utf-8')
json_headers = {
    'Content-Type': 'application/x-amz-json-1.0',
    'X-Amz-Target': 'AmazonSQS.SendMessage',
    'X-Amz-Meta-Spaces': '  several   inner   spaces  ',
}

encoded_params = [
    ('Action', 'ListQueues'),
    ('QueueNamePrefix', 'a b+c%d~e/f'),
    ('Unicode', 'é✓中'),
    ('Repeated', 'two'),
    ('Repeated', 'one'),
    ('Repeated', 'One'),
    ('Empty', ''),
    ('Equals&Amp', 'x=y&z'),
    ('~tilde.dot-dash_under', '*()!\''),
]

special_path = QUEUE_PATH + "/a%20b/./c//d/../e:f@g!$&'()*+,;=~h%2Fi%C3%A9j"

repeated_header = AWSRequest(method='POST', url=QUEUE_URL, data=json_body,
                             headers={'Content-Type': 'application/x-amz-json-1.0',
                                      'X-Amz-Target': 'AmazonSQS.SendMessage'})
repeated_header.headers['X-Amz-Meta-Repeated'] = 'first'
repeated_header.headers['X-Amz-Meta-Repeated'] = ' second  value '
# not what an HTTP client of botocore's sends (http.client writes latin1),
# but bytes beyond ASCII are what node:http hands over as latin1
repeated_header.headers['X-Amz-Meta-Unicode'] = 'ünï ✓'
botocore.auth.SigV4Auth(credentials(), 'sqs', REGION).add_auth(repeated_header)

requests = [
    signed('query protocol POST', 'POST', ENDPOINT + '/', data=query_body,
           headers={'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8'}),
    signed('JSON protocol POST', 'POST', ENDPOINT + '/', data=json_body, headers=json_headers),
    signed('GET with a query string to encode', 'GET', QUEUE_URL, params=encoded_params),
    signed('path with special characters', 'POST', ENDPOINT + special_path, data=json_body,
           headers={'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'AmazonSQS.GetQueueUrl'}),
    signed('session token', 'POST', ENDPOINT + '/', data=json_body, headers=json_headers, token=SESSION_TOKEN),
    signed('Date header instead of X-Amz-Date', 'POST', ENDPOINT + '/', data=json_body,
           headers={'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'AmazonSQS.SendMessage',
                    'Date': 'Thu, 01 Jan 1970 00:00:00 GMT'}),
    signed('x-amz-content-sha256 of the body', 'POST', ENDPOINT + '/', data=json_body,
           headers={'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'AmazonSQS.SendMessage',
                    'X-Amz-Content-SHA256': hashlib.sha256(json_body).hexdigest()}),
    signed('UNSIGNED-PAYLOAD', 'POST', 'https://127.0.0.1:9324/', data=json_body,
           headers={'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'AmazonSQS.SendMessage'},
           context={'payload_signing_enabled': False}),
    wire('repeated header', repeated_header),
    presigned('presigned URL', QUEUE_URL, [('Action', 'ReceiveMessage'), ('MaxNumberOfMessages', '10'),
                                           ('AttributeName.1', 'All')], expires=300),
    presigned('presigned URL with a session token', QUEUE_URL, [('Action', 'GetQueueAttributes')],
              expires=3600, token=SESSION_TOKEN),
    from_boto3_client('boto3 client SendMessage', lambda client: client.send_message(
        QueueUrl=QUEUE_URL, MessageBody=MESSAGE,
        MessageAttributes={'kind': {'DataType': 'String', 'StringValue': 'ünï'}})),
]
# A client of the Query protocol (Debian 12's) presigns a usable URL; one of
# the JSON protocol (newer ones) signs its content type and target in, and
# its parameters belong in a body: no URL to use alone.
if boto3.session.Session(region_name=REGION).client(
        'sqs', endpoint_url=ENDPOINT, aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET).meta.service_model.protocol == 'query':
    requests += [
        presigned_by_boto3_client('boto3 client presigned ReceiveMessage', 'receive_message',
                                  {'QueueUrl': QUEUE_URL, 'WaitTimeSeconds': 5}, 900),
        presigned_by_boto3_client('boto3 client presigned GetQueueAttributes for GET', 'get_queue_attributes',
                                  {'QueueUrl': QUEUE_URL, 'AttributeNames': ['All']}, 60, method='GET'),
    ]
if CRT_SIGNERS:
    crt_auth, crt_query_auth = CRT_SIGNERS
    requests += [
        signed('AWS CRT: JSON protocol POST', 'POST', ENDPOINT + '/', data=json_body, headers=json_headers,
               signer=crt_auth),
        # The CRT signer takes parameters as a dict, so repeated ones go in the
        # URL, encoded as the SDKs send them: a space as %20. (A bare + it
        # signs as a plus; the verifier reads it as a space, as forms do.)
        signed('AWS CRT: GET with a query string to encode', 'GET',
               QUEUE_URL + '?' + urlencode(encoded_params, quote_via=quote), signer=crt_auth),
        signed('AWS CRT: path with special characters', 'POST', ENDPOINT + special_path, data=json_body,
               headers={'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'AmazonSQS.GetQueueUrl'},
               signer=crt_auth),
        signed('AWS CRT: session token', 'POST', ENDPOINT + '/', data=query_body, token=SESSION_TOKEN,
               headers={'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8'}, signer=crt_auth),
        presigned('AWS CRT: presigned URL', QUEUE_URL, [('Action', 'ReceiveMessage'), ('VisibilityTimeout', '30')],
                  expires=600, token=SESSION_TOKEN, signer=crt_query_auth),
    ]

print(json.dumps({
    'botocore': botocore.__version__,
    'crt': CRT_SIGNERS is not None,
    'accessKeyId': ACCESS_KEY_ID,
    'secret': SECRET,
    'region': REGION,
    'signedAt': SIGNED_AT.strftime('%Y-%m-%dT%H:%M:%SZ'),
    'requests': requests,
}, ensure_ascii=False, indent=1))
