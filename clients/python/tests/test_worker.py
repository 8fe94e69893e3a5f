"""pgqueue.Worker against a real server: slow and failing handlers, a
server restart and killed sessions mid-batch, stopping, async handlers."""
import asyncio
import collections
import math
import threading
import time
import unittest

from pgqueue import ArgumentTypeError, ArgumentValueError, Client, InvalidArgument, Worker
from server import DSN, dsn, fresh_queue, pg_ctl, restart, sql, terminate, wait_for


class Recorder:
    """A handler that records each delivery and works or fails as told."""

    def __init__(self, seconds=0.0, fail=lambda message: False):
        self.seconds, self.fail = seconds, fail
        self.lock = threading.Lock()
        self.deliveries = []            # (message_id, dequeue_count, time, worker)
        self.done = collections.Counter()

    def handler(self, name):
        def handle(message):
            with self.lock:
                self.deliveries.append((message.message_id, message.dequeue_count,
                                        time.monotonic(), name))
            time.sleep(self.seconds)
            if self.fail(message):
                raise RuntimeError("told to fail")
            with self.lock:
                self.done[message.message_id] += 1
        return handle


def sessions(application_name):
    return sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
               (application_name,))[0][0]


def stats(queue):
    with Client(DSN) as client:
        return client.stats(queue)


