"""The errors the extension raises, as Python types.

Each carries the SQLSTATE in ``sqlstate`` and the driver's error as its
``__cause__``.  A lost connection is not one of them: it comes as the
driver's own error (``psycopg.OperationalError``).  What the client checks
itself, before calling the server, raises ``ArgumentTypeError`` (a
``TypeError``) or ``ArgumentValueError`` (a ``ValueError``); both are
``InvalidArgument`` too, so that ``except InvalidArgument`` catches them.
"""
from typing import Dict, Optional, Type


class QueueError(Exception):
    """An error the extension raised; the base of the others."""

    def __init__(self, message: str, sqlstate: Optional[str] = None):
        super().__init__(message)
        self.sqlstate = sqlstate


class MessageNotFound(QueueError):
    """QU404: the message was deleted, expired or moved to poison."""


class ReceiptMismatch(QueueError):
    """QU409: the pop receipt is not the newest; the lease was lost."""


class QueueNotFound(QueueError):
    """42704: no such queue."""


class QueueExists(QueueError):
    """42710: the queue exists already."""


class PermissionDenied(QueueError):
    """42501: the role lacks the permission on the queue."""


class InvalidArgument(QueueError):
    """22023 (a bad argument) or 22004 (a missing one), from the server;
    the base of the client's own argument errors too."""


class ArgumentTypeError(InvalidArgument, TypeError):
    """An argument of the wrong type, refused by the client before any call
    to the server (sqlstate 22023, as the server would say)."""

    def __init__(self, message: str):
        super().__init__(message, "22023")


class ArgumentValueError(InvalidArgument, ValueError):
    """An argument of the right type with a value the client refuses before
    any call to the server (sqlstate 22023, as the server would say)."""

    def __init__(self, message: str):
        super().__init__(message, "22023")


class MessageTooLarge(QueueError):
    """54000: body and headers over the queue's max_message_size."""


BY_SQLSTATE: Dict[str, Type[QueueError]] = {
    "QU404": MessageNotFound,
    "QU409": ReceiptMismatch,
    "42704": QueueNotFound,
    "42710": QueueExists,
    "42501": PermissionDenied,
    "22023": InvalidArgument,
    "22004": InvalidArgument,
    "54000": MessageTooLarge,
}

# Classes of SQLSTATE that say the connection, not the call, failed:
# connection exceptions, and the server shutting the session down.
CONNECTION_LOST = ("08", "57P01", "57P02", "57P03")


def from_sqlstate(sqlstate: str, message: str) -> QueueError:
    return BY_SQLSTATE.get(sqlstate, QueueError)(message, sqlstate)
