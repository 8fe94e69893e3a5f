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
# a binary value written {"$base64": "..."}, a value taken from an earlier
# call's response written {"$from": [call index, key or index, ...]}.  One
# JSON line is printed per call: {"ok": true, "response": {...}} with
# boto3's parsed response (less its ResponseMetadata, binary values
# written the same way), or {"ok": false, "code", "type", "message",
# "status"} for a ClientError.
#
# The end-to-end tests (errors.test.js) add to the plan: "key" and
# "secret" (the gateway's, instead of the stand-in's), "validate": false
# (botocore's own checks of the parameters off, so that a request missing
# one reaches the server), and to a call "key"/"secret" of its own,
# "skew_seconds" (the signing clock moved) and "tamper": "unsigned" (the
# Authorization header taken away) or "incomplete" (cut short), each done
# after botocore signed.
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
import datetime
import importlib
import json
import os
import sys
import tempfile
import types

import boto3
import botocore
import botocore.auth
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


def from_plan(value, answers=()):
    if isinstance(value, dict):
        if set(value) == {"$base64"}:
            return base64.b64decode(value["$base64"])
        if set(value) == {"$from"}:
            index, *path = value["$from"]
            found = answers[index]["response"]
            for step in path:
                found = found[step]
            return from_plan(found)
        return {key: from_plan(item, answers) for key, item in value.items()}
    if isinstance(value, list):
        return [from_plan(item, answers) for item in value]
    return value


def to_plan(value):
    if isinstance(value, (bytes, bytearray)):
        return {"$base64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        return {key: to_plan(item) for key, item in value.items()}
    if isinstance(value, list):
        return [to_plan(item) for item in value]
    return value


def sqs_client(endpoint, model_folder, key="AKIDGATEWAYTEST", secret="gateway-test-secret", validate=True):
    core = botocore.session.get_session()
    core.set_config_variable("data_path", model_folder)
    session = boto3.session.Session(
        botocore_session=core,
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        region_name="us-east-1",
    )
    # One attempt: a retried request would take the next planned answer.
    config = Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=30,
                    parameter_validation=validate)
    client = session.client("sqs", endpoint_url=endpoint, config=config)
    client.meta.events.register("before-send", tamper_with_request)
    return client


# What a call asks done to its signed request ("tamper"), and the clock
# it signs with ("skew_seconds").
CALL_OPTIONS = {"tamper": None, "skew_seconds": 0}


def tamper_with_request(request, **_):
    if CALL_OPTIONS["tamper"] == "unsigned":
        del request.headers["Authorization"]
    elif CALL_OPTIONS["tamper"] == "incomplete":
        value = request.headers["Authorization"]
        value = value.decode("ascii") if isinstance(value, bytes) else value
        request.headers["Authorization"] = value.split(",")[0]


# botocore reads the time through get_current_datetime (newer) or
# datetime.datetime.utcnow (Debian 12's), in its own signer and in the
# AWS CRT's where that is installed; skew_seconds moves them all.
def skew_signing_clock():
    skew = lambda: datetime.timedelta(seconds=CALL_OPTIONS["skew_seconds"])

    class SkewedDatetime(datetime.datetime):
        @classmethod
        def utcnow(cls):
            return datetime.datetime.utcnow() + skew()

    modules = [botocore.auth]
    try:
        modules.append(importlib.import_module("botocore.crt.auth"))
    except ImportError:
        pass
    for module in modules:
        if hasattr(module, "get_current_datetime"):
            current = module.get_current_datetime
            module.get_current_datetime = (
                lambda *args, current=current, **kwargs: current(*args, **kwargs) + skew())
        else:
            module.datetime = types.SimpleNamespace(datetime=SkewedDatetime, timezone=datetime.timezone,
                                                    timedelta=datetime.timedelta)


def call(client, action, params, answers=()):
    method = getattr(client, botocore.xform_name(action))
    try:
        response = method(**from_plan(params, answers))
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
    skew_signing_clock()
    with tempfile.TemporaryDirectory() as model_folder:
        write_model_with_move_tasks(model_folder)
        clients = {}

        def client_for(key, secret):
            if (key, secret) not in clients:
                clients[(key, secret)] = sqs_client(plan["endpoint"], model_folder, key, secret,
                                                    plan.get("validate", True))
            return clients[(key, secret)]

        key = plan.get("key", "AKIDGATEWAYTEST")
        secret = plan.get("secret", "gateway-test-secret")
        client = client_for(key, secret)
        print(json.dumps({"versions": {"boto3": boto3.__version__, "botocore": botocore.__version__,
                                        "protocol": client.meta.service_model.protocol}}), flush=True)
        answers = []
        for planned in plan["calls"]:
            CALL_OPTIONS.update(tamper=planned.get("tamper"), skew_seconds=planned.get("skew_seconds", 0))
            caller = client_for(planned.get("key", key), planned.get("secret", secret))
            answers.append(call(caller, planned["action"], planned["params"], answers))
            print(json.dumps(answers[-1]), flush=True)


if __name__ == "__main__":
    main()
