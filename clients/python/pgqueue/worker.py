"""The worker: the consumer loop of Azure Functions' queue trigger and of
the AWS message processing framework for .NET.

Three kinds of thread share the messages in process (``_held``):
  - the fetch loop (``run``) gets a batch when few are left in process,
    and deletes what succeeded in the same call (queue_delete_and_get);
  - handler threads run the handler, one message each;
  - the lease loop, every heartbeat or when a handler fails, releases what
    failed, deletes what succeeded and no fetch took, and extends the
    leases that run low, with one batch call each.
Only the lease loop and the fetch loop talk to the server, each on its own
connection, so a long poll never holds up a lease.
"""
import asyncio
import inspect
import logging
import math
import queue as taskqueue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from .client import Client
from .errors import ArgumentTypeError, ArgumentValueError, QueueError
from .messages import Message

Handler = Callable[[Message], Any]

LONGEST_POLL = 20.0     # the longest wait queue_get allows
BATCH_MAX = 1000        # messages per batch call
FIRST_PAUSE = 1.0       # after a failed fetch; doubles up to max_polling_interval


@dataclass
class _Held:
    """A message in process and what is known of it."""
    message: Message
    lease_until: float              # time.monotonic() when its lease runs out
    started: bool = False           # a handler thread took it
    outcome: Optional[str] = None   # "done", "failed" or "release": to be sent
    lost: bool = False              # another consumer may have it now
    extending: bool = False         # in the lease loop's extension under way


@dataclass
class Metrics:
    fetched: int = 0
    processed: int = 0
    failed: int = 0
    lost_leases: int = 0
    extensions: int = 0
    released: int = 0
    errors: int = 0

    def as_dict(self) -> Dict[str, int]:
        return dict(self.__dict__)


@dataclass
class _Options:
    batch_size: int = 16
    new_batch_threshold: Optional[int] = None
    visibility_timeout: float = 30
    extension_threshold: float = 5
    heartbeat_interval: float = 1
    max_polling_interval: float = 60
    failure_delay: Optional[float] = None
    concurrency: Optional[int] = None

    def check(self) -> None:
        """TypeError for an option of the wrong type (a count that is not an
        int, a duration that is not a number), ValueError for one out of
        range: both are ArgumentTypeError / ArgumentValueError."""
        _check_type("batch_size", self.batch_size, int, "an int")
        for name in ("new_batch_threshold", "concurrency"):   # None: the default
            if getattr(self, name) is not None:
                _check_type(name, getattr(self, name), int, "an int")
        for name in ("visibility_timeout", "extension_threshold", "heartbeat_interval",
                     "max_polling_interval", "failure_delay"):
            if name == "failure_delay" and self.failure_delay is None:    # the queue's retry policy
                continue
            _check_type(name, getattr(self, name), (int, float), "a number of seconds")
            if not math.isfinite(getattr(self, name)):
                raise ArgumentValueError(f"{name} must be finite, not {getattr(self, name)!r}")
        if not 1 <= self.batch_size <= BATCH_MAX:
            raise ArgumentValueError(f"batch_size must be 1 to {BATCH_MAX}")
        if self.new_batch_threshold is None:
            self.new_batch_threshold = self.batch_size // 2
        if self.concurrency is None:
            self.concurrency = self.batch_size + self.new_batch_threshold
        if self.new_batch_threshold < 0 or self.concurrency < 1:
            raise ArgumentValueError("new_batch_threshold must be 0 or more, concurrency 1 or more")
        if not 0 <= self.extension_threshold < self.visibility_timeout:
            raise ArgumentValueError("extension_threshold must be 0 or more and less than visibility_timeout")
        if (self.heartbeat_interval <= 0 or self.max_polling_interval <= 0
                or (self.failure_delay is not None and self.failure_delay < 0)):
            raise ArgumentValueError("heartbeat_interval and max_polling_interval must be more than 0, "
                                     "failure_delay 0 or more")


def _check_type(name: str, value: Any, types: Any, what: str) -> None:
    """A bool is no number here, though Python makes it an int."""
    if isinstance(value, bool) or not isinstance(value, types):
        raise ArgumentTypeError(f"{name} must be {what}, not {value!r}")


