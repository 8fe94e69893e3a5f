"""The client: one method per SQL function of the extension.

Every statement is fixed text with parameters; the only name put into it
is the extension's schema, read from the catalog (by a statement that names
every function and operator with its schema, so that nothing a role put in
the search_path runs) and quoted by the driver, its % doubled for the
placeholders.  The functions the statements call are named with their
schema too: the extension's, or pg_catalog.
"""
import json
import threading
import uuid
from datetime import datetime, timedelta
from typing import Any, Dict, Iterable, List, NoReturn, Optional, Sequence, Union

from . import driver
from .errors import CONNECTION_LOST, ArgumentTypeError, ArgumentValueError, QueueError, from_sqlstate
from .messages import BatchResult, DeletedAndGot, Message, Published, Receipt

Seconds = Union[int, float, timedelta]

_NOT_GIVEN: Any = object()

# The settings of queue_create and queue_alter and their SQL types: the
# only names that go into their statements.  An interval is given in
# seconds, a jsonb as a dict.
_SETTINGS = {
    "visibility_timeout": "interval",
    "message_ttl": "interval",
    "max_dequeue_count": "int",
    "max_message_size": "int",
    "deduplication_window": "interval",
    # queue_alter alone has these (extension 1.6 on)
    "delay": "interval",
    "poison_queue": "text",
    "attributes": "jsonb",
    "tags": "jsonb",
    # the retry policy (extension 1.8 on)
    "retry_delay": "interval",
    "retry_backoff": "boolean",
    "retry_delay_max": "interval",
    # how long a message a consumer deleted is kept for replay (extension 1.9 on)
    "retention": "interval",
}
_ALTER_ONLY = frozenset(("delay", "poison_queue", "attributes", "tags"))

_FIND_SCHEMA = ("SELECT n.nspname FROM pg_catalog.pg_extension e "
                "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace "
                "WHERE e.extname OPERATOR(pg_catalog.=) 'queue'")


def _seconds(value: Optional[Seconds]) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentTypeError(f"a duration is seconds (int or float) or a timedelta, not {value!r}")
    return float(value)


def _timestamp(value: Optional[datetime], what: str) -> Optional[datetime]:
    if value is not None and not isinstance(value, datetime):
        raise ArgumentTypeError(f"{what} is a datetime, not {value!r}")
    return value


def _text(body: Any) -> str:
    """A body as stored: a string as it is, anything else as JSON."""
    return body if isinstance(body, str) else json.dumps(body)


def _jsonb(value: Optional[Dict[str, Any]]) -> Optional[str]:
    return None if value is None else json.dumps(value)


def _receipt_text(message: Message) -> Optional[str]:
    """A message's receipt as a parameter; a peeked message has none (NULL)."""
    return None if message.pop_receipt is None else str(message.pop_receipt)


def _uuid(value: Any) -> Optional[uuid.UUID]:
    if value is None or isinstance(value, uuid.UUID):
        return value
    return uuid.UUID(str(value))


