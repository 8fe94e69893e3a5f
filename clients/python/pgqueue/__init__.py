"""pgqueue: the client and worker of the queue PostgreSQL extension
(the distribution pg-lease-queue).

    from pgqueue import Client, Worker
    client = Client("postgresql:///app")
    Worker(client, "orders", lambda message: print(message.body)).run()
"""
from .client import Client
from .errors import (ArgumentTypeError, ArgumentValueError, InvalidArgument, MessageNotFound,
                     MessageTooLarge, PermissionDenied, QueueError, QueueExists, QueueNotFound,
                     ReceiptMismatch)
from .messages import BatchResult, DeletedAndGot, Message, Published, Receipt
from .worker import Metrics, Worker

__version__ = "1.10.0"

__all__ = [
    "Client", "Worker", "Metrics", "Message", "Receipt", "BatchResult", "DeletedAndGot", "Published",
    "QueueError", "MessageNotFound", "ReceiptMismatch", "QueueNotFound", "QueueExists",
    "PermissionDenied", "InvalidArgument", "MessageTooLarge", "ArgumentTypeError",
    "ArgumentValueError",
]