class Worker:
    """Runs ``handler(message)`` for each message of ``queue``.

    A handler that returns marks the message done (it is deleted); one that
    raises marks it failed: it is given back with the queue's retry policy
    (``queue_release``), or, when ``failure_delay`` is given, visible again
    after that many seconds.
    Handlers may be ``async def``.  Options and defaults: docs/clients.md.
    Arguments of the wrong type raise ``ArgumentTypeError`` (a TypeError),
    options out of range ``ArgumentValueError`` (a ValueError).
    """

    def __init__(self, client: Client, queue: str, handler: Handler, *,
                 batch_size: int = 16, new_batch_threshold: Optional[int] = None,
                 visibility_timeout: float = 30, extension_threshold: float = 5,
                 heartbeat_interval: float = 1, max_polling_interval: float = 60,
                 failure_delay: Optional[float] = None, concurrency: Optional[int] = None,
                 logger: Optional[logging.Logger] = None):
        if not isinstance(client, Client):
            raise ArgumentTypeError(f"the first argument must be a pgqueue Client, not {client!r}")
        if not isinstance(queue, str):
            raise ArgumentTypeError(f"the queue must be a str, not {queue!r}")
        if not callable(handler):
            raise ArgumentTypeError(f"the handler must be callable, not {handler!r}")
        self.options = _Options(batch_size, new_batch_threshold, visibility_timeout,
                                extension_threshold, heartbeat_interval, max_polling_interval,
                                failure_delay, concurrency)
        self.options.check()
        self.client, self.queue, self.handler = client, queue, handler
        self.log = logger or logging.getLogger("pgqueue")
        self.metrics = Metrics()
        self._held: Dict[int, _Held] = {}
        # One lock guards _held, metrics and the flags.  The fetch loop waits
        # on a condition of its own, so that a handler that finishes wakes it
        # only when a new batch is due, and the lease loop only when it has
        # something to send: not both for every message.
        lock = threading.RLock()
        self._changed = threading.Condition(lock)
        self._fetch_due = threading.Condition(lock)
        self._stopping = False
        self._deadline: Optional[float] = None  # stop(timeout): when running handlers are let go
        self._finished = threading.Event()
        self._tasks: "taskqueue.Queue[Optional[_Held]]" = taskqueue.Queue()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._run_thread: Optional[threading.Thread] = None
        # False on an extension older than 1.7, which has no queue_delete_and_get
        self._delete_and_get = True
        # False on an extension older than 1.8, which has no queue_release_batch
        self._release = True
        # A client from a connection string gives the worker two connections
        # of its own; one connection is shared, with polls no longer than a
        # heartbeat so the lease calls are not held up.
        if client.owns_connection:
            self._fetcher, self._leaser = client.copy(), client.copy()
            self._poll = min(max_polling_interval, LONGEST_POLL)
        else:
            self._fetcher = self._leaser = client
            self._poll = min(max_polling_interval, LONGEST_POLL, heartbeat_interval)

    # -- starting and stopping ---------------------------------------------

    def start(self) -> threading.Thread:
        """Runs the worker in a thread of its own; returns the thread."""
        thread = threading.Thread(target=self.run, name=f"pgqueue-worker-{self.queue}", daemon=True)
        thread.start()
        return thread

    def run(self) -> None:
        """Works until ``stop()``; then finishes what it holds and returns."""
        self._run_thread = threading.current_thread()
        handlers = [threading.Thread(target=self._handle_loop, daemon=True,
                                     name=f"pgqueue-handler-{i}")
                    for i in range(self.options.concurrency or 1)]
        leases = threading.Thread(target=self._lease_loop, daemon=True, name="pgqueue-leases")
        for thread in handlers + [leases]:
            thread.start()
        try:
            self._fetch_loop()
        finally:
            self._stop_fetching()
            self._wait_until_empty()
            with self._changed:
                self._finished.set()
                self._notify()
            leases.join()
            for _ in handlers:
                self._tasks.put(None)
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._loop.stop)
            if self._fetcher is not self.client:
                self._fetcher.close()
                self._leaser.close()

    def stop(self, timeout: Optional[float] = None) -> None:
        """Fetches no more; releases the messages not started; lets running
        handlers finish (for at most ``timeout`` s, then releases theirs)
        and waits for the worker to end, unless called from its own thread
        (e.g. in a signal handler while ``run()`` runs)."""
        with self._changed:
            self._stopping = True
            if timeout is not None:
                self._deadline = time.monotonic() + timeout
            self._notify()
        if self._fetcher is not self.client:
            try:
                self._fetcher.cancel()      # ends a long poll now
            except Exception:               # the connection is gone anyway
                pass
        if self._run_thread is not None and self._run_thread is not threading.current_thread():
            self._finished.wait()
            self._run_thread.join()

    # -- fetching ----------------------------------------------------------

    def _fetch_loop(self) -> None:
        pause = FIRST_PAUSE
        threshold = self.options.new_batch_threshold or 0
        while True:
            with self._changed:
                while not self._stopping and self._in_process() > threshold:
                    self._fetch_due.wait()
                if self._stopping:
                    return
                done = self._take_done() if self._delete_and_get else []
            asked = time.monotonic()
            try:
                messages = self._get(done)
            except Exception as error:
                with self._changed:
                    # not deleted: the next fetch or the lease loop deletes them
                    for held in done:
                        self._held.setdefault(held.message.message_id, held)
                    self._notify()
                    if getattr(error, "sqlstate", None) == "42883" and self._delete_and_get:
                        self._delete_and_get = False    # before 1.7: get, and delete apart
                        continue
                    if self._stopping:
                        return
                    self.metrics.errors += 1
                self.log.warning("pgqueue: get from %s failed, trying again in %.0f s: %s",
                                 self.queue, pause, error)
                with self._changed:
                    self._changed.wait_for(lambda: self._stopping, timeout=pause)
                pause = min(pause * 2, self.options.max_polling_interval)
                continue
            pause = FIRST_PAUSE
            with self._changed:
                for message in messages:
                    earlier = self._held.get(message.message_id)
                    if earlier is not None and not earlier.lost:
                        # handed out again: the lease held here ran out unnoticed
                        earlier.lost = True
                        self._lost(earlier, "delivered again")
                    held = _Held(message, asked + self.options.visibility_timeout)
                    self._held[message.message_id] = held
                    self._tasks.put(held)
                self.metrics.fetched += len(messages)

    def _take_done(self) -> List[_Held]:
        """The messages handled with success, taken out of _held for the
        next fetch to delete."""
        # one whose lease is being extended waits: its receipt is changing
        done = [h for h in self._held.values() if h.outcome == "done" and not h.extending][:BATCH_MAX]
        for held in done:
            self._held.pop(held.message.message_id)
        return done

    def _get(self, done: List[_Held]) -> List[Message]:
        """The next batch; the call deletes the messages done first."""
        options = self.options
        if not self._delete_and_get:
            return self._fetcher.get(self.queue, options.batch_size, options.visibility_timeout, wait=self._poll)
        result = self._fetcher.delete_and_get(self.queue, [h.message for h in done], options.batch_size,
                                              options.visibility_timeout, wait=self._poll)
        self._count(done, result.deleted, "processed")
        return result.messages

    def _in_process(self) -> int:
        """Messages a handler has yet to finish (lost ones aside)."""
        return sum(1 for h in self._held.values() if h.outcome is None and not h.lost)

    def _notify(self) -> None:
        """Wakes every loop waiting for a change; the lock is held."""
        self._changed.notify_all()
        self._fetch_due.notify_all()

    def _forget(self, held: _Held) -> None:
        """Takes a message out of _held, unless a newer delivery took its place."""
        if self._held.get(held.message.message_id) is held:
            del self._held[held.message.message_id]
        self._notify()

    def _stop_fetching(self) -> None:
        """Marks the messages no handler has taken for release."""
        with self._changed:
            self._stopping = True
            for held in self._held.values():
                if not held.started and held.outcome is None:
                    held.outcome = "release"
            self._notify()

    def _wait_until_empty(self) -> None:
        """Waits until every message held is finished and sent.  With
        stop(timeout): at the deadline the running ones are released and the
        lost ones dropped; what cannot be sent a little later (the server is
        down) is left to its lease, which runs out by itself."""
        grace = max(1.0, 2 * self.options.heartbeat_interval)
        give_up: Optional[float] = None
        with self._changed:
            while self._held:
                now = time.monotonic()
                if give_up is None and self._deadline is not None and now >= self._deadline:
                    for held in list(self._held.values()):
                        if held.lost:
                            self._forget(held)
                        elif held.outcome is None:
                            held.outcome = "release"
                    give_up = now + grace
                    self._notify()
                elif give_up is not None and now >= give_up:
                    self.log.warning("pgqueue: stopping with %d messages of %s unsent; their leases "
                                     "run out by themselves", len(self._held), self.queue)
                    self._held.clear()
                    break
                end = give_up if give_up is not None else self._deadline
                self._changed.wait(None if end is None else max(0.0, end - now))

    # -- handling ----------------------------------------------------------

    def _handle_loop(self) -> None:
        while True:
            held = self._tasks.get()
            if held is None:
                return
            with self._changed:
                if held.outcome is not None:    # released at stop before it started
                    continue
                if held.lost:                   # another consumer has it now
                    self._forget(held)
                    continue
                held.started = True
            try:
                result = self.handler(held.message)
                if inspect.isawaitable(result):
                    asyncio.run_coroutine_threadsafe(self._as_coroutine(result), self._event_loop()).result()
                outcome = "done"
            except BaseException as error:     # SystemExit too: the message must not stay held
                self.log.warning("pgqueue: handler failed on message %s of %s: %r",
                                 held.message.message_id, self.queue, error)
                outcome = "failed"
            with self._changed:
                if outcome == "failed":
                    self.metrics.failed += 1
                if held.lost:
                    self._forget(held)
                elif held.outcome is None:
                    held.outcome = outcome
                    # what succeeded waits for the next fetch, which deletes it
                    if outcome != "done" or not self._delete_and_get or self._stopping:
                        self._changed.notify_all()
                    if self._in_process() <= (self.options.new_batch_threshold or 0):
                        self._fetch_due.notify()

    @staticmethod
    async def _as_coroutine(awaitable: Any) -> Any:
        return await awaitable

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        """One event loop, in a thread of its own, for async handlers."""
        with self._changed:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, daemon=True,
                                 name="pgqueue-asyncio").start()
            return self._loop

    # -- leases ------------------------------------------------------------

    def _lease_loop(self) -> None:
        beat = self.options.heartbeat_interval
        next_beat = time.monotonic() + beat
        while True:
            with self._changed:
                # woken by a handler that finished, by a stop, or by the beat
                while (not self._finished.is_set() and not self._has_outcomes()
                       and time.monotonic() < next_beat):
                    self._changed.wait(max(0.0, next_beat - time.monotonic()))
                if self._finished.is_set() and not self._held:
                    return
                now = time.monotonic()
                extend_too = now >= next_beat
                if extend_too:
                    next_beat = now + beat
                work = self._take_work(now, extend_too)
            try:
                self._send(work)
            except Exception as error:
                with self._changed:
                    self.metrics.errors += 1
                    # what was not sent is tried again at the next beat
                    for held in work["done"] + work["failed"] + work["release"]:
                        self._held.setdefault(held.message.message_id, held)
                self.log.warning("pgqueue: lease call for %s failed: %s", self.queue, error)
                with self._changed:
                    self._changed.wait(beat)

    def _has_outcomes(self) -> bool:
        # what succeeded waits for the next fetch, which deletes it in its call
        wait_for_fetch = self._delete_and_get and not self._stopping
        return any(h.outcome is not None and not (wait_for_fetch and h.outcome == "done")
                   for h in self._held.values())

    def _take_work(self, now: float, extend_too: bool) -> Dict[str, List[_Held]]:
        """What to send this round; the messages with an outcome leave _held
        (they go back if the call fails)."""
        work: Dict[str, List[_Held]] = {"done": [], "failed": [], "release": [], "extend": []}
        for message_id, held in list(self._held.items()):
            if held.outcome is not None:
                work[held.outcome].append(held)
                self._held.pop(message_id)
            elif extend_too and not held.lost and held.lease_until - now < self.options.extension_threshold:
                held.extending = True
                work["extend"].append(held)
        return work

    def _send(self, work: Dict[str, List[_Held]]) -> None:
        leaser, options = self._leaser, self.options
        steps = [("done", leaser.delete_batch, "processed"),
                 ("failed", self._release_failed, None),
                 ("release", lambda ms: leaser.update_batch(ms, 0), "released")]
        for kind, call, counter in steps:
            if work[kind]:
                self._count(work[kind], call([h.message for h in work[kind]]), counter)
                work[kind] = []     # sent: a later failure in this round must not send it again
        if work["extend"]:
            asked = time.monotonic()
            try:
                results = leaser.update_batch([h.message for h in work["extend"]], options.visibility_timeout)
            finally:
                with self._changed:
                    for held in work["extend"]:
                        held.extending = False
            with self._changed:
                for held, result in zip(work["extend"], results):
                    if result.ok:
                        held.lease_until = asked + options.visibility_timeout
                        self.metrics.extensions += 1
                    else:
                        held.lost = True
                        self._lost(held, result.status)
                self._notify()

    def _release_failed(self, messages: List[Message]) -> List[Any]:
        """Failed messages go back: after failure_delay when given, else with
        the queue's retry policy (an extension older than 1.8 has none:
        visible again at once, until the worker is started again after the
        update)."""
        if self.options.failure_delay is not None:
            return self._leaser.update_batch(messages, self.options.failure_delay)
        if self._release:
            try:
                return self._leaser.release_batch(messages)
            except QueueError as error:
                if error.sqlstate != "42883":
                    raise
                self._release = False
        return self._leaser.update_batch(messages, 0)

    def _count(self, helds: List[_Held], results: List[Any], counter: Optional[str]) -> None:
        with self._changed:
            for held, result in zip(helds, results):
                if result.ok:
                    if counter:
                        setattr(self.metrics, counter, getattr(self.metrics, counter) + 1)
                else:
                    self._lost(held, result.status)
            self._notify()

    def _lost(self, held: _Held, status: str) -> None:
        self.metrics.lost_leases += 1
        self.log.warning("pgqueue: lost the lease of message %s of %s (%s); another consumer has it",
                         held.message.message_id, self.queue, status)
