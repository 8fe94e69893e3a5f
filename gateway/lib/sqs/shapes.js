'use strict';
/*-------------------------------------------------------------------------
 *
 * shapes.js
 *		What each SQS action takes and returns, as both protocols write it.
 *
 * A request's parameters and a result are the same nested value in both
 * protocols: the JSON protocol writes it as it is, the Query protocol
 * flattens it into names like MessageAttribute.1.Value.DataType and
 * answers in XML.  What turns one into the other is the shape of each
 * member, and the name it has on the Query wire and in the XML, which is
 * often not its own (Attributes travels as Attribute.N, Messages as
 * repeated <Message> elements).  Every list and map of SQS is "flattened":
 * its items are repeated under that wire name, with no wrapper around
 * them.  The names follow the SQS model (the Query-protocol model of
 * botocore and the current model's xmlName and xmlFlattened traits).
 *
 *-------------------------------------------------------------------------
 */

const STRING = Object.freeze({ kind: 'string' });
const INTEGER = Object.freeze({ kind: 'integer' });
// SQS's longs (counts of messages, times in milliseconds) stay well within
// the integers a JavaScript number holds exactly.
const LONG = INTEGER;
const BOOLEAN = Object.freeze({ kind: 'boolean' });
const BLOB = Object.freeze({ kind: 'blob' });

function listOf(member) {
  return Object.freeze({ kind: 'list', member });
}

// A map's entries carry their key and value under these element names.
function mapOf(keyName, valueName, value) {
  return Object.freeze({ kind: 'map', keyName, valueName, value });
}

// A member whose wire name differs from its own.
function wire(wireName, shape) {
  return { wireName, shape };
}

// members: { Name: shape, or wire('WireName', shape) }; required: the
// members the model requires, at any depth (a batch entry's Id)
function structure(members, required = []) {
  const normalized = {};
  for (const [name, member] of Object.entries(members)) {
    normalized[name] = Object.freeze(member.kind ? { wireName: name, shape: member } : member);
  }
  return Object.freeze({ kind: 'structure', members: Object.freeze(normalized), required: Object.freeze(required) });
}

const QUEUE_ATTRIBUTES = mapOf('Name', 'Value', STRING);
const TAGS = mapOf('Key', 'Value', STRING);

const ATTRIBUTE_VALUE = structure({
  StringValue: STRING,
  BinaryValue: BLOB,
  StringListValues: wire('StringListValue', listOf(STRING)),
  BinaryListValues: wire('BinaryListValue', listOf(BLOB)),
  DataType: STRING,
}, ['DataType']);
const MESSAGE_ATTRIBUTES = mapOf('Name', 'Value', ATTRIBUTE_VALUE);
// A received message's system attributes are plain strings.
const RECEIVED_SYSTEM_ATTRIBUTES = mapOf('Name', 'Value', STRING);

const BATCH_ERROR = structure({
  Id: STRING,
  SenderFault: BOOLEAN,
  Code: STRING,
  Message: STRING,
});

const MESSAGE = structure({
  MessageId: STRING,
  ReceiptHandle: STRING,
  MD5OfBody: STRING,
  Body: STRING,
  Attributes: wire('Attribute', RECEIVED_SYSTEM_ATTRIBUTES),
  MD5OfMessageAttributes: STRING,
  MessageAttributes: wire('MessageAttribute', MESSAGE_ATTRIBUTES),
});

// A message to send, as SendMessage and each entry of SendMessageBatch give it.
const MESSAGE_TO_SEND = {
  MessageBody: STRING,
  DelaySeconds: INTEGER,
  MessageAttributes: wire('MessageAttribute', MESSAGE_ATTRIBUTES),
  MessageSystemAttributes: wire('MessageSystemAttribute', MESSAGE_ATTRIBUTES),
  MessageDeduplicationId: STRING,
  MessageGroupId: STRING,
};

const SEND_MESSAGE_BATCH_ENTRY = structure({ Id: STRING, ...MESSAGE_TO_SEND }, ['Id', 'MessageBody']);

const SEND_MESSAGE_BATCH_RESULT_ENTRY = structure({
  Id: STRING,
  MessageId: STRING,
  MD5OfMessageBody: STRING,
  MD5OfMessageAttributes: STRING,
  MD5OfMessageSystemAttributes: STRING,
  SequenceNumber: STRING,
});

const BATCH_RESULT_ID = structure({ Id: STRING });

const MOVE_TASK = structure({
  TaskHandle: STRING,
  Status: STRING,
  SourceArn: STRING,
  DestinationArn: STRING,
  MaxNumberOfMessagesPerSecond: INTEGER,
  ApproximateNumberOfMessagesMoved: LONG,
  ApproximateNumberOfMessagesToMove: LONG,
  FailureReason: STRING,
  StartedTimestamp: LONG,
});

function batchResult(successWireName, successEntry) {
  return structure({
    Successful: wire(successWireName, listOf(successEntry)),
    Failed: wire('BatchResultErrorEntry', listOf(BATCH_ERROR)),
  });
}