class WorkerTest(unittest.TestCase):
    def test_slow_handler_keeps_its_lease(self):
        """A handler twice as long as the lease: the heartbeat extends it, so
        the second worker never gets the message."""
        queue = fresh_queue("py-slow")
        with Client(DSN) as client:
            ids = [r.message_id for r in client.put_batch(queue, [f"m{i}" for i in range(6)])]
        recorder = Recorder(seconds=4)
        options = dict(visibility_timeout=2, extension_threshold=1, heartbeat_interval=0.25,
                       batch_size=3, concurrency=3)
        workers = [Worker(Client(DSN), queue, recorder.handler(n), **options) for n in "ab"]
        for worker in workers:
            worker.start()
        self.assertTrue(wait_for(lambda: sum(recorder.done.values()) >= 6, timeout=40))
        for worker in workers:
            worker.stop()
        self.assertEqual(sorted(recorder.done), sorted(ids))
        self.assertEqual(set(recorder.done.values()), {1}, "each message handled once")
        self.assertEqual(len(recorder.deliveries), 6)
        self.assertGreater(sum(w.metrics.extensions for w in workers), 0)
        self.assertEqual(sum(w.metrics.processed for w in workers), 6)
        self.assertEqual(sum(w.metrics.lost_leases for w in workers), 0)
        self.assertEqual(stats(queue)["total"], 0)

    def test_next_fetch_deletes_what_was_done(self):
        """What the handlers finished is deleted by the next fetch, in its
        call: queue_delete_and_get, not a delete_batch of its own."""
        queue = fresh_queue("py-one-call")
        count = 200
        with Client(DSN) as client:
            client.put_batch(queue, [str(i) for i in range(count)])
        recorder = Recorder()
        counted = Client(dsn(options="-c%20track_functions%3Dall"))
        worker = Worker(counted, queue, recorder.handler("a"), batch_size=16)
        sql("SELECT pg_stat_reset()")
        worker.start()
        self.assertTrue(wait_for(lambda: stats(queue)["total"] == 0, timeout=30))
        worker.stop()
        counted.close()
        self.assertEqual(len(recorder.done), count)
        self.assertEqual(worker.metrics.processed, count)
        calls = {}

        def counted_calls():
            # the sessions' counts reach the statistics when they end
            sql("SELECT pg_stat_clear_snapshot()")
            calls.update(dict(sql("SELECT funcname, calls FROM pg_stat_user_functions WHERE funcname IN "
                                  "('queue_delete_and_get', 'queue_delete_batch', 'queue_get')")))
            return calls.get("queue_delete_and_get", 0) >= math.ceil(count / 16)

        self.assertTrue(wait_for(counted_calls, timeout=10), calls)
        self.assertLessEqual(calls["queue_delete_and_get"], 4 * math.ceil(count / 16), calls)
        self.assertLessEqual(calls.get("queue_delete_batch", 0), 1, calls)
        self.assertEqual(calls.get("queue_get", 0), 0, calls)

    def test_failed_message_comes_back_after_the_delay(self):
        queue = fresh_queue("py-retry")
        with Client(DSN) as client:
            client.put(queue, "flaky")
        recorder = Recorder(fail=lambda m: m.dequeue_count == 1)
        worker = Worker(Client(DSN), queue, recorder.handler("a"), failure_delay=1)
        worker.start()
        self.assertTrue(wait_for(lambda: sum(recorder.done.values()) == 1, timeout=20))
        worker.stop()
        (_, first, t1, _), (_, second, t2, _) = recorder.deliveries
        self.assertEqual((first, second), (1, 2))
        self.assertGreaterEqual(t2 - t1, 0.9)
        self.assertEqual((worker.metrics.failed, worker.metrics.processed), (1, 1))

    def test_failed_message_follows_the_retry_curve(self):
        """No failure_delay: the queue's retry policy.  A message that keeps
        failing comes back after 0.4, 0.8, 1.6 s (doubling, give or take
        10 %), then goes to the poison queue at the dequeue limit."""
        queue = fresh_queue("py-curve", max_dequeue_count=4, retry_delay=0.4, retry_backoff=True)
        with Client(DSN) as client:
            client.put(queue, "hopeless")
        recorder = Recorder(fail=lambda m: True)
        worker = Worker(Client(DSN), queue, recorder.handler("a"), max_polling_interval=0.05)
        worker.start()
        self.assertTrue(wait_for(lambda: stats(queue + "-poison")["total"] == 1, timeout=30))
        worker.stop()
        self.assertEqual([d[1] for d in recorder.deliveries], [1, 2, 3, 4])
        gaps = [later[2] - earlier[2] for earlier, later in zip(recorder.deliveries, recorder.deliveries[1:])]
        for gap, delay in zip(gaps, [0.4, 0.8, 1.6]):
            self.assertGreaterEqual(gap, 0.9 * delay - 0.05, f"gaps {gaps}")
            self.assertLess(gap, 1.1 * delay + 1.0, f"gaps {gaps}")
        self.assertEqual(worker.metrics.failed, 4)

    def test_always_failing_message_goes_to_poison(self):
        queue = fresh_queue("py-poison", max_dequeue_count=3)
        with Client(DSN) as client:
            client.put(queue, "hopeless")
        recorder = Recorder(fail=lambda m: True)
        worker = Worker(Client(DSN), queue, recorder.handler("a"), failure_delay=0.1)
        worker.start()
        self.assertTrue(wait_for(lambda: stats(queue + "-poison")["total"] == 1, timeout=20))
        worker.stop()
        self.assertEqual([d[1] for d in recorder.deliveries], [1, 2, 3])
        self.assertEqual(worker.metrics.failed, 3)
        self.assertEqual(stats(queue)["total"], 0)

    def _survives(self, cut, name):
        """30 messages of 0.5 s each, 8 at a time; the connections are cut
        mid-batch by cut(); every message is done once, none lost."""
        queue = fresh_queue(f"py-{name}")
        with Client(DSN) as client:
            ids = [r.message_id for r in client.put_batch(queue, [f"m{i}" for i in range(30)])]
        recorder = Recorder(seconds=0.5)
        worker = Worker(Client(dsn(application_name=f"py-{name}")), queue, recorder.handler("a"),
                        batch_size=8, concurrency=8, visibility_timeout=30)
        worker.start()
        # mid-batch: handlers running, the fetch connection deleting what
        # they finished (the lease connection opens when a lease needs a call)
        self.assertTrue(wait_for(lambda: 1 <= len(recorder.done) <= 22 and sessions(f"py-{name}") >= 1,
                                 timeout=10, step=0.01))
        cut(f"py-{name}")
        finished = wait_for(lambda: len(recorder.done) == 30, timeout=60)
        worker.stop()
        self.assertTrue(finished, f"done {len(recorder.done)} of 30")
        self.assertEqual(sorted(recorder.done), sorted(ids), "none lost")
        self.assertEqual(set(recorder.done.values()), {1}, "none handled twice")
        self.assertTrue(wait_for(lambda: stats(queue)["total"] == 0, timeout=10), "all deleted")
        self.assertEqual(worker.metrics.lost_leases, 0)
        self.assertEqual(worker.metrics.processed, 30)
        return worker

    def test_server_restart_mid_batch(self):
        worker = self._survives(lambda name: restart(), "restart")
        self.assertGreaterEqual(worker.metrics.errors, 1, "the restart was noticed")

    def test_terminated_sessions_mid_batch(self):
        counts = []
        worker = self._survives(lambda name: counts.append(terminate(name)), "terminate")
        self.assertEqual(len(counts), 1)
        self.assertGreaterEqual(counts[0], 1, "the worker's sessions were ended")
        self.assertGreaterEqual(worker.metrics.errors, 1)

    def test_stop_releases_what_has_not_started(self):
        queue = fresh_queue("py-stop")
        with Client(DSN) as client:
            client.put_batch(queue, [f"m{i}" for i in range(10)])
        recorder = Recorder(seconds=1)
        worker = Worker(Client(DSN), queue, recorder.handler("a"), batch_size=10, concurrency=2)
        worker.start()
        self.assertTrue(wait_for(lambda: len(recorder.deliveries) == 2, timeout=10))
        worker.stop()
        self.assertEqual(sum(recorder.done.values()), 2, "the running handlers finished")
        self.assertEqual(worker.metrics.processed, 2)
        self.assertEqual(worker.metrics.released, 8)
        after = stats(queue)
        self.assertEqual((after["visible"], after["in_flight"], after["total"]), (8, 0, 8))

    def test_stop_with_a_timeout_releases_running_handlers(self):
        queue = fresh_queue("py-stop-timeout")
        with Client(DSN) as client:
            client.put(queue, "long")
        recorder = Recorder(seconds=5)
        worker = Worker(Client(DSN), queue, recorder.handler("a"))
        worker.start()
        self.assertTrue(wait_for(lambda: len(recorder.deliveries) == 1, timeout=10))
        started = time.monotonic()
        worker.stop(timeout=0.5)
        self.assertLess(time.monotonic() - started, 3)
        self.assertEqual(worker.metrics.released, 1)
        self.assertEqual(stats(queue)["visible"], 1)

    def test_lost_lease_is_counted_not_fatal(self):
        queue = fresh_queue("py-lost")
        with Client(DSN) as client:
            client.put(queue, "cleared under the handler")
        started = threading.Event()

        def handler(message):
            started.set()
            time.sleep(1)

        worker = Worker(Client(DSN), queue, handler)
        worker.start()
        self.assertTrue(started.wait(10))
        with Client(DSN) as client:
            self.assertEqual(client.clear(queue), 1)
            client.put(queue, "next")
        self.assertTrue(wait_for(lambda: worker.metrics.processed == 1, timeout=10),
                        "the worker went on after the lost lease")
        worker.stop()
        self.assertEqual(worker.metrics.lost_leases, 1)

    def test_lost_message_not_started_is_skipped(self):
        """Two messages, one handler at a time, heartbeats too rare to keep
        the 1 s leases: another consumer takes both; the worker finds both
        leases lost and never starts the second message."""
        queue = fresh_queue("py-lost-pending")
        with Client(DSN) as client:
            client.put_batch(queue, ["first", "second"])
        handled = []

        def handler(message):
            handled.append(message.body)
            time.sleep(4)

        worker = Worker(Client(DSN), queue, handler, batch_size=2, concurrency=1,
                        visibility_timeout=1, extension_threshold=0.5, heartbeat_interval=2.5)
        worker.start()
        self.assertTrue(wait_for(lambda: handled == ["first"], timeout=10))
        time.sleep(1.2)
        with Client(DSN) as other:
            self.assertEqual(len(other.get(queue, 2, visibility_timeout=60)), 2)
        self.assertTrue(wait_for(lambda: worker.metrics.lost_leases == 2, timeout=10))
        time.sleep(4)       # the first handler ends; the second must not start
        worker.stop()
        self.assertEqual(handled, ["first"])
        self.assertEqual(worker.metrics.processed, 0)

    def test_handler_that_exits_counts_as_failed(self):
        queue = fresh_queue("py-exit")
        with Client(DSN) as client:
            client.put(queue, "exits")

        def handler(message):
            raise SystemExit(1)

        worker = Worker(Client(DSN), queue, handler, failure_delay=60)
        worker.start()
        self.assertTrue(wait_for(lambda: worker.metrics.failed == 1, timeout=10))
        started = time.monotonic()
        worker.stop()
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual(stats(queue)["visible"], 0, "released with the failure delay")

    def test_stop_with_a_timeout_while_the_server_is_down(self):
        queue = fresh_queue("py-stop-down")
        with Client(DSN) as client:
            client.put(queue, "held")
        running = threading.Event()
        release = threading.Event()

        def handler(message):
            running.set()
            release.wait(30)

        worker = Worker(Client(DSN), queue, handler, heartbeat_interval=0.25)
        worker.start()
        self.assertTrue(running.wait(10))
        pg_ctl("stop")
        try:
            stopper = threading.Thread(target=worker.stop, kwargs={"timeout": 1})
            started = time.monotonic()
            stopper.start()
            stopper.join(10)
            took = time.monotonic() - started
        finally:
            release.set()
            pg_ctl("start")
        self.assertLess(took, 6, "stop(1) returned though nothing could be sent")
        self.assertGreaterEqual(worker.metrics.errors, 1)

    def test_async_handler(self):
        queue = fresh_queue("py-async")
        with Client(DSN) as client:
            client.put_batch(queue, ["a", "b", "c", "fail"])
        seen = []

        async def handler(message):
            await asyncio.sleep(0.1)
            if message.body == "fail":
                raise ValueError("async failure")
            seen.append(message.body)

        worker = Worker(Client(DSN), queue, handler, failure_delay=60)
        worker.start()
        self.assertTrue(wait_for(lambda: worker.metrics.processed == 3 and worker.metrics.failed == 1,
                                 timeout=10))
        worker.stop()
        self.assertEqual(sorted(seen), ["a", "b", "c"])
        after = stats(queue)    # the failed one waits out its failure_delay
        self.assertEqual((after["visible"], after["total"]), (0, 1))

    def test_worker_on_one_shared_connection(self):
        """A client made from a connection: fetch and leases share it; the
        lease of a handler longer than the lease still holds."""
        import psycopg
        conn = psycopg.connect(DSN, autocommit=True)
        queue = fresh_queue("py-shared")
        # the lease is extended 2 s before its end: a loaded machine that
        # stalls the worker for a second does not lose it
        recorder = Recorder(seconds=4)
        worker = Worker(Client(conn), queue, recorder.handler("a"), visibility_timeout=3,
                        extension_threshold=2, heartbeat_interval=0.25)
        worker.start()
        with Client(DSN) as client:
            client.put(queue, "shared")
        self.assertTrue(wait_for(lambda: worker.metrics.processed == 1, timeout=15))
        worker.stop()
        conn.close()
        self.assertEqual([d[1] for d in recorder.deliveries], [1])
        self.assertGreater(worker.metrics.extensions, 0)


