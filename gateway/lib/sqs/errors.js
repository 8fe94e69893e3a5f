'use strict';
/*-------------------------------------------------------------------------
 *
 * errors.js
 *		The errors the gateway answers with, as Amazon SQS names them.
 *
 * One table holds every error code the gateway may return, with what
 * each protocol needs to write it: the HTTP status, whether the fault is
 * the sender's or the service's, the code of the Query protocol (the
 * <Code> of an ErrorResponse, and the first half of the JSON protocol's
 * x-amzn-query-error header) and the shape id of the JSON protocol's
 * "__type".  A code is the error's name as the JSON protocol's model has
 * it (QueueDoesNotExist) or, for the errors common to AWS services that
 * SQS does not model, its Query name (InvalidParameterValue).
 *
 * Sources: the SQS model's awsQueryError traits as the current AWS SDK
 * for JavaScript carries them (status and Query code of each modelled
 * error), the Query-protocol model of Debian's botocore (the same codes,
 * for the errors it knew), the API Reference's "Common Errors" page (status
 * of the common errors), and answers recorded from SQS itself (the JSON
 * names of InvalidParameterValue, MissingParameter and AccessDenied).
 *
 *-------------------------------------------------------------------------
 */

const SQS_NAMESPACE = 'com.amazonaws.sqs';
// Errors of the service framework rather than of SQS's model.
const CORAL_NAMESPACE = 'com.amazon.coral.service';

// code: [status, Query code, JSON name (when not the code), namespace, default message]
const SENDER_ERRORS = {
  // Modelled by SQS.
  QueueDoesNotExist: [400, 'AWS.SimpleQueueService.NonExistentQueue', null, SQS_NAMESPACE,
    'The specified queue does not exist.'],
  QueueNameExists: [400, 'QueueAlreadyExists', null, SQS_NAMESPACE,
    'A queue with this name already exists with different attributes.'],
  QueueDeletedRecently: [400, 'AWS.SimpleQueueService.QueueDeletedRecently', null, SQS_NAMESPACE,
    'You must wait 60 seconds after deleting a queue before you can create another queue with the same name.'],
  ReceiptHandleIsInvalid: [404, 'ReceiptHandleIsInvalid', null, SQS_NAMESPACE,
    'The specified receipt handle is not valid.'],
  MessageNotInflight: [400, 'AWS.SimpleQueueService.MessageNotInflight', null, SQS_NAMESPACE,
    'The specified message is not in flight.'],
  InvalidAttributeName: [400, 'InvalidAttributeName', null, SQS_NAMESPACE,
    'The specified attribute does not exist.'],
  InvalidAttributeValue: [400, 'InvalidAttributeValue', null, SQS_NAMESPACE,
    'A queue attribute value is not valid.'],
  InvalidMessageContents: [400, 'InvalidMessageContents', null, SQS_NAMESPACE,
    'The message contains characters outside the allowed set.'],
  InvalidIdFormat: [400, 'InvalidIdFormat', null, SQS_NAMESPACE,
    'The specified receipt handle is not in a valid format.'],
  BatchEntryIdsNotDistinct: [400, 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct', null, SQS_NAMESPACE,
    'Two or more batch entries in the request have the same Id.'],
  EmptyBatchRequest: [400, 'AWS.SimpleQueueService.EmptyBatchRequest', null, SQS_NAMESPACE,
    'The batch request does not contain any entries.'],
  TooManyEntriesInBatchRequest: [400, 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest', null, SQS_NAMESPACE,
    'The batch request contains more entries than permissible.'],
  InvalidBatchEntryId: [400, 'AWS.SimpleQueueService.InvalidBatchEntryId', null, SQS_NAMESPACE,
    'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.'],
  BatchRequestTooLong: [400, 'AWS.SimpleQueueService.BatchRequestTooLong', null, SQS_NAMESPACE,
    'The length of all the messages put together is more than the limit.'],
  UnsupportedOperation: [400, 'AWS.SimpleQueueService.UnsupportedOperation', null, SQS_NAMESPACE,
    'The operation is not supported.'],
  PurgeQueueInProgress: [403, 'AWS.SimpleQueueService.PurgeQueueInProgress', null, SQS_NAMESPACE,
    'Only one PurgeQueue operation on a queue is allowed every 60 seconds.'],
  OverLimit: [403, 'OverLimit', null, SQS_NAMESPACE,
    'The specified action violates a limit.'],
  RequestThrottled: [403, 'RequestThrottled', null, SQS_NAMESPACE,
    'The request was denied due to request throttling.'],
  ResourceNotFoundException: [404, 'ResourceNotFoundException', null, SQS_NAMESPACE,
    'The specified resource does not exist.'],
  InvalidAddress: [404, 'InvalidAddress', null, SQS_NAMESPACE,
    'The specified ID is not valid.'],
  InvalidSecurity: [403, 'InvalidSecurity', null, SQS_NAMESPACE,
    'The request was not made over HTTPS or did not use SigV4 for signing.'],

  // Common to AWS services; the JSON protocol renames some of them.
  InvalidParameterValue: [400, 'InvalidParameterValue', 'InvalidParameterValueException', CORAL_NAMESPACE,
    'An invalid or out-of-range value was supplied for the input parameter.'],
  MissingParameter: [400, 'MissingParameter', 'MissingRequiredParameterException', CORAL_NAMESPACE,
    'A required parameter for the specified action is not supplied.'],
  AccessDenied: [403, 'AccessDenied', 'AccessDeniedException', CORAL_NAMESPACE,
    'Access to the resource is denied.'],
  InvalidAction: [400, 'InvalidAction', null, CORAL_NAMESPACE,
    'The action or operation requested is invalid.'],
  MissingAction: [400, 'MissingAction', null, CORAL_NAMESPACE,
    'The request is missing an action or a required parameter.'],
  MalformedQueryString: [404, 'MalformedQueryString', null, CORAL_NAMESPACE,
    'The query string contains a syntax error.'],
  InvalidQueryParameter: [400, 'InvalidQueryParameter', null, CORAL_NAMESPACE,
    'The AWS query string is malformed or does not adhere to AWS standards.'],
  InvalidParameterCombination: [400, 'InvalidParameterCombination', null, CORAL_NAMESPACE,
    'Parameters that must not be used together were used together.'],
  InvalidClientTokenId: [403, 'InvalidClientTokenId', null, CORAL_NAMESPACE,
    'The security token included in the request is invalid.'],
  SignatureDoesNotMatch: [403, 'SignatureDoesNotMatch', null, CORAL_NAMESPACE,
    'The request signature we calculated does not match the signature you provided.'],
  IncompleteSignature: [400, 'IncompleteSignature', null, CORAL_NAMESPACE,
    'The request signature does not conform to AWS standards.'],
  MissingAuthenticationToken: [403, 'MissingAuthenticationToken', null, CORAL_NAMESPACE,
    'The request must contain a valid (registered) AWS access key ID.'],
  RequestExpired: [400, 'RequestExpired', null, CORAL_NAMESPACE,
    'The request reached the service more than 15 minutes after the date stamp on the request, or the date stamp is more than 15 minutes in the future.'],
  // Not SQS's: a request whose bytes did not all come within the
  // gateway's requestTimeout (HTTP's 408; SQS's front end just closes).
  RequestTimeout: [408, 'RequestTimeout', null, CORAL_NAMESPACE,
    'The request was not received within the time allowed; the connection is closed.'],

  // The JSON protocol's own: they come before an action is known, and
  // carry no x-amzn-query-error (so no Query code).
  UnknownOperationException: [400, null, null, CORAL_NAMESPACE,
    'The operation is not known.'],
  SerializationException: [400, null, null, CORAL_NAMESPACE,
    'The request body could not be read.'],
};

