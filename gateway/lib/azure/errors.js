'use strict';
/*-------------------------------------------------------------------------
 *
 * errors.js
 *		The errors the Azure side of the gateway answers with, as Azure
 *		Queue Storage names them.
 *
 * One table holds every error code it may return, with its HTTP status
 * and the message Azure gives for it.  An error is written as Azure writes
 * one (render.js): the status, the code in the x-ms-error-code header, and
 * an XML body <Error><Code>..</Code><Message>..</Message></Error> that may
 * carry more elements (the query parameter at fault, say).
 *
 * Sources: the Azure Storage REST reference's "Common REST API error
 * codes" and "Queue Storage error codes" pages.
 *
 *-------------------------------------------------------------------------
 */

// code: [status, message]
const ERRORS = {
  // Queue Storage's own.
  QueueNotFound: [404, 'The specified queue does not exist.'],
  QueueAlreadyExists: [409, 'The specified queue already exists.'],
  MessageNotFound: [404, 'The specified message does not exist.'],
  PopReceiptMismatch: [400, 'The specified pop receipt did not match the pop receipt for a dequeued message.'],

  // Common to the storage services.
  AuthenticationFailed: [403, 'Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.'],
  AuthorizationPermissionMismatch: [403, 'This request is not authorized to perform this operation using this permission.'],
  AuthorizationServiceMismatch: [403, 'This request is not authorized to perform this operation using this service.'],
  AuthorizationResourceTypeMismatch: [403, 'This request is not authorized to perform this operation using this resource type.'],
  AuthorizationProtocolMismatch: [403, 'This request is not authorized to perform this operation using this protocol.'],
  AuthorizationSourceIPMismatch: [403, 'This request is not authorized to perform this operation using this source IP.'],
  InvalidQueryParameterValue: [400, 'Value for one of the query parameters specified in the request URI is invalid.'],
  OutOfRangeQueryParameterValue: [400, 'One of the query parameters specified in the request URI is outside the permissible range.'],
  MissingRequiredQueryParameter: [400, 'A required query parameter was not specified for this request.'],
  UnsupportedQueryParameter: [400, 'One of the query parameters specified in the request URI is not supported.'],
  MissingRequiredHeader: [400, 'An HTTP header that\'s mandatory for this request is not specified.'],
  InvalidHeaderValue: [400, 'The value for one of the HTTP headers is not in the correct format.'],
  InvalidResourceName: [400, 'The specifed resource name contains invalid characters.'],
  OutOfRangeInput: [400, 'One of the request inputs is out of range.'],
  InvalidInput: [400, 'One of the request inputs is not valid.'],
  InvalidMetadata: [400, 'The metadata specified is invalid. It has characters that are not permitted.'],
  EmptyMetadataKey: [400, 'The key for one of the metadata key-value pairs is empty.'],
  MetadataTooLarge: [400, 'The size of the specified metadata exceeds the maximum size permitted.'],
  InvalidXmlDocument: [400, 'XML specified is not syntactically valid.'],
  InvalidUri: [400, 'The requested URI does not represent any resource on the server.'],
  UnsupportedHttpVerb: [405, 'The resource doesn\'t support the specified HTTP verb.'],
  RequestBodyTooLarge: [413, 'The request body is too large and exceeds the maximum permissible limit.'],
  OperationTimedOut: [500, 'The operation could not be completed within the permitted time.'],
  InternalError: [500, 'The server encountered an internal error. Please retry the request.'],
  ServerBusy: [503, 'The server is currently unable to receive requests. Please retry your request.'],
};

class AzureError extends Error {
  // details: more elements of the XML body, { QueryParameterName: ... };
  // headers: more headers of the answer.  An unknown code is a mistake of
  // the gateway's own code: it throws at once.
  constructor(code, { message, details, headers } = {}) {
    const row = ERRORS[code];
    if (!row) throw new TypeError(`not an Azure error code of the gateway: ${code}`);
    super(message === undefined ? row[1] : message);
    this.name = 'AzureError';
    this.code = code;
    this.status = row[0];
    this.details = details || {};
    this.headers = headers || {};
  }
}

// A query parameter the request got wrong: its name and value go in the
// body, with more elements when given ({ Reason }, { MinimumAllowed, ... }).
function badParameter(code, name, value, more = {}) {
  return new AzureError(code, { details: { QueryParameterName: name, QueryParameterValue: value, ...more } });
}

module.exports = { AzureError, ERRORS, badParameter };