class WorkerArgumentTest(unittest.TestCase):
    """The worker's arguments, checked before it connects: TypeError for a
    wrong type, ValueError for a value out of range, both InvalidArgument."""

    def setUp(self):
        self.client = Client(DSN)

    def tearDown(self):
        self.client.close()

    def refused(self, python_type, own_type, *args, **options):
        args = args or (self.client, "py-never", lambda message: None)
        with self.assertRaises(python_type) as caught:
            Worker(*args, **options)
        self.assertIs(type(caught.exception), own_type, str(caught.exception))
        self.assertIsInstance(caught.exception, InvalidArgument)
        self.assertEqual(caught.exception.sqlstate, "22023")

    def test_a_wrong_type_is_a_type_error(self):
        self.refused(TypeError, ArgumentTypeError, "postgresql:///app", "q", lambda message: None)
        self.refused(TypeError, ArgumentTypeError, self.client, 42, lambda message: None)
        self.refused(TypeError, ArgumentTypeError, self.client, "q", "not callable")
        self.refused(TypeError, ArgumentTypeError, batch_size=2.0)
        self.refused(TypeError, ArgumentTypeError, batch_size=True)
        self.refused(TypeError, ArgumentTypeError, concurrency="4")
        self.refused(TypeError, ArgumentTypeError, visibility_timeout="30")
        self.refused(TypeError, ArgumentTypeError, heartbeat_interval=None)

    def test_a_bad_value_is_a_value_error(self):
        self.refused(ValueError, ArgumentValueError, batch_size=0)
        self.refused(ValueError, ArgumentValueError, batch_size=1001)
        self.refused(ValueError, ArgumentValueError, new_batch_threshold=-1)
        self.refused(ValueError, ArgumentValueError, concurrency=0)
        self.refused(ValueError, ArgumentValueError, visibility_timeout=5, extension_threshold=5)
        self.refused(ValueError, ArgumentValueError, heartbeat_interval=0)
        self.refused(ValueError, ArgumentValueError, max_polling_interval=math.inf)
        self.refused(ValueError, ArgumentValueError, failure_delay=math.nan)
        self.refused(ValueError, ArgumentValueError, failure_delay=-1)

    def test_good_arguments_pass(self):
        worker = Worker(self.client, "py-never", lambda message: None, batch_size=1000,
                        new_batch_threshold=0, concurrency=1, visibility_timeout=0.5,
                        extension_threshold=0, heartbeat_interval=0.1, max_polling_interval=1,
                        failure_delay=0.5)
        self.assertEqual((worker.options.batch_size, worker.options.concurrency), (1000, 1))


if __name__ == "__main__":
    unittest.main()