class Client:
    """Calls the queue extension's functions.

    ``Client(dsn)`` opens its own connection in autocommit mode and opens it
    again after it was lost; ``Client(connection)`` uses a psycopg or
    psycopg2 connection as it is, inside whatever transaction it has open.
    Calls from several threads take turns on the connection.
    """

    def __init__(self, dsn_or_connection: Any, schema: Optional[str] = None):
        if isinstance(dsn_or_connection, str):
            self.dsn: Optional[str] = dsn_or_connection
            self._conn: Any = None
        elif not callable(getattr(dsn_or_connection, "cursor", None)):
            raise ArgumentTypeError("give a connection string or a psycopg / psycopg2 connection, "
                                    f"not {dsn_or_connection!r}")
        else:
            self.dsn = None
            self._conn = dsn_or_connection
        # the schema's name, found on the first call if not given, and
        # quoted for the statements (% doubled) on the first call
        self._schema_name: Optional[str] = schema
        self._schema: Optional[str] = None
        self._lock = threading.RLock()
        # how many times the server refused our prepared statements (_rows)
        self._renames = 0

    # -- connection -------------------------------------------------------

    @property
    def owns_connection(self) -> bool:
        """Whether the client made its connection (and may make it again)."""
        return self.dsn is not None

    def copy(self) -> "Client":
        """A client with a connection of its own to the same database (for a
        client made from a connection string; ValueError for a client made
        from a connection)."""
        if self.dsn is None:
            raise ArgumentValueError("a client made from a connection cannot be copied")
        twin = Client(self.dsn, self._schema_name)
        twin._schema = self._schema
        return twin

    def _connection(self) -> Any:
        if self._conn is None or (self.owns_connection and driver.is_closed(self._conn)):
            self._conn = driver.connect(self.dsn)  # type: ignore[arg-type]
        return self._conn

    def cancel(self) -> None:
        """Cancels the statement this client's connection runs (from
        another thread), e.g. a long poll."""
        conn = self._conn
        if conn is not None and not driver.is_closed(conn):
            driver.cancel(conn)

    def close(self) -> None:
        """Closes the connection, if the client made it."""
        with self._lock:
            if self.owns_connection and self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _rows(self, statement: str, params: Sequence[Any] = ()) -> List[Dict[str, Any]]:
        """Runs a statement ({s} standing for the schema); rows as dicts.
        With psycopg 3 the statement is prepared, parsed and planned once
        per connection.  When the server refuses a prepared statement (stale
        after ALTER EXTENSION UPDATE, or lost to DISCARD ALL), which it
        does before running it, the client's statements take a new text
        from then on (psycopg prepares each text apart), and the statement
        is sent once more unless the error aborted a transaction of the
        caller's."""
        with self._lock:
            conn = self._connection()
            try:
                return self._run(conn, statement, params)
            except Exception as error:
                if not driver.stale_statement(error):
                    self._raise(error)
                self._renames += 1
                if not driver.outside_transaction(conn):
                    self._raise(error)
            try:
                return self._run(conn, statement, params)
            except Exception as error:
                self._raise(error)

    def _run(self, conn: Any, statement: str, params: Sequence[Any]) -> List[Dict[str, Any]]:
        with conn.cursor() as cur:
            driver.prepare(cur)
            if self._schema is None:
                self._schema = self._quoted_schema(conn, cur)
            text = statement.format(s=self._schema)
            if self._renames:
                text += f" /* {self._renames} */"
            driver.execute_prepared(cur, text, params)
            if cur.description is None:
                return []
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]

    @staticmethod
    def _raise(error: Exception) -> NoReturn:
        """Raises the extension's errors as QueueError types; the driver's
        own (a lost connection among them) as they are."""
        code = driver.sqlstate(error)
        if code is None or not driver.is_driver_error(error) or code.startswith(CONNECTION_LOST):
            raise error
        raise from_sqlstate(code, str(error).strip()) from error

    # -- producing ---------------------------------------------------------

    def put(self, queue: str, body: Any, delay: Optional[Seconds] = None, ttl: Optional[Seconds] = None,
            headers: Optional[Dict[str, Any]] = None, group_id: Optional[str] = None,
            deduplication_id: Optional[str] = None, priority: int = 0) -> Receipt:
        """Adds a message, visible after ``delay``; without one (None), after
        the queue's delay (0 unless ``alter_queue`` set one; extension 1.6
        on, 0 before); ``ttl=-1``: never expires."""
        if delay is None:
            # no visibility_timeout: the function's default, the queue's delay
            rows = self._rows(
                "SELECT * FROM {s}.queue_put(queue => %s, body => %s, "
                "ttl => pg_catalog.make_interval(secs => %s::float8), headers => %s::jsonb, "
                "group_id => %s, deduplication_id => %s, priority => coalesce(%s::int, 0))",
                (queue, _text(body), _seconds(ttl), _jsonb(headers), group_id, deduplication_id, priority))
        else:
            rows = self._rows(
                "SELECT * FROM {s}.queue_put(%s, %s, "
                "coalesce(pg_catalog.make_interval(secs => %s::float8), '0'), "
                "pg_catalog.make_interval(secs => %s::float8), %s::jsonb, %s, %s, coalesce(%s::int, 0))",
                (queue, _text(body), _seconds(delay), _seconds(ttl), _jsonb(headers),
                 group_id, deduplication_id, priority))
        return self._receipt(rows[0])

    def put_batch(self, queue: str, bodies: Iterable[Any], delay: Optional[Seconds] = None,
                  ttl: Optional[Seconds] = None,
                  headers: Optional[Sequence[Optional[Dict[str, Any]]]] = None,
                  group_ids: Optional[Sequence[Optional[str]]] = None,
                  deduplication_ids: Optional[Sequence[Optional[str]]] = None,
                  priorities: Optional[Sequence[Optional[int]]] = None) -> List[Receipt]:
        """Adds 1 to 1000 messages, all or none; the arrays go with ``bodies``.
        ``delay`` as for ``put``: None takes the queue's."""
        rest = (_seconds(ttl), None if headers is None else [_jsonb(h) for h in headers],
                None if group_ids is None else list(group_ids),
                None if deduplication_ids is None else list(deduplication_ids),
                None if priorities is None else list(priorities))
        texts = [_text(b) for b in bodies]
        if delay is None:
            rows = self._rows(
                "SELECT * FROM {s}.queue_put_batch(queue => %s, bodies => %s::text[], "
                "ttl => pg_catalog.make_interval(secs => %s::float8), headers => %s::jsonb[], "
                "group_ids => %s::text[], deduplication_ids => %s::text[], priorities => %s::int[])",
                (queue, texts) + rest)
        else:
            rows = self._rows(
                "SELECT * FROM {s}.queue_put_batch(%s, %s::text[], "
                "coalesce(pg_catalog.make_interval(secs => %s::float8), '0'), "
                "pg_catalog.make_interval(secs => %s::float8), "
                "%s::jsonb[], %s::text[], %s::text[], %s::int[])",
                (queue, texts, _seconds(delay)) + rest)
        return [self._receipt(row) for row in rows]

    # -- consuming ---------------------------------------------------------

    def get(self, queue: str, max_messages: int = 1, visibility_timeout: Optional[Seconds] = None,
            wait: Seconds = 0, release_on_disconnect: bool = False) -> List[Message]:
        """Claims up to ``max_messages``, each leased for ``visibility_timeout``
        (the queue's by default); ``wait`` (up to 20 s) waits for one."""
        rows = self._rows(
            "SELECT * FROM {s}.queue_get(%s, coalesce(%s::int, 1), "
            "pg_catalog.make_interval(secs => %s::float8), "
            "coalesce(pg_catalog.make_interval(secs => %s::float8), '0'), coalesce(%s::bool, false))",
            (queue, max_messages, _seconds(visibility_timeout), _seconds(wait), release_on_disconnect))
        return [self._message(queue, row) for row in rows]

    def delete_and_get(self, queue: str, done: Sequence[Message], max_messages: int = 1,
                       visibility_timeout: Optional[Seconds] = None, wait: Seconds = 0,
                       release_on_disconnect: bool = False) -> DeletedAndGot:
        """Deletes the messages done with and gets the next ones, in one call
        and one transaction (extension 1.7 on).  With messages to delete it
        does not wait: when none is visible it returns at once, so that its
        deletes commit."""
        if any(m.queue != queue for m in done):
            raise ArgumentValueError(f"delete_and_get: a message to delete is not of queue {queue}")
        # The rows of the deletes that went well are left on the server: the
        # others say by their place (ordinality) which entry they answer.
        rows = self._rows(
            "SELECT * FROM {s}.queue_delete_and_get(%s, %s::bigint[], %s::uuid[], coalesce(%s::int, 1), "
            "pg_catalog.make_interval(secs => %s::float8), "
            "coalesce(pg_catalog.make_interval(secs => %s::float8), '0'), coalesce(%s::bool, false)) "
            "WITH ORDINALITY AS r WHERE r.status OPERATOR(pg_catalog.<>) 'deleted'",
            (queue, [m.message_id for m in done], [_receipt_text(m) for m in done], max_messages,
             _seconds(visibility_timeout), _seconds(wait), release_on_disconnect))
        failed = {row["ordinality"]: row["status"] for row in rows if row["status"] != "claimed"}
        return DeletedAndGot([BatchResult(m.message_id, failed.get(place, "deleted"))
                              for place, m in enumerate(done, start=1)],
                             [self._message(queue, row) for row in rows if row["status"] == "claimed"])

    def peek(self, queue: str, max_messages: int = 1) -> List[Message]:
        """What a get would return now, without receipts; changes nothing."""
        rows = self._rows("SELECT * FROM {s}.queue_peek(%s, coalesce(%s::int, 1))", (queue, max_messages))
        return [self._message(queue, row) for row in rows]

    def update(self, message: Message, visibility_timeout: Seconds, body: Any = None,
               headers: Optional[Dict[str, Any]] = None) -> Message:
        """Extends (or with 0 releases) the lease, may replace body and
        headers; the message gets the new receipt."""
        rows = self._rows(
            "SELECT * FROM {s}.queue_update(%s, %s::bigint, %s::uuid, "
            "pg_catalog.make_interval(secs => %s::float8), %s, %s::jsonb)",
            (message.queue, message.message_id, _receipt_text(message), _seconds(visibility_timeout),
             None if body is None else _text(body), _jsonb(headers)))
        message.pop_receipt = _uuid(rows[0]["pop_receipt"])
        message.visible_at = rows[0]["visible_at"]
        if body is not None:
            message.body = _text(body)
        if headers is not None:
            message.headers = headers
        return message

    def release(self, message: Message) -> Message:
        """Gives the message back as failed (extension 1.8 on): visible
        again after the queue's retry delay for its delivery, or moved to
        the poison queue at the dequeue limit (its receipt is then None)."""
        rows = self._rows("SELECT * FROM {s}.queue_release(%s, %s::bigint, %s::uuid)",
                          (message.queue, message.message_id, _receipt_text(message)))
        message.pop_receipt = _uuid(rows[0]["pop_receipt"])
        message.visible_at = rows[0]["visible_at"]
        return message

    def delete(self, message: Message) -> None:
        """Deletes the message; needs its newest receipt."""
        self._rows("SELECT {s}.queue_delete(%s, %s::bigint, %s::uuid)",
                   (message.queue, message.message_id, _receipt_text(message)))

    def delete_batch(self, messages: Sequence[Message]) -> List[BatchResult]:
        """Deletes messages of one queue; a status per message, no error."""
        if not messages:
            return []
        rows = self._rows(
            "SELECT * FROM {s}.queue_delete_batch(%s, %s::bigint[], %s::uuid[])",
            (self._one_queue(messages), [m.message_id for m in messages],
             [_receipt_text(m) for m in messages]))
        return [BatchResult(row["message_id"], row["status"]) for row in rows]

    def update_batch(self, messages: Sequence[Message], visibility_timeout: Seconds,
                     keep_pop_receipts: bool = False) -> List[BatchResult]:
        """Extends (or with 0 releases) the leases of messages of one queue;
        the messages updated get their new receipts, or with
        ``keep_pop_receipts`` (extension 1.6 on) keep the ones they have."""
        if not messages:
            return []
        params = (self._one_queue(messages), [m.message_id for m in messages],
                  [_receipt_text(m) for m in messages], _seconds(visibility_timeout))
        if keep_pop_receipts:
            rows = self._rows(
                "SELECT * FROM {s}.queue_update_batch(%s, %s::bigint[], %s::uuid[], "
                "pg_catalog.make_interval(secs => %s::float8), true)", params)
        else:
            # four arguments, as before 1.6
            rows = self._rows(
                "SELECT * FROM {s}.queue_update_batch(%s, %s::bigint[], %s::uuid[], "
                "pg_catalog.make_interval(secs => %s::float8))", params)
        return self._refreshed(messages, rows, ("updated",))

    def release_batch(self, messages: Sequence[Message]) -> List[BatchResult]:
        """Gives messages of one queue back as failed (extension 1.8 on); a
        status per message: ``released``, ``poisoned``, or why not."""
        if not messages:
            return []
        rows = self._rows(
            "SELECT * FROM {s}.queue_release_batch(%s, %s::bigint[], %s::uuid[])",
            (self._one_queue(messages), [m.message_id for m in messages],
             [_receipt_text(m) for m in messages]))
        return self._refreshed(messages, rows, ("released", "poisoned"))

    # -- looking -----------------------------------------------------------

    def inspect(self, queue: str, max_messages: int = 100,
                after_message_id: Optional[int] = None) -> List[Dict[str, Any]]:
        """Up to 10,000 messages with their state; never a receipt.
        ``after_message_id``: only the messages with a greater id (keyset
        paging, extension 1.4 on); passed only when given, so that a call
        without it works on older versions.  From extension 1.9 on, the
        messages a queue with ``retention`` keeps after their delete are
        among them, with state ``deleted`` and their ``deleted_at`` (None
        for the others)."""
        if after_message_id is None:
            return self._rows("SELECT * FROM {s}.queue_inspect(%s, coalesce(%s::int, 100))", (queue, max_messages))
        return self._rows("SELECT * FROM {s}.queue_inspect(%s, coalesce(%s::int, 100), %s::bigint)",
                          (queue, max_messages, after_message_id))

    def stats(self, queue: Optional[str] = None) -> Any:
        """Counts by state and counters: a dict for one queue, a list of
        dicts for every queue the role may read."""
        rows = self._rows("SELECT * FROM {s}.queue_stats(%s)", (queue,))
        return rows[0] if queue is not None else rows

    def list_queues(self) -> List[Dict[str, Any]]:
        """The queues with their settings: a dict per queue, with the
        columns of the installed version's ``queue_list`` (from 1.6 on
        ``delay``, a timedelta, and ``attributes`` and ``tags``, dicts;
        from 1.9 on ``retention``, a timedelta or None)."""
        return self._rows("SELECT * FROM {s}.queue_list()")

    # -- managing ----------------------------------------------------------

    def create_queue(self, queue: str, **settings: Any) -> None:
        """Creates a queue with ``visibility_timeout``, ``message_ttl``,
        ``max_dequeue_count``, ``max_message_size`` and
        ``deduplication_window``, (extension 1.8 on) the retry policy
        ``retry_delay``, ``retry_backoff`` and ``retry_delay_max``, and
        (extension 1.9 on) ``retention``, how long a message deleted by a
        consumer is kept for ``replay`` (None or 0: not kept); settings
        left out take the extension's defaults, ``max_dequeue_count=None``
        means no poison queue.  The
        settings only ``alter_queue`` sets are refused (TypeError)."""
        alter_only = sorted(_ALTER_ONLY.intersection(settings))
        if alter_only:
            raise ArgumentTypeError(f"create_queue does not take {', '.join(alter_only)}: "
                                    "alter_queue sets them")
        self._with_settings("queue_create", queue, settings)

    def alter_queue(self, queue: str, **settings: Any) -> None:
        """Changes the settings given and keeps the messages: those of
        ``create_queue``, and (extension 1.6 on) ``delay`` (of the puts that
        name none), ``poison_queue`` (any other queue), ``attributes`` and
        ``tags`` (dicts of strings merged into the queue's; a key set to
        None is removed).  A setting given as None is left as it is;
        ``retention=0`` keeps no more (what was kept is then removed)."""
        self._with_settings("queue_alter", queue, settings)

    def pause(self, queue: str) -> None:
        """Pauses the queue (extension 1.8 on): gets hand out nothing until
        ``resume``; everything else goes on."""
        self._rows("SELECT {s}.queue_pause(%s)", (queue,))

    def resume(self, queue: str) -> None:
        """Resumes a paused queue; its waiting gets are served."""
        self._rows("SELECT {s}.queue_resume(%s)", (queue,))

    def drop_queue(self, queue: str) -> None:
        self._rows("SELECT {s}.queue_drop(%s)", (queue,))

    def clear(self, queue: str) -> int:
        """Deletes every message of the queue; returns how many."""
        return int(self._rows("SELECT {s}.queue_clear(%s) AS n", (queue,))[0]["n"])

    def redrive(self, source: str, destination: Optional[str] = None,
                max_messages: Optional[int] = None) -> int:
        """Moves a poison queue's visible messages back; returns how many."""
        return int(self._rows("SELECT {s}.queue_redrive(%s, %s, %s::bigint) AS n",
                              (source, destination, max_messages))[0]["n"])

    def replay(self, queue: str, since: Optional[datetime] = None, until: Optional[datetime] = None,
               message_ids: Optional[Iterable[int]] = None, max_messages: Optional[int] = None) -> int:
        """Puts messages the queue kept after their delete (its
        ``retention``, extension 1.9 on) back into it, visible at once with
        their ids and a dequeue count of 0: those deleted at or after
        ``since`` and before ``until``, only ``message_ids`` if given, the
        oldest deletion first, at most ``max_messages``; returns how many."""
        return int(self._rows(
            "SELECT {s}.queue_replay(%s, %s::timestamptz, %s::timestamptz, %s::bigint[], %s::bigint) AS n",
            (queue, _timestamp(since, "since"), _timestamp(until, "until"),
             None if message_ids is None else list(message_ids), max_messages))[0]["n"])

    # -- topics (extension 1.10 on) ----------------------------------------

    def create_topic(self, topic: str) -> None:
        """Creates a topic; its name may be no queue's (42710)."""
        self._rows("SELECT {s}.queue_topic_create(%s)", (topic,))

    def drop_topic(self, topic: str) -> None:
        """Drops the topic, its subscriptions and its grants; the queues
        and the messages it put stay."""
        self._rows("SELECT {s}.queue_topic_drop(%s)", (topic,))

    def subscribe(self, topic: str, queue: str, filter: Optional[Dict[str, Any]] = None) -> None:
        """Subscribes the queue to the topic: a publish puts a message into
        it when the headers match ``filter``, an SNS filter policy (None:
        every message).  Subscribing again replaces the filter; a filter
        that is no valid policy is refused (22023) and changes nothing."""
        self._rows("SELECT {s}.queue_subscribe(%s, %s, %s::jsonb)", (topic, queue, _jsonb(filter)))

    def unsubscribe(self, topic: str, queue: str) -> None:
        """Ends the subscription, if there is one."""
        self._rows("SELECT {s}.queue_unsubscribe(%s, %s)", (topic, queue))

    def publish(self, topic: str, body: Any, headers: Optional[Dict[str, Any]] = None,
                delay: Optional[Seconds] = None, ttl: Optional[Seconds] = None,
                group_id: Optional[str] = None, deduplication_id: Optional[str] = None,
                priority: int = 0) -> List[Published]:
        """Puts the message into every queue subscribed to the topic whose
        filter the headers match, each as ``put`` would (``delay`` and
        ``ttl`` None: that queue's; ``ttl=-1``: never expires), in one
        statement of the caller's transaction; a ``Published`` per message,
        in the order of the queues' names (none if no filter matched)."""
        rows = self._rows(
            "SELECT * FROM {s}.queue_publish(%s, %s, %s::jsonb, "
            "pg_catalog.make_interval(secs => %s::float8), pg_catalog.make_interval(secs => %s::float8), "
            "%s, %s, coalesce(%s::int, 0))",
            (topic, _text(body), _jsonb(headers), _seconds(delay), _seconds(ttl),
             group_id, deduplication_id, priority))
        return [Published(row["queue"], row["message_id"]) for row in rows]

    def topics(self) -> List[Dict[str, Any]]:
        """The topics the role holds some permission on: a dict per
        subscription with ``topic``, ``queue`` and ``filter`` (a dict, or
        None: every message), and one with ``queue`` None for a topic
        without any; by topic, then queue."""
        return self._rows("SELECT * FROM {s}.queue_topics()")

    # -- schedules (extension 1.10 on) -------------------------------------

    def schedule(self, name: str, queue: str, cron: str, body: Any,
                 headers: Optional[Dict[str, Any]] = None, time_zone: str = "UTC") -> None:
        """Puts ``body`` into ``queue`` each time the five-field ``cron``
        expression is due on the wall clock of ``time_zone`` (the background
        worker puts it); scheduling a name again replaces its schedule."""
        self._rows("SELECT {s}.queue_schedule(%s, %s, %s, %s, %s::jsonb, coalesce(%s::text, 'UTC'))",
                   (name, queue, cron, _text(body), _jsonb(headers), time_zone))

    def unschedule(self, name: str) -> None:
        """Removes the schedule (42704 if there is none); the messages it
        put stay."""
        self._rows("SELECT {s}.queue_unschedule(%s)", (name,))

    def schedules(self) -> List[Dict[str, Any]]:
        """The schedules of the queues the role may see: a dict each with
        ``schedule``, ``queue``, ``cron``, ``time_zone``, ``next_at`` (the
        next due time) and ``last_at`` (the due time of the last message
        put, None before the first)."""
        return self._rows("SELECT * FROM {s}.queue_schedules()")

    def cron_next(self, cron: str, after: datetime, time_zone: str = "UTC") -> datetime:
        """The first time ``cron`` is due in ``time_zone`` strictly after
        ``after``, as a schedule's message would be put: to check an
        expression before scheduling it."""
        rows = self._rows(
            "SELECT {s}.queue_cron_next(%s, %s::timestamptz, coalesce(%s::text, 'UTC')) AS next_at",
            (cron, _timestamp(after, "after"), time_zone))
        next_at: datetime = rows[0]["next_at"]
        return next_at

    # -- helpers -----------------------------------------------------------

    def _with_settings(self, function: str, queue: str, settings: Dict[str, Any]) -> None:
        unknown = set(settings) - set(_SETTINGS)
        if unknown:   # as Python says of an unexpected keyword argument: a TypeError
            raise ArgumentTypeError(f"unknown queue settings: {', '.join(sorted(unknown))}")
        arguments, params = ["%s"], [queue]  # type: List[str], List[Any]
        for name, sql_type in _SETTINGS.items():
            if name not in settings:
                continue
            if sql_type == "interval":
                arguments.append(f"{name} => pg_catalog.make_interval(secs => %s::float8)")
                params.append(_seconds(settings[name]))
            else:
                arguments.append(f"{name} => %s::{sql_type}")
                params.append(_jsonb(settings[name]) if sql_type == "jsonb" else settings[name])
        self._rows(f"SELECT {{s}}.{function}({', '.join(arguments)})", params)

    def _quoted_schema(self, conn: Any, cur: Any) -> str:
        """The extension's schema as the statements take it: an identifier
        quoted by the driver, with % doubled (the statements have
        parameters, so the driver reads % as the start of a placeholder)."""
        if self._schema_name is None:
            cur.execute(_FIND_SCHEMA)
            row = cur.fetchone()
            if row is None:
                raise QueueError("the queue extension is not installed in this database", "55000")
            self._schema_name = str(row[0])
        return driver.quote_ident(conn, self._schema_name).replace("%", "%%")

    @staticmethod
    def _one_queue(messages: Sequence[Message]) -> str:
        queues = {m.queue for m in messages}
        if len(queues) != 1:
            raise ArgumentValueError("a batch takes messages of one queue")
        return queues.pop()

    @staticmethod
    def _refreshed(messages: Sequence[Message], rows: List[Dict[str, Any]],
                   changed: Sequence[str]) -> List[BatchResult]:
        """A BatchResult per row of a batch, in the messages' order; a message
        whose row's status is one of ``changed`` gets its receipt and
        visible_at."""
        results = []
        for message, row in zip(messages, rows):
            if row["status"] in changed:
                message.pop_receipt = _uuid(row["pop_receipt"])
                message.visible_at = row["visible_at"]
            results.append(BatchResult(row["message_id"], row["status"]))
        return results

    @staticmethod
    def _receipt(row: Dict[str, Any]) -> Receipt:
        return Receipt(row["message_id"], _uuid(row["pop_receipt"]), row["visible_at"],
                       row["inserted_at"], row["expires_at"], row.get("group_id"),
                       row.get("priority") or 0)

    @staticmethod
    def _message(queue: str, row: Dict[str, Any]) -> Message:
        return Message(queue, row["message_id"], row["body"], row["headers"], row["dequeue_count"],
                       row["inserted_at"], row["expires_at"], row["visible_at"],
                       _uuid(row["pop_receipt"]), row.get("group_id"), row.get("priority") or 0,
                       row.get("first_dequeued_at"))
