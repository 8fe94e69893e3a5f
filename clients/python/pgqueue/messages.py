"""What the calls return: messages, receipts and batch results."""
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, List, Optional


@dataclass
class Message:
    """A message got (with a receipt) or peeked (without one).

    ``pop_receipt`` is the newest receipt: ``Client.update`` and
    ``Client.update_batch`` refresh it, as they refresh ``visible_at``
    (``update_batch`` with ``keep_pop_receipts`` leaves it as it is).
    ``first_dequeued_at`` is when it was first handed out (extension 1.6
    on): None for a message never got, and before 1.6.
    """
    queue: str
    message_id: int
    body: str
    headers: Optional[Dict[str, Any]]
    dequeue_count: int
    inserted_at: datetime
    expires_at: Optional[datetime]
    visible_at: datetime
    pop_receipt: Optional[uuid.UUID]
    group_id: Optional[str] = None
    priority: int = 0
    first_dequeued_at: Optional[datetime] = None

    def json(self) -> Any:
        """The body parsed as JSON (a body put as a dict or list)."""
        return json.loads(self.body)


@dataclass
class Receipt:
    """What a put returns.

    ``visible_at`` is when the message becomes visible: after the put's
    ``delay``, or the queue's delay when the put named none (a message of
    a group is not delayed by the queue's; it waits for its turn).
    """
    message_id: int
    pop_receipt: Optional[uuid.UUID]
    visible_at: datetime
    inserted_at: datetime
    expires_at: Optional[datetime]
    group_id: Optional[str] = None
    priority: int = 0


@dataclass
class BatchResult:
    """One entry of delete_batch, update_batch or release_batch:
    ``deleted``, ``updated``, ``released`` or ``poisoned``, else
    ``not_found`` or ``pop_receipt_mismatch``."""
    message_id: int
    status: str

    @property
    def ok(self) -> bool:
        return self.status in ("deleted", "updated", "released", "poisoned")


@dataclass
class DeletedAndGot:
    """What ``Client.delete_and_get`` did: a result per message given to
    delete (``deleted``, ``not_found`` or ``pop_receipt_mismatch``), in
    their order, and the messages it got."""
    deleted: List[BatchResult]
    messages: List[Message]


@dataclass
class Published:
    """One message a publish put (extension 1.10 on): the subscribed queue
    whose filter the headers matched, and the message's id in it."""
    queue: str
    message_id: int