const RECEIVER_ERRORS = {
  InternalFailure: [500, 'InternalFailure', null, CORAL_NAMESPACE,
    'The request processing has failed because of an unknown error, exception or failure.'],
  ServiceUnavailable: [503, 'ServiceUnavailable', null, CORAL_NAMESPACE,
    'The request has failed due to a temporary failure of the server.'],
};

function describe(code, [status, queryCode, jsonName, namespace, message], fault) {
  return Object.freeze({
    code,
    status,
    fault,
    queryCode,
    jsonType: `${namespace}#${jsonName || code}`,
    message,
  });
}

function buildTable() {
  const table = {};
  for (const [code, row] of Object.entries(SENDER_ERRORS)) table[code] = describe(code, row, 'Sender');
  for (const [code, row] of Object.entries(RECEIVER_ERRORS)) table[code] = describe(code, row, 'Receiver');
  return Object.freeze(table);
}

// code -> { code, status, fault: 'Sender' | 'Receiver', queryCode (null
// for the JSON protocol's own), jsonType, message (the default) }
const ERRORS = buildTable();

class SqsError extends Error {
  // An unknown code is a mistake of the gateway's own code: it throws at
  // once rather than answering with a code no client knows.
  constructor(code, message) {
    const info = ERRORS[code];
    if (!info) throw new TypeError(`not an SQS error code of the gateway: ${code}`);
    super(message === undefined ? info.message : message);
    this.name = 'SqsError';
    this.code = code;
  }

  get status() {
    return ERRORS[this.code].status;
  }
}

function errorInfo(code) {
  return ERRORS[code];
}

module.exports = { SqsError, ERRORS, errorInfo };