// action -> { input: structure, output: structure, or null for an action
// that answers with nothing but its request id }
const ACTIONS = Object.freeze({
  CreateQueue: {
    input: structure({
      QueueName: STRING,
      Attributes: wire('Attribute', QUEUE_ATTRIBUTES),
      // Lowercase in SQS's model, in both protocols.
      tags: wire('Tag', TAGS),
    }, ['QueueName']),
    output: structure({ QueueUrl: STRING }),
  },
  DeleteQueue: {
    input: structure({ QueueUrl: STRING }, ['QueueUrl']),
    output: null,
  },
  GetQueueUrl: {
    input: structure({ QueueName: STRING, QueueOwnerAWSAccountId: STRING }, ['QueueName']),
    output: structure({ QueueUrl: STRING }),
  },
  ListQueues: {
    input: structure({ QueueNamePrefix: STRING, NextToken: STRING, MaxResults: INTEGER }),
    output: structure({ QueueUrls: wire('QueueUrl', listOf(STRING)), NextToken: STRING }),
  },
  GetQueueAttributes: {
    input: structure({
      QueueUrl: STRING,
      AttributeNames: wire('AttributeName', listOf(STRING)),
    }, ['QueueUrl']),
    output: structure({ Attributes: wire('Attribute', QUEUE_ATTRIBUTES) }),
  },
  SetQueueAttributes: {
    input: structure({
      QueueUrl: STRING,
      Attributes: wire('Attribute', QUEUE_ATTRIBUTES),
    }, ['QueueUrl', 'Attributes']),
    output: null,
  },
  TagQueue: {
    input: structure({ QueueUrl: STRING, Tags: wire('Tag', TAGS) }, ['QueueUrl', 'Tags']),
    output: null,
  },
  UntagQueue: {
    input: structure({ QueueUrl: STRING, TagKeys: wire('TagKey', listOf(STRING)) }, ['QueueUrl', 'TagKeys']),
    output: null,
  },
  ListQueueTags: {
    input: structure({ QueueUrl: STRING }, ['QueueUrl']),
    output: structure({ Tags: wire('Tag', TAGS) }),
  },
  PurgeQueue: {
    input: structure({ QueueUrl: STRING }, ['QueueUrl']),
    output: null,
  },
  SendMessage: {
    input: structure({ QueueUrl: STRING, ...MESSAGE_TO_SEND }, ['QueueUrl', 'MessageBody']),
    output: structure({
      MD5OfMessageBody: STRING,
      MD5OfMessageAttributes: STRING,
      MD5OfMessageSystemAttributes: STRING,
      MessageId: STRING,
      SequenceNumber: STRING,
    }),
  },
  SendMessageBatch: {
    input: structure({
      QueueUrl: STRING,
      Entries: wire('SendMessageBatchRequestEntry', listOf(SEND_MESSAGE_BATCH_ENTRY)),
    }, ['QueueUrl', 'Entries']),
    output: batchResult('SendMessageBatchResultEntry', SEND_MESSAGE_BATCH_RESULT_ENTRY),
  },
  ReceiveMessage: {
    input: structure({
      QueueUrl: STRING,
      AttributeNames: wire('AttributeName', listOf(STRING)),
      // The current model gives this one the wire name AttributeName as
      // well; no Query client sends it, and sharing the name would make
      // every AttributeName.N both.
      MessageSystemAttributeNames: wire('MessageSystemAttributeName', listOf(STRING)),
      MessageAttributeNames: wire('MessageAttributeName', listOf(STRING)),
      MaxNumberOfMessages: INTEGER,
      VisibilityTimeout: INTEGER,
      WaitTimeSeconds: INTEGER,
      ReceiveRequestAttemptId: STRING,
    }, ['QueueUrl']),
    output: structure({ Messages: wire('Message', listOf(MESSAGE)) }),
  },
  DeleteMessage: {
    input: structure({ QueueUrl: STRING, ReceiptHandle: STRING }, ['QueueUrl', 'ReceiptHandle']),
    output: null,
  },
  DeleteMessageBatch: {
    input: structure({
      QueueUrl: STRING,
      Entries: wire('DeleteMessageBatchRequestEntry', listOf(structure({ Id: STRING, ReceiptHandle: STRING }, ['Id', 'ReceiptHandle']))),
    }, ['QueueUrl', 'Entries']),
    output: batchResult('DeleteMessageBatchResultEntry', BATCH_RESULT_ID),
  },
  ChangeMessageVisibility: {
    input: structure({
      QueueUrl: STRING,
      ReceiptHandle: STRING,
      VisibilityTimeout: INTEGER,
    }, ['QueueUrl', 'ReceiptHandle', 'VisibilityTimeout']),
    output: null,
  },
  ChangeMessageVisibilityBatch: {
    input: structure({
      QueueUrl: STRING,
      Entries: wire('ChangeMessageVisibilityBatchRequestEntry', listOf(structure({
        Id: STRING,
        ReceiptHandle: STRING,
        VisibilityTimeout: INTEGER,
      }, ['Id', 'ReceiptHandle']))),
    }, ['QueueUrl', 'Entries']),
    output: batchResult('ChangeMessageVisibilityBatchResultEntry', BATCH_RESULT_ID),
  },
  ListDeadLetterSourceQueues: {
    input: structure({ QueueUrl: STRING, NextToken: STRING, MaxResults: INTEGER }, ['QueueUrl']),
    // Lowercase in SQS's model, in both protocols.
    output: structure({ queueUrls: wire('QueueUrl', listOf(STRING)), NextToken: STRING }),
  },
  StartMessageMoveTask: {
    input: structure({
      SourceArn: STRING,
      DestinationArn: STRING,
      MaxNumberOfMessagesPerSecond: INTEGER,
    }, ['SourceArn']),
    output: structure({ TaskHandle: STRING }),
  },
  ListMessageMoveTasks: {
    input: structure({ SourceArn: STRING, MaxResults: INTEGER }, ['SourceArn']),
    output: structure({ Results: wire('ListMessageMoveTasksResultEntry', listOf(MOVE_TASK)) }),
  },
  CancelMessageMoveTask: {
    input: structure({ TaskHandle: STRING }, ['TaskHandle']),
    output: structure({ ApproximateNumberOfMessagesMoved: LONG }),
  },
});

function actionShapes(action) {
  return Object.prototype.hasOwnProperty.call(ACTIONS, action) ? ACTIONS[action] : undefined;
}

module.exports = { ACTIONS, actionShapes };
