#!/usr/bin/env python3
# ---------------------------------------------------------------------------
#
# boto3_calls.py
#     Calls SQS actions with boto3 against the gateway's test server and
#     prints what boto3 made of each answer.
#
# boto3 from Debian 12 speaks the Query protocol, as AWS SDKs did before
# SQS took JSON: the test (protocol.test.js) checks that the gateway reads
# its requests and that boto3 reads the gateway's XML.  The calls come as
# JSON on standard input:
#
#   {"endpoint": "http://127.0.0.1:PORT",
#    "calls": [{"action": "SendMessage", "params": {...}}, ...]}
#
# params are boto3's keyword arguments (the JSON protocol's member names),
# a binary value written {"$base64": "..."}.  One JSON line is printed per
# call: {"ok": true, "response": {...}} with boto3's parsed response (less
# its ResponseMetadata, binary values written the same way), or
# {"ok": false, "code", "type", "message", "status"} for a ClientError.
#
# Debian's botocore predates the message move tasks: their three actions
# are added to a copy of the SQS model it loads, written to a temporary
# folder its loader reads first, in the Query form the current model gives
# them (result element names from its xmlName traits).
#
# Run with python3 -I, so that nothing but Debian's packages is imported.
#
# ---------------------------------------------------------------------------

import base64
import json
import os
import sys
import tempfile

import boto3
import botocore
import botocore.loaders
import botocore.session
from botocore.config import Config
from botocore.exceptions import ClientError

OPERATION_HTTP = {"method": "POST", "requestUri": "/"}

MOVE_TASK_OPERATIONS = {
    "StartMessageMoveTask": {
        "name": "StartMessageMoveTask",
        "http": OPERATION_HTTP,
        "input": {"shape": "StartMessageMoveTaskRequest"},
        "output": {"shape": "StartMessageMoveTaskResult", "resultWrapper": "StartMessageMoveTaskResult"},
    },
    "CancelMessageMoveTask": {
        "name": "CancelMessageMoveTask",
        "http": OPERATION_HTTP,
        "input": {"shape": "CancelMessageMoveTaskRequest"},
        "output": {"shape": "CancelMessageMoveTaskResult", "resultWrapper": "CancelMessageMoveTaskResult"},
    },
    "ListMessageMoveTasks": {
        "name": "ListMessageMoveTasks",
        "http": OPERATION_HTTP,
        "input": {"shape": "ListMessageMoveTasksRequest"},
        "output": {"shape": "ListMessageMoveTasksResult", "resultWrapper": "ListMessageMoveTasksResult"},
    },
}


def structure(members, required=()):
    return {
        "type": "structure",
        "required": list(required),
        "members": {name: {"shape": shape} for name, shape in members.items()},
    }


MOVE_TASK_SHAPES = {
    "MoveTaskInteger": {"type": "integer"},
    "MoveTaskLong": {"type": "long"},
    "StartMessageMoveTaskRequest": structure(
        {"SourceArn": "String", "DestinationArn": "String", "MaxNumberOfMessagesPerSecond": "MoveTaskInteger"},
        ["SourceArn"],
    ),
    "StartMessageMoveTaskResult": structure({"TaskHandle": "String"}),
    "CancelMessageMoveTaskRequest": structure({"TaskHandle": "String"}, ["TaskHandle"]),
    "CancelMessageMoveTaskResult": structure({"ApproximateNumberOfMessagesMoved": "MoveTaskLong"}),
    "ListMessageMoveTasksRequest": structure({"SourceArn": "String", "MaxResults": "MoveTaskInteger"}, ["SourceArn"]),
    "ListMessageMoveTasksResult": structure({"Results": "ListMessageMoveTasksResultEntryList"}),
    "ListMessageMoveTasksResultEntryList": {
        "type": "list",
        "member": {"shape": "ListMessageMoveTasksResultEntry", "locationName": "ListMessageMoveTasksResultEntry"},
        "flattened": True,
    },
    "ListMessageMoveTasksResultEntry": structure({
        "TaskHandle": "String",
        "Status": "String",
        "SourceArn": "String",
        "DestinationArn": "String",
        "MaxNumberOfMessagesPerSecond": "MoveTaskInteger",
        "ApproximateNumberOfMessagesMoved": "MoveTaskLong",
        "ApproximateNumberOfMessagesToMove": "MoveTaskLong",
        "FailureReason": "String",
        "StartedTimestamp": "MoveTaskLong",
    }),
}


def add_move_tasks(service_data):
    for name, operation in MOVE_TASK_OPERATIONS.items():
        service_data["operations"].setdefault(name, operation)
    for name, shape in MOVE_TASK_SHAPES.items():
        service_data["shapes"].setdefault(name, shape)


# botocore's loader looks in the folders of its data_path first: the SQS
# model with the move tasks is written there, the rest comes from Debian's.
def write_model_with_move_tasks(folder):
    model = botocore.loaders.create_loader().load_service_model("sqs", "service-2")
    add_move_tasks(model)
    version_folder = os.path.join(folder, "sqs", model["metadata"]["apiVersion"])
    os.makedirs(version_folder)
    with open(os.path.join(version_folder, "service-2.json"), "w", encoding="utf-8") as output:
        json.dump(model, output)


def from_plan(value):
    if isinstance(value, dict):
        if set(value) == {"$base64"}:
            return base64.b64decode(value["$base64"])
        return {key: from_plan(item) for key, item in value.items()}
    if isinstance(value, list):
        return [from_plan(item) for item in value]
    return value


def to_plan(value):
    if isinstance(value, (bytes, bytearray)):
        return {"$base64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        return {key: to_plan(item) for key, item in value.items()}
    if isinstance(value, list):
        return [to_plan(item) for item in value]
    return value


def sqs_client(endpoint, model_folder):
    write_model_with_move_tasks(model_folder)
    core = botocore.session.get_session()
    core.set_config_variable("data_path", model_folder)
    session = boto3.session.Session(
        botocore_session=core,
        aws_access_key_id="AKIDGATEWAYTEST",
        aws_secret_access_key="gateway-test-secret",
        region_name="us-east-1",
    )
    # One attempt: a retried request would take the next planned answer.
    config = Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=30)
    return session.client("sqs", endpoint_url=endpoint, config=config)


def call(client, action, params):
    method = getattr(client, botocore.xform_name(action))
    try:
        response = method(**from_plan(params))
    except ClientError as error:
        details = error.response.get("Error", {})
        return {
            "ok": False,
            "code": details.get("Code"),
            "type": details.get("Type"),
            "message": details.get("Message"),
            "status": error.response.get("ResponseMetadata", {}).get("HTTPStatusCode"),
        }
    response.pop("ResponseMetadata", None)
    return {"ok": True, "response": to_plan(response)}


def main():
    plan = json.load(sys.stdin)
    with tempfile.TemporaryDirectory() as model_folder:
        client = sqs_client(plan["endpoint"], model_folder)
        print(json.dumps({"versions": {"boto3": boto3.__version__, "botocore": botocore.__version__,
                                        "protocol": client.meta.service_model.protocol}}), flush=True)
        for planned in plan["calls"]:
            print(json.dumps(call(client, planned["action"], planned["params"])), flush=True)


if __name__ == "__main__":
    main()
