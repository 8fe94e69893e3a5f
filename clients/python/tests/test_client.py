"""Every call of pgqueue.Client against a real server."""
import threading
import time
import unittest
import uuid
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import psycopg

from pgqueue import (ArgumentTypeError, ArgumentValueError, Client, InvalidArgument, Message,
                     MessageNotFound, MessageTooLarge, PermissionDenied, Published, QueueError, QueueExists,
                     QueueNotFound, ReceiptMismatch, Worker)
from pgqueue.driver import INFINITY
from server import DSN, dsn, fresh_queue, sql, terminate, wait_for


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.client = Client(DSN)
        self.queue = fresh_queue("py-client", visibility_timeout=30, max_dequeue_count=5)

    def tearDown(self):
        self.client.close()

    def test_put_with_every_option(self):
        c = self.client
        plain = c.put(self.queue, "plain")
        self.assertIsNotNone(plain.pop_receipt)
        self.assertEqual(plain.visible_at, plain.inserted_at)
        delayed = c.put(self.queue, "later", delay=timedelta(seconds=60), ttl=120,
                        headers={"kind": "test"}, priority=7)
        self.assertEqual(delayed.visible_at - delayed.inserted_at, timedelta(seconds=60))
        self.assertEqual(delayed.expires_at - delayed.inserted_at, timedelta(seconds=120))
        self.assertEqual(delayed.priority, 7)
        forever = c.put(self.queue, {"n": 1}, ttl=-1, group_id="g1")
        self.assertIsNone(forever.expires_at)
        self.assertEqual(forever.group_id, "g1")
        first = c.put(self.queue, "once", deduplication_id="d-1")
        again = c.put(self.queue, "once", deduplication_id="d-1")
        self.assertEqual(first.message_id, again.message_id)
        self.assertEqual(c.stats(self.queue)["total"], 4)
        got = c.get(self.queue, 10)
        by_body = {m.body: m for m in got}
        self.assertEqual(set(by_body), {"plain", '{"n": 1}', "once"})
        self.assertEqual(by_body['{"n": 1}'].json(), {"n": 1})

    def test_waiting_message_of_a_group(self):
        """Behind its group's first message, a message is visible at
        'infinity': datetime.max with psycopg 3 as with psycopg2."""
        c = self.client
        first = c.put(self.queue, "first", group_id="g")
        second = c.put(self.queue, "second", group_id="g")
        self.assertLess(first.visible_at, INFINITY)
        self.assertEqual(second.visible_at, INFINITY)
        states = {r["body"]: (r["state"], r["visible_at"]) for r in c.inspect(self.queue)}
        self.assertEqual(states["second"], ("waiting", INFINITY))
        [got] = c.get(self.queue)
        self.assertEqual(c.get(self.queue), [], "one message of a group in flight at a time")
        c.delete(got)
        [after] = c.get(self.queue)
        self.assertEqual((after.body, after.group_id), ("second", "g"))

    def test_put_batch_with_every_array(self):
        receipts = self.client.put_batch(
            self.queue, ["a", "b", {"c": 3}], delay=0, ttl=600,
            headers=[{"i": 1}, None, {"i": 3}], group_ids=["g", None, None],
            deduplication_ids=[None, "batch-b", None], priorities=[0, 5, None])
        self.assertEqual(len(receipts), 3)
        self.assertEqual([r.group_id for r in receipts], ["g", None, None])
        self.assertEqual([r.priority for r in receipts], [0, 5, 0])
        again = self.client.put_batch(self.queue, ["b"], deduplication_ids=["batch-b"])
        self.assertEqual(again[0].message_id, receipts[1].message_id)
        got = self.client.get(self.queue, 10)
        self.assertEqual([m.body for m in got], ["b", "a", '{"c": 3}'])   # priority 5 first
        self.assertEqual(got[1].headers, {"i": 1})

    def test_get_leases_and_waits(self):
        c = self.client
        c.put(self.queue, "one")
        [message] = c.get(self.queue, 5, visibility_timeout=90)
        self.assertEqual(message.dequeue_count, 1)
        self.assertEqual(message.queue, self.queue)
        self.assertAlmostEqual((message.visible_at - message.inserted_at).total_seconds(), 90, delta=5)
        self.assertEqual(c.get(self.queue), [])
        started = time.monotonic()
        self.assertEqual(c.get(self.queue, wait=0.5), [])
        self.assertGreaterEqual(time.monotonic() - started, 0.45)
        # a put from elsewhere wakes a waiting get
        with Client(DSN) as producer:
            threading.Timer(0.3, lambda: producer.put(self.queue, "woke")).start()
            started = time.monotonic()
            got = c.get(self.queue, wait=10)
        self.assertEqual([m.body for m in got], ["woke"])
        self.assertLess(time.monotonic() - started, 5)

    def test_first_dequeued_at(self):
        """None until the first get, then that get's time, kept by a
        release and the gets after it."""
        c = self.client
        c.put(self.queue, "once")
        [peeked] = c.peek(self.queue)
        self.assertIsNone(peeked.first_dequeued_at)
        [first] = c.get(self.queue)
        self.assertIsNotNone(first.first_dequeued_at)
        self.assertGreaterEqual(first.first_dequeued_at, first.inserted_at)
        c.update(first, 0)
        [again] = c.get(self.queue)
        self.assertEqual((again.dequeue_count, again.first_dequeued_at), (2, first.first_dequeued_at))

    def test_update_refreshes_the_receipt(self):
        c = self.client
        c.put(self.queue, "old body")
        [message] = c.get(self.queue)
        stale = replace(message)
        returned = c.update(message, 120, body="new body", headers={"h": 1})
        self.assertIs(returned, message)
        self.assertNotEqual(message.pop_receipt, stale.pop_receipt)
        with self.assertRaises(ReceiptMismatch) as caught:
            c.delete(stale)
        self.assertEqual(caught.exception.sqlstate, "QU409")
        self.assertIsInstance(caught.exception.__cause__, psycopg.Error)
        c.update(message, 0)                    # released
        [again] = c.get(self.queue)
        self.assertEqual((again.body, again.headers, again.dequeue_count), ("new body", {"h": 1}, 2))
        c.delete(again)
        with self.assertRaises(MessageNotFound) as caught:
            c.delete(again)
        self.assertEqual(caught.exception.sqlstate, "QU404")

    def test_batches_report_each_message(self):
        c = self.client
        c.put_batch(self.queue, ["a", "b", "c"])
        a, b, cc = c.get(self.queue, 3)
        old_b = b.pop_receipt
        results = c.update_batch([a, b], 60)
        self.assertEqual([r.status for r in results], ["updated", "updated"])
        self.assertNotEqual(b.pop_receipt, old_b)
        cc.pop_receipt = uuid.uuid4()           # a receipt that never was
        results = c.delete_batch([a, b, cc])
        self.assertEqual([r.status for r in results], ["deleted", "deleted", "pop_receipt_mismatch"])
        self.assertEqual([r.ok for r in results], [True, True, False])
        self.assertEqual(c.delete_batch([a])[0].status, "not_found")
        other = fresh_queue("py-other")
        c.put(other, "x")
        with self.assertRaises(ValueError) as caught:       # checked by the client
            c.delete_batch([a, c.get(other)[0]])
        self.assertIsInstance(caught.exception, InvalidArgument)
        self.assertEqual(c.delete_batch([]), [])

    def test_update_batch_keeping_the_receipts(self):
        """keep_pop_receipts: the leases change, each message keeps its
        receipt, and a delete with the receipt held before works."""
        c = self.client
        c.put_batch(self.queue, ["k1", "k2", "k3"], delay=0)
        got = c.get(self.queue, 3, visibility_timeout=30)
        receipts = [m.pop_receipt for m in got]
        held = [replace(m) for m in got]
        results = c.update_batch(got, 300, keep_pop_receipts=True)
        self.assertEqual([r.status for r in results], ["updated"] * 3)
        self.assertEqual([m.pop_receipt for m in got], receipts, "the receipts stay")
        for before, after in zip(held, got):
            self.assertGreater(after.visible_at - before.visible_at, timedelta(seconds=200))
        rows = {r["message_id"]: r for r in c.inspect(self.queue)}
        self.assertEqual({rows[m.message_id]["visible_at"] for m in got}, {m.visible_at for m in got})
        c.delete(held[0])
        # once more, with the copies: still their receipts; then released
        results = c.update_batch(held[1:], 0, keep_pop_receipts=True)
        self.assertEqual([r.status for r in results], ["updated"] * 2)
        self.assertEqual([m.pop_receipt for m in held[1:]], receipts[1:])
        self.assertEqual([r.status for r in c.delete_batch(held[1:])], ["deleted"] * 2)
        self.assertEqual(c.stats(self.queue)["total"], 0)
        # without it, the message gets a new receipt and the old one is refused
        c.put(self.queue, "k4", delay=0)
        [m] = c.get(self.queue)
        old = replace(m)
        self.assertEqual(c.update_batch([m], 60)[0].status, "updated")
        self.assertNotEqual(m.pop_receipt, old.pop_receipt)
        with self.assertRaises(ReceiptMismatch):
            c.delete(old)
        c.delete(m)

    def test_the_queue_delay_holds_back_a_put_that_names_none(self):
        """alter_queue(delay=) holds back each put and put_batch that names
        no delay; a delay given, 0 too, is the put's own."""
        c = self.client
        c.alter_queue(self.queue, delay=60)
        held = c.put(self.queue, "held")
        self.assertEqual(held.visible_at - held.inserted_at, timedelta(seconds=60))
        at_once = c.put(self.queue, "at once", delay=0)
        self.assertEqual(at_once.visible_at, at_once.inserted_at)
        own = c.put(self.queue, "own", delay=timedelta(seconds=5))
        self.assertEqual(own.visible_at - own.inserted_at, timedelta(seconds=5))
        batch = c.put_batch(self.queue, ["b1", "b2"], ttl=600)
        self.assertEqual([r.visible_at - r.inserted_at for r in batch], [timedelta(seconds=60)] * 2)
        self.assertEqual([r.expires_at - r.inserted_at for r in batch], [timedelta(seconds=600)] * 2)
        [batch_at_once] = c.put_batch(self.queue, ["b3"], delay=0)
        self.assertEqual(batch_at_once.visible_at, batch_at_once.inserted_at)
        # a message of a group waits for its turn, not for the queue's delay
        grouped = c.put(self.queue, "grouped", group_id="g")
        self.assertEqual(grouped.visible_at, grouped.inserted_at)
        states = {r["body"]: r["state"] for r in c.inspect(self.queue)}
        self.assertEqual(states, {"held": "delayed", "at once": "visible", "own": "delayed", "b1": "delayed",
                                  "b2": "delayed", "b3": "visible", "grouped": "visible"})
        self.assertEqual(sorted(m.body for m in c.get(self.queue, 10)), ["at once", "b3", "grouped"])
        c.alter_queue(self.queue, delay=0)
        plain = c.put(self.queue, "plain")
        self.assertEqual(plain.visible_at, plain.inserted_at)
        [plain_batch] = c.put_batch(self.queue, ["plain batch"])
        self.assertEqual(plain_batch.visible_at, plain_batch.inserted_at)

    def test_alter_queue_settings_shown_by_list_queues(self):
        """delay, poison_queue, attributes and tags: set by alter_queue,
        shown by list_queues; attributes and tags merged in, a key set to
        None removed; a setting left out or given as None stays."""
        c = self.client
        dlq = fresh_queue("py-dlq", max_dequeue_count=None)

        def listed():
            return {q["queue"]: q for q in c.list_queues()}[self.queue]

        self.assertEqual((listed()["delay"], listed()["attributes"], listed()["tags"]), (timedelta(0), {}, {}))
        c.alter_queue(self.queue, delay=timedelta(seconds=45), poison_queue=dlq,
                      attributes={"Policy": '{"a": 1}', "kept": "yes"}, tags={"team": "billing", "env": "test"})
        row = listed()
        self.assertEqual(row["delay"], timedelta(seconds=45))
        self.assertEqual(row["poison_queue"], dlq)
        self.assertEqual(row["attributes"], {"Policy": '{"a": 1}', "kept": "yes"})
        self.assertEqual(row["tags"], {"team": "billing", "env": "test"})
        c.alter_queue(self.queue, attributes={"kept": None, "new": "1"}, tags={"env": None},
                      delay=None, poison_queue=None)
        row = listed()
        self.assertEqual(row["attributes"], {"Policy": '{"a": 1}', "new": "1"})
        self.assertEqual(row["tags"], {"team": "billing"})
        self.assertEqual((row["delay"], row["poison_queue"]), (timedelta(seconds=45), dlq))
        self.assertEqual((row["visibility_timeout"], row["max_dequeue_count"]), (timedelta(seconds=30), 5))
        # the poison queue named takes a message at its last delivery
        c.alter_queue(self.queue, max_dequeue_count=1, delay=0)
        c.put(self.queue, "poisoned")
        [m] = c.get(self.queue)
        c.update(m, 0)
        self.assertEqual([r["body"] for r in c.inspect(dlq)], ["poisoned"])
        self.assertEqual(c.stats(self.queue)["total"], 0)
        # what the server refuses: a value that is no string, a poison queue that is not there
        with self.assertRaises(InvalidArgument) as caught:
            c.alter_queue(self.queue, tags={"n": 1})
        self.assertEqual(caught.exception.sqlstate, "22023")
        with self.assertRaises(QueueNotFound):
            c.alter_queue(self.queue, poison_queue="py-no-such-queue")
        self.assertEqual(listed()["tags"], {"team": "billing"})

    def test_peek_inspect_stats_list(self):
        c = self.client
        c.put_batch(self.queue, ["first", "second"])
        peeked = c.peek(self.queue, 5)
        self.assertEqual([m.body for m in peeked], ["first", "second"])
        self.assertTrue(all(m.pop_receipt is None for m in peeked))
        with self.assertRaises(InvalidArgument) as caught:     # no receipt: NULL
            c.delete(peeked[0])
        self.assertEqual(caught.exception.sqlstate, "22004")
        c.get(self.queue)
        rows = c.inspect(self.queue)
        self.assertEqual(sorted(r["state"] for r in rows), ["in_flight", "visible"])
        self.assertTrue(all("pop_receipt" not in r for r in rows))
        stats = c.stats(self.queue)
        self.assertEqual((stats["visible"], stats["in_flight"], stats["total"]), (1, 1, 2))
        self.assertIn(self.queue, [s["queue"] for s in c.stats()])
        listed = {q["queue"]: q for q in c.list_queues()}
        self.assertEqual(listed[self.queue]["poison_queue"], self.queue + "-poison")

    def test_inspect_pages_after_message_id(self):
        c = self.client
        ids = [r.message_id for r in c.put_batch(self.queue, ["1", "2", "3", "4", "5"])]
        first = c.inspect(self.queue, 2)
        self.assertEqual([r["message_id"] for r in first], ids[:2])
        second = c.inspect(self.queue, 2, after_message_id=first[-1]["message_id"])
        self.assertEqual([r["message_id"] for r in second], ids[2:4])
        rest = c.inspect(self.queue, after_message_id=second[-1]["message_id"])
        self.assertEqual([r["message_id"] for r in rest], ids[4:])
        self.assertEqual(c.inspect(self.queue, after_message_id=ids[-1]), [])

    def test_manage_queues(self):
        c = self.client
        name = f"py-manage-{uuid.uuid4().hex[:8]}"
        c.create_queue(name, visibility_timeout=5, message_ttl=3600, max_dequeue_count=None,
                       max_message_size=1000, deduplication_window=60)
        with self.assertRaises(QueueExists) as caught:
            c.create_queue(name)
        self.assertEqual(caught.exception.sqlstate, "42710")
        listed = {q["queue"]: q for q in c.list_queues()}
        self.assertIsNone(listed[name]["poison_queue"])
        self.assertEqual(listed[name]["visibility_timeout"], timedelta(seconds=5))
        c.alter_queue(name, visibility_timeout=9)
        listed = {q["queue"]: q for q in c.list_queues()}
        self.assertEqual(listed[name]["visibility_timeout"], timedelta(seconds=9))
        self.assertEqual(listed[name]["max_message_size"], 1000)
        with self.assertRaises(TypeError) as caught:        # as an unknown keyword argument
            c.create_queue("py-x-" + name, colour="blue")
        self.assertIsInstance(caught.exception, InvalidArgument)
        self.assertNotIn("py-x-" + name, [q["queue"] for q in c.list_queues()])
        c.put_batch(name, ["a", "b"])
        self.assertEqual(c.clear(name), 2)
        c.drop_queue(name)
        with self.assertRaises(QueueNotFound) as caught:
            c.put(name, "x")
        self.assertEqual(caught.exception.sqlstate, "42704")

    def test_redrive_brings_poison_back(self):
        c = self.client
        queue = fresh_queue("py-redrive", max_dequeue_count=1)
        c.put(queue, "bad")
        [m] = c.get(queue, visibility_timeout=60)
        c.update(m, 0)
        self.assertEqual(c.get(queue), [])      # the second claim moves it to poison
        self.assertEqual(c.stats(queue + "-poison")["visible"], 1)
        self.assertEqual(c.redrive(queue + "-poison"), 1)
        [back] = c.get(queue)
        self.assertEqual((back.body, back.dequeue_count), ("bad", 1))

    def test_release_follows_the_retry_policy(self):
        c = self.client
        queue = fresh_queue("py-release", max_dequeue_count=2, retry_delay=60)
        self.assertEqual({k: v for k, v in {q['queue']: q for q in c.list_queues()}[queue].items()
                          if k.startswith("retry")},
                         {"retry_delay": timedelta(seconds=60), "retry_backoff": False,
                          "retry_delay_max": None})
        c.alter_queue(queue, retry_delay=30, retry_backoff=True, retry_delay_max=100)
        c.put_batch(queue, ["a", "b"])
        first, second = c.get(queue, 2)
        old = replace(first)
        c.release(first)
        self.assertNotEqual(first.pop_receipt, old.pop_receipt)
        self.assertGreater(first.visible_at, datetime.now(timezone.utc) + timedelta(seconds=20))
        with self.assertRaises(ReceiptMismatch):
            c.release(old)
        [result] = c.release_batch([second])
        self.assertEqual((result.status, result.ok), ("released", True))
        self.assertEqual(c.get(queue), [], "both wait out their retry delay")
        c.update_batch([first, second], 0)
        again = c.get(queue, 2)
        self.assertEqual([m.dequeue_count for m in again], [2, 2])
        results = c.release_batch(again)
        self.assertEqual([r.status for r in results], ["poisoned", "poisoned"])
        self.assertEqual([m.pop_receipt for m in again], [None, None])
        self.assertEqual(c.stats(queue + "-poison")["visible"], 2)

    def test_pause_and_resume(self):
        c = self.client
        c.put(self.queue, "held back")
        c.pause(self.queue)
        self.assertTrue({q['queue']: q for q in c.list_queues()}[self.queue]["paused"])
        self.assertEqual(c.get(self.queue, wait=0.2), [])
        self.assertEqual([m.body for m in c.peek(self.queue)], ["held back"])
        c.resume(self.queue)
        self.assertFalse({q['queue']: q for q in c.list_queues()}[self.queue]["paused"])
        self.assertEqual([m.body for m in c.get(self.queue)], ["held back"])

    def test_errors_come_as_types(self):
        c = self.client
        with self.assertRaises(InvalidArgument) as caught:
            c.put(self.queue, "x", priority=1000)
        self.assertEqual(caught.exception.sqlstate, "22023")
        # the server's 22023 is no TypeError or ValueError: only the client's own checks are
        self.assertNotIsInstance(caught.exception, (TypeError, ValueError))
        self.assertIsInstance(caught.exception.__cause__, psycopg.Error)
        with self.assertRaises(InvalidArgument) as caught:
            c.get(self.queue, max_messages=0)
        self.assertNotIsInstance(caught.exception, (TypeError, ValueError))
        with self.assertRaises(TypeError):
            c.put(self.queue, "x", delay="soon")
        small = fresh_queue("py-small", max_message_size=100)
        with self.assertRaises(MessageTooLarge) as caught:
            c.put(small, "x" * 200)
        self.assertEqual(caught.exception.sqlstate, "54000")
        self.assertTrue(issubclass(MessageTooLarge, QueueError))

    def test_permission_denied(self):
        role = f"py_nobody_{uuid.uuid4().hex[:6]}"
        sql(f'CREATE ROLE "{role}" LOGIN')
        sql(f'GRANT USAGE ON SCHEMA queue TO "{role}"')
        with Client(dsn(user=role)) as stranger:
            with self.assertRaises(PermissionDenied) as caught:
                stranger.put(self.queue, "x")
            self.assertEqual(caught.exception.sqlstate, "42501")
            self.client.put(self.queue, "y")
            with self.assertRaises(PermissionDenied):
                stranger.get(self.queue)

    def test_client_on_a_connection_joins_its_transaction(self):
        conn = psycopg.connect(DSN)             # not autocommit: a transaction
        client = Client(conn)
        client.put(self.queue, "rolled back")
        conn.rollback()
        client.put(self.queue, "committed")
        conn.commit()
        self.assertEqual([m.body for m in self.client.peek(self.queue, 5)], ["committed"])
        client.close()                          # not ours: stays open
        self.assertFalse(conn.closed)
        conn.close()

    def test_psycopg2_connection(self):
        import psycopg2
        conn = psycopg2.connect(DSN)
        conn.autocommit = True
        client = Client(conn)
        client.put(self.queue, "via psycopg2", headers={"k": "v"})
        [m] = client.get(self.queue)
        self.assertIsInstance(m.pop_receipt, uuid.UUID)
        self.assertEqual(m.headers, {"k": "v"})
        client.update(m, 30)
        with self.assertRaises(ReceiptMismatch):
            client.delete(replace(m, pop_receipt=uuid.uuid4()))
        client.delete(m)
        self.assertEqual(client.stats(self.queue)["total"], 0)
        conn.close()

    def test_reconnects_after_the_session_ends(self):
        client = Client(dsn(application_name="py-reconnect"))
        client.put(self.queue, "before")
        self.assertEqual(terminate("py-reconnect"), 1)
        with self.assertRaises(psycopg.OperationalError):
            client.put(self.queue, "lost")       # the call that meets the cut
        client.put(self.queue, "after")          # the next one connects again
        self.assertEqual(sorted(m.body for m in self.client.peek(self.queue, 5)), ["after", "before"])
        client.close()

    def test_database_without_the_extension(self):
        name = f"py_empty_{uuid.uuid4().hex[:6]}"
        sql(f'CREATE DATABASE "{name}"')
        try:
            other = DSN.rsplit("/", 1)[0] + "/" + name
            with Client(other) as client:
                with self.assertRaises(QueueError) as caught:
                    client.put("anything", "x")
                self.assertEqual(caught.exception.sqlstate, "55000")
        finally:
            sql(f'DROP DATABASE "{name}"')


class DeleteAndGetTest(unittest.TestCase):
    def test_delete_and_get(self):
        queue = fresh_queue("py-delete-and-get")
        with Client(DSN) as c:
            c.put_batch(queue, ["a", "b", "c", "d"])
            first = c.delete_and_get(queue, [], 2, visibility_timeout=60)
            self.assertEqual(first.deleted, [])
            self.assertEqual([m.body for m in first.messages], ["a", "b"])
            forged = replace(first.messages[1], pop_receipt=uuid.uuid4())
            nxt = c.delete_and_get(queue, [first.messages[0], forged], 5)
            self.assertEqual([(r.message_id, r.status) for r in nxt.deleted],
                             [(first.messages[0].message_id, "deleted"),
                              (first.messages[1].message_id, "pop_receipt_mismatch")])
            self.assertEqual([(m.body, m.dequeue_count) for m in nxt.messages], [("c", 1), ("d", 1)])
            # with messages to delete it does not wait
            started = time.monotonic()
            last = c.delete_and_get(queue, nxt.messages, wait=5)
            self.assertLess(time.monotonic() - started, 2)
            self.assertEqual([r.status for r in last.deleted], ["deleted", "deleted"])
            self.assertEqual(last.messages, [])
            self.assertEqual(c.stats(queue)["deletes"], 3)
            # each entry answered in its place: the same message twice
            c.put(queue, "e")
            [e] = c.delete_and_get(queue, [], 1).messages
            twice = c.delete_and_get(queue, [e, e])
            self.assertEqual([(r.message_id, r.status) for r in twice.deleted],
                             [(e.message_id, "deleted"), (e.message_id, "not_found")])
            with self.assertRaises(ArgumentValueError):
                c.delete_and_get(fresh_queue("py-delete-and-get-other"), nxt.messages)
            with self.assertRaises(InvalidArgument) as caught:
                c.delete_and_get(queue, [], 0)
            self.assertEqual(caught.exception.sqlstate, "22023")


class RetentionTest(unittest.TestCase):
    """Extension 1.9: a queue with a retention keeps the messages its
    consumers deleted, shown by inspect as deleted, and replay puts them
    back; a queue without one keeps nothing."""

    def setUp(self):
        self.client = Client(DSN)
        self.queue = fresh_queue("py-retention", retention=timedelta(hours=1))

    def tearDown(self):
        self.client.close()

    def listed(self, queue):
        return {q["queue"]: q for q in self.client.list_queues()}[queue]

    def states(self, queue):
        """(message_id, state, whether deleted_at is set) of each message, in id order."""
        return [(r["message_id"], r["state"], r["deleted_at"] is not None) for r in self.client.inspect(queue)]

    def test_a_deleted_message_is_kept_and_replayed_by_id(self):
        c = self.client
        self.assertEqual(self.listed(self.queue)["retention"], timedelta(hours=1))
        kept, live = c.put_batch(self.queue, ["kept", "live"], headers=[{"h": 1}, None])
        [got] = c.get(self.queue)
        self.assertEqual(got.message_id, kept.message_id)
        c.delete(got)
        rows = c.inspect(self.queue)
        self.assertEqual(self.states(self.queue),
                         [(kept.message_id, "deleted", True), (live.message_id, "visible", False)])
        self.assertEqual((rows[0]["body"], rows[0]["headers"]), ("kept", {"h": 1}))
        # never handed out, peeked or counted
        self.assertEqual([m.body for m in c.peek(self.queue, 10)], ["live"])
        self.assertEqual(c.stats(self.queue)["total"], 1)
        [other] = c.get(self.queue, 10)
        self.assertEqual(other.body, "live")
        self.assertEqual(c.get(self.queue, 10), [])

        self.assertEqual(c.replay(self.queue, message_ids=[kept.message_id]), 1)
        self.assertEqual(self.states(self.queue)[0], (kept.message_id, "visible", False))
        self.assertEqual(c.replay(self.queue, message_ids=[kept.message_id]), 0, "no longer kept")
        [back] = c.get(self.queue)
        self.assertEqual((back.message_id, back.body, back.headers, back.dequeue_count),
                         (kept.message_id, "kept", {"h": 1}, 1))
        self.assertIsNotNone(back.expires_at, "a new expiry from the queue's message_ttl")

    def test_replay_by_time_range_oldest_deletion_first(self):
        """since is inclusive, until exclusive; max_messages takes the
        oldest deletions; delete_batch and delete_and_get keep too."""
        c = self.client
        receipts = c.put_batch(self.queue, ["a", "b", "c", "d"])
        a, b, cc, d = c.get(self.queue, 4)
        c.delete(a)
        c.delete_batch([b])
        c.delete(cc)
        self.assertEqual(c.delete_and_get(self.queue, [d]).deleted[0].status, "deleted")
        deleted_at = {r["body"]: r["deleted_at"] for r in c.inspect(self.queue)}
        self.assertEqual([s for _, s, _ in self.states(self.queue)], ["deleted"] * 4)
        self.assertLess(deleted_at["a"], deleted_at["b"])
        self.assertLess(deleted_at["b"], deleted_at["c"])
        self.assertEqual(c.stats(self.queue)["total"], 0)

        self.assertEqual(c.replay(self.queue, since=deleted_at["b"], until=deleted_at["c"]), 1)
        self.assertEqual([m.body for m in c.peek(self.queue, 10)], ["b"])
        self.assertEqual(c.replay(self.queue, since=deleted_at["a"], max_messages=1), 1)
        self.assertEqual(sorted(m.body for m in c.peek(self.queue, 10)), ["a", "b"])
        self.assertEqual(c.replay(self.queue, until=deleted_at["a"]), 0, "nothing deleted before a")
        self.assertEqual(c.replay(self.queue), 2)
        got = sorted(c.get(self.queue, 10), key=lambda m: m.message_id)
        self.assertEqual([(m.message_id, m.dequeue_count) for m in got],
                         [(r.message_id, 1) for r in receipts], "the same ids, handed out anew")

    def test_a_queue_without_retention_keeps_nothing(self):
        c = self.client
        plain = fresh_queue("py-no-retention")
        self.assertIsNone(self.listed(plain)["retention"])
        c.put(plain, "gone")
        [m] = c.get(plain)
        c.delete(m)
        self.assertEqual(c.inspect(plain), [])
        self.assertEqual(c.replay(plain), 0)
        self.assertEqual(c.replay(plain, message_ids=[m.message_id]), 0)
        self.assertEqual(c.get(plain), [])
        zero = fresh_queue("py-zero-retention", retention=0)
        self.assertIsNone(self.listed(zero)["retention"], "0: not kept")

    def test_alter_sets_and_stops_the_retention(self):
        c = self.client
        plain = fresh_queue("py-alter-retention")
        c.alter_queue(plain, retention=90)
        self.assertEqual(self.listed(plain)["retention"], timedelta(seconds=90))
        c.alter_queue(plain, visibility_timeout=10, retention=None)
        self.assertEqual(self.listed(plain)["retention"], timedelta(seconds=90), "None leaves it")
        c.put(plain, "x")
        c.delete(c.get(plain)[0])
        self.assertEqual([s for _, s, _ in self.states(plain)], ["deleted"])
        # 0 keeps no more; the background worker removes what was kept
        c.alter_queue(plain, retention=0)
        self.assertIsNone(self.listed(plain)["retention"])
        self.assertTrue(wait_for(lambda: c.inspect(plain) == [], timeout=30), c.inspect(plain))
        self.assertEqual(c.replay(plain), 0)

    def test_what_replay_and_the_retention_refuse(self):
        c = self.client
        now = datetime.now(timezone.utc)
        for call in (lambda: c.replay(self.queue, max_messages=0),
                     lambda: c.replay(self.queue, since=now, until=now),
                     lambda: c.replay(self.queue, since=now, until=now - timedelta(seconds=1)),
                     lambda: c.alter_queue(self.queue, retention=timedelta(days=366)),
                     lambda: c.alter_queue(self.queue, retention=-1),
                     lambda: c.create_queue(f"py-retention-x-{uuid.uuid4().hex[:8]}", retention=timedelta(days=366))):
            with self.assertRaises(InvalidArgument) as caught:
                call()
            self.assertEqual(caught.exception.sqlstate, "22023")
        c.alter_queue(self.queue, retention=timedelta(days=365))
        self.assertEqual(self.listed(self.queue)["retention"], timedelta(days=365), "at most 365 days")
        with self.assertRaises(QueueNotFound) as caught:
            c.replay("py-no-such-queue")
        self.assertEqual(caught.exception.sqlstate, "42704")
        with self.assertRaises(ArgumentTypeError):      # checked by the client
            c.replay(self.queue, since="yesterday")
        # replay needs manage: send, process and read are not enough
        role = f"py_replayer_{uuid.uuid4().hex[:6]}"
        sql(f'CREATE ROLE "{role}" LOGIN')
        try:
            sql(f'GRANT USAGE ON SCHEMA queue TO "{role}"')
            for permission in ("send", "process", "read"):
                sql("SELECT queue.queue_grant(%s, %s, %s)", (self.queue, role, permission))
            with Client(dsn(user=role)) as worker:
                worker.put(self.queue, "y")
                with self.assertRaises(PermissionDenied) as caught:
                    worker.replay(self.queue)
                self.assertEqual(caught.exception.sqlstate, "42501")
        finally:
            sql(f'DROP OWNED BY "{role}"')
            sql(f'DROP ROLE "{role}"')


def fresh_name(prefix):
    """A unique name for a topic or a schedule (topics share the queues' names)."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class TopicsTest(unittest.TestCase):
    """Extension 1.10: a publish puts a message into every queue subscribed
    to the topic whose filter its headers match."""

    def setUp(self):
        self.client = Client(DSN)
        self.topic = fresh_name("py-topic")
        self.client.create_topic(self.topic)
        # named so that their order by name is billing, eu, us
        self.billing = fresh_queue("py-t1-billing")
        self.eu = fresh_queue("py-t2-eu")
        self.us = fresh_queue("py-t3-us", max_message_size=100)
        self.client.subscribe(self.topic, self.billing)
        self.client.subscribe(self.topic, self.eu, {"region": [{"prefix": "eu-"}], "total": [{"numeric": [">", 0]}]})
        self.client.subscribe(self.topic, self.us, filter={"region": ["us-east"]})

    def tearDown(self):
        self.client.close()

    def subscriptions(self, topic=None):
        """(queue, filter) of each row of topics() for the topic."""
        return [(r["queue"], r["filter"]) for r in self.client.topics() if r["topic"] == (topic or self.topic)]

    def bodies(self, queue):
        return [m.body for m in self.client.peek(queue, 10)]

    def test_publish_reaches_the_queues_whose_filter_matches(self):
        c = self.client
        self.assertEqual(self.subscriptions(), [
            (self.billing, None),
            (self.eu, {"region": [{"prefix": "eu-"}], "total": [{"numeric": [">", 0]}]}),
            (self.us, {"region": ["us-east"]}),
        ])
        published = c.publish(self.topic, {"id": 42}, headers={"region": "eu-west", "total": 120})
        self.assertEqual([p.queue for p in published], [self.billing, self.eu], "us-east only: not us")
        self.assertTrue(all(isinstance(p, Published) and isinstance(p.message_id, int) for p in published))
        for p in published:
            [message] = c.peek(p.queue)
            self.assertEqual((message.message_id, message.body, message.headers),
                             (p.message_id, '{"id": 42}', {"region": "eu-west", "total": 120}))
        self.assertEqual(c.peek(self.us), [])
        # headers the filters do not match: the queue without a filter only
        self.assertEqual([p.queue for p in c.publish(self.topic, "ap", headers={"region": "ap-south", "total": 5})],
                         [self.billing])
        self.assertEqual([p.queue for p in c.publish(self.topic, "us", headers={"region": "us-east"})],
                         [self.billing, self.us])
        # no headers: the filter of eu needs them; a topic no queue matches gives no rows
        self.assertEqual([p.queue for p in c.publish(self.topic, "bare")], [self.billing])
        self.assertEqual(self.bodies(self.billing), ['{"id": 42}', "ap", "us", "bare"])
        self.assertEqual(self.bodies(self.eu), ['{"id": 42}'])
        self.assertEqual(self.bodies(self.us), ["us"])

    def test_publish_puts_as_a_put_would(self):
        """delay, ttl, group, priority and deduplication reach every queue."""
        c = self.client
        c.alter_queue(self.eu, delay=30)
        headers = {"region": "eu-central", "total": 1}
        # no delay given: each queue's own (30 s for eu, none for billing)
        plain = {p.queue: p.message_id for p in c.publish(self.topic, "plain", headers=headers, ttl=-1)}
        rows = {r["message_id"]: r for q in (self.billing, self.eu) for r in c.inspect(q)}
        self.assertEqual((rows[plain[self.billing]]["state"], rows[plain[self.eu]]["state"]), ("visible", "delayed"))
        self.assertEqual([rows[plain[q]]["expires_at"] for q in (self.billing, self.eu)], [None, None])
        published = c.publish(self.topic, "later", headers=headers, delay=timedelta(seconds=60), ttl=120,
                              deduplication_id="once", priority=5)
        self.assertEqual([p.queue for p in published], [self.billing, self.eu])
        for p in published:
            [row] = [r for r in c.inspect(p.queue) if r["message_id"] == p.message_id]
            self.assertEqual((row["state"], row["priority"]), ("delayed", 5))
            self.assertEqual(row["visible_at"] - row["inserted_at"], timedelta(seconds=60))
            self.assertEqual(row["expires_at"] - row["inserted_at"], timedelta(seconds=120))
        again = c.publish(self.topic, "later again", headers=headers, deduplication_id="once")
        self.assertEqual(again, published, "each queue gives the message it stored")
        self.assertEqual(self.bodies(self.eu), [], "nothing visible in eu: its delay, and the publish's")
        # a group's message is never delayed: delay 0, in every queue's group
        grouped = c.publish(self.topic, "grouped", headers=headers, delay=0, group_id="g")
        self.assertEqual([p.queue for p in grouped], [self.billing, self.eu])
        for p in grouped:
            [row] = [r for r in c.inspect(p.queue) if r["message_id"] == p.message_id]
            self.assertEqual((row["state"], row["group_id"]), ("visible", "g"))

    def test_publish_rolls_back_with_the_transaction(self):
        conn = psycopg.connect(DSN)             # not autocommit: a transaction
        try:
            client = Client(conn)
            headers = {"region": "eu-west", "total": 10}
            self.assertEqual(len(client.publish(self.topic, "rolled back", headers=headers)), 2)
            self.assertEqual(client.stats(self.eu)["total"], 1, "seen inside the transaction")
            conn.rollback()
            self.assertEqual((self.bodies(self.billing), self.bodies(self.eu)), ([], []))
            client.publish(self.topic, "committed", headers=headers)
            conn.commit()
            self.assertEqual((self.bodies(self.billing), self.bodies(self.eu)), (["committed"], ["committed"]))
        finally:
            conn.close()

    def test_subscribe_again_unsubscribe_and_drop(self):
        c = self.client
        c.subscribe(self.topic, self.us, {"region": ["eu-west"]})      # replaces its filter
        self.assertEqual(self.subscriptions()[2], (self.us, {"region": ["eu-west"]}))
        c.unsubscribe(self.topic, self.eu)
        c.unsubscribe(self.topic, self.eu)                              # none left: no error
        self.assertEqual([q for q, _ in self.subscriptions()], [self.billing, self.us])
        self.assertEqual([p.queue for p in c.publish(self.topic, "x", headers={"region": "eu-west", "total": 1})],
                         [self.billing, self.us])
        # a topic without subscriptions: one row, queue None; a publish puts nothing
        quiet = fresh_name("py-quiet")
        c.create_topic(quiet)
        self.assertEqual(self.subscriptions(quiet), [(None, None)])
        self.assertEqual(c.publish(quiet, "nobody listens"), [])
        # a dropped queue is no longer subscribed
        c.drop_queue(self.us)
        self.assertEqual([q for q, _ in self.subscriptions()], [self.billing])
        # dropping the topic keeps the queues and their messages
        c.drop_topic(self.topic)
        self.assertNotIn(self.topic, [r["topic"] for r in c.topics()])
        self.assertEqual(self.bodies(self.billing), ["x"])
        with self.assertRaises(QueueNotFound) as caught:
            c.publish(self.topic, "x")
        self.assertEqual(caught.exception.sqlstate, "42704")
        c.drop_topic(quiet)

    def test_what_the_topics_refuse(self):
        c = self.client
        kept = {"region": ["us-east"]}
        for bad in ({"region": "us-east"}, {"region": []}, {"region": [{"suffix": "-east"}]}, {},
                    {"total": [{"numeric": ["<", 5, ">", 1]}]}):
            with self.assertRaises(InvalidArgument) as caught:
                c.subscribe(self.topic, self.us, bad)
            self.assertEqual(caught.exception.sqlstate, "22023", bad)
            self.assertIsInstance(caught.exception.__cause__, psycopg.Error)
        self.assertEqual(self.subscriptions()[2], (self.us, kept), "a refused filter leaves the subscription")
        # one namespace for queues and topics
        for call in (lambda: c.create_topic(self.topic), lambda: c.create_topic(self.billing),
                     lambda: c.create_queue(self.topic)):
            with self.assertRaises(QueueExists) as caught:
                call()
            self.assertEqual(caught.exception.sqlstate, "42710")
        for call in (lambda: c.publish("py-no-such-topic", "x"), lambda: c.subscribe("py-no-such-topic", self.eu),
                     lambda: c.subscribe(self.topic, "py-no-such-queue"), lambda: c.drop_topic("py-no-such-topic")):
            with self.assertRaises(QueueNotFound) as caught:
                call()
            self.assertEqual(caught.exception.sqlstate, "42704")
        with self.assertRaises(InvalidArgument) as caught:
            c.publish(self.topic, "x", priority=1000)
        self.assertEqual(caught.exception.sqlstate, "22023")
        with self.assertRaises(TypeError):                              # checked by the client
            c.publish(self.topic, "x", delay="soon")
        # a body too large for one queue (us: 100 bytes) fails the whole publish
        with self.assertRaises(MessageTooLarge) as caught:
            c.publish(self.topic, "x" * 200, headers={"region": "us-east"})
        self.assertEqual(caught.exception.sqlstate, "54000")
        self.assertEqual(self.bodies(self.billing), [], "nothing put into billing either")

    def test_send_on_the_topic_reaches_its_queues(self):
        """A role granted send on the topic publishes into queues it holds
        nothing on, and sees the topic; a role without it may do neither."""
        role = fresh_name("py_publisher").replace("-", "_")
        sql(f'CREATE ROLE "{role}" LOGIN')
        try:
            sql(f'GRANT USAGE ON SCHEMA queue TO "{role}"')
            with Client(dsn(user=role)) as publisher:
                with self.assertRaises(PermissionDenied) as caught:
                    publisher.publish(self.topic, "x")
                self.assertEqual(caught.exception.sqlstate, "42501")
                self.assertEqual(publisher.topics(), [])
                sql("SELECT queue.queue_grant(%s, %s, 'send')", (self.topic, role))
                self.assertEqual([p.queue for p in publisher.publish(self.topic, "granted")], [self.billing])
                self.assertEqual({r["topic"] for r in publisher.topics()}, {self.topic})
                with self.assertRaises(PermissionDenied):               # subscribing needs manage
                    publisher.subscribe(self.topic, self.eu)
            self.assertEqual(self.bodies(self.billing), ["granted"])
        finally:
            sql(f'DROP OWNED BY "{role}"')
            sql(f'DROP ROLE "{role}"')


class SchedulesTest(unittest.TestCase):
    """Extension 1.10: a schedule puts a message into a queue each time its
    cron expression is due; the background worker puts it."""

    def setUp(self):
        self.client = Client(DSN)
        self.queue = fresh_queue("py-schedules")
        self.name = fresh_name("py-schedule")

    def tearDown(self):
        self.client.close()

    def listed(self):
        return {r["schedule"]: r for r in self.client.schedules()}

    def test_schedules_list_with_the_next_due_time_of_cron_next(self):
        c = self.client
        c.schedule(self.name, self.queue, "30 2 * * *", {"report": "daily"}, headers={"kind": "report"},
                   time_zone="Europe/Paris")
        now = datetime.now(timezone.utc)
        row = self.listed()[self.name]
        self.assertEqual((row["queue"], row["cron"], row["time_zone"], row["last_at"]),
                         (self.queue, "30 2 * * *", "Europe/Paris", None))
        self.assertEqual(row["next_at"], c.cron_next("30 2 * * *", now, "Europe/Paris"))
        self.assertGreater(row["next_at"], now)
        self.assertLessEqual(row["next_at"] - now, timedelta(hours=25))
        # scheduling the name again replaces it; the time zone is UTC by default
        c.schedule(self.name, self.queue, "@hourly", "tick")
        now = datetime.now(timezone.utc)
        row = self.listed()[self.name]
        self.assertEqual((row["cron"], row["time_zone"]), ("@hourly", "UTC"))
        self.assertEqual(row["next_at"], c.cron_next("@hourly", now))
        on_the_hour = row["next_at"].astimezone(timezone.utc)
        self.assertEqual((on_the_hour.minute, on_the_hour.second, on_the_hour.microsecond), (0, 0, 0))
        self.assertEqual(c.peek(self.queue), [], "nothing put before it is due")
        c.unschedule(self.name)
        self.assertNotIn(self.name, self.listed())
        with self.assertRaises(QueueNotFound) as caught:
            c.unschedule(self.name)
        self.assertEqual(caught.exception.sqlstate, "42704")

    def test_cron_next(self):
        c = self.client
        utc = timezone.utc
        self.assertEqual(c.cron_next("0 * * * *", datetime(2026, 11, 27, 10, 0, tzinfo=utc)),
                         datetime(2026, 11, 27, 11, 0, tzinfo=utc), "strictly after")
        self.assertEqual(c.cron_next("0 9 * * *", datetime(2026, 11, 27, tzinfo=utc), "Asia/Tokyo"),
                         datetime(2026, 11, 28, 0, 0, tzinfo=utc))
        # the clock set forward in Paris (29 March 2026): 02:30 never happens, due at 03:00 CEST
        self.assertEqual(c.cron_next("30 2 * * *", datetime(2026, 3, 28, 12, tzinfo=utc), "Europe/Paris"),
                         datetime(2026, 3, 29, 1, 0, tzinfo=utc))
        # the clock set back in New York (1 November 2026): 01:30 is due the first time only
        self.assertEqual(c.cron_next("30 1 * * *", datetime(2026, 10, 31, 16, tzinfo=utc), "America/New_York"),
                         datetime(2026, 11, 1, 5, 30, tzinfo=utc))
        self.assertEqual(c.cron_next("30 1 * * *", datetime(2026, 11, 1, 5, 30, tzinfo=utc), "America/New_York"),
                         datetime(2026, 11, 2, 6, 30, tzinfo=utc))
        with self.assertRaises(ArgumentTypeError):                      # checked by the client
            c.cron_next("* * * * *", "now")

    def test_a_due_schedule_puts_its_message(self):
        """The background worker puts the message of a schedule whose due
        time has come, with the schedule's name and due time in its
        headers, and moves next_at on; last_at is the due time it served."""
        c = self.client
        c.schedule(self.name, self.queue, "0 0 1 1 *", "happy new year", headers={"kind": "greeting"})
        due = sql("SELECT date_trunc('minute', now()) - interval '1 hour'")[0][0]
        sql("UPDATE queue_storage.schedules SET next_at = %s WHERE schedule = %s", (due, self.name))
        self.assertTrue(wait_for(lambda: c.peek(self.queue) != [], timeout=30), "no message put")
        [message] = c.peek(self.queue, 10)
        self.assertEqual(message.body, "happy new year")
        self.assertEqual({k: v for k, v in message.headers.items() if k != "scheduled_for"},
                         {"kind": "greeting", "schedule": self.name})
        self.assertEqual(sql("SELECT %s::timestamptz", (message.headers["scheduled_for"],))[0][0], due)
        row = self.listed()[self.name]
        self.assertEqual(row["last_at"], due)
        self.assertEqual(row["next_at"], c.cron_next("0 0 1 1 *", datetime.now(timezone.utc)))
        # dropping the queue takes its schedules
        c.drop_queue(self.queue)
        self.assertNotIn(self.name, self.listed())

    def test_what_the_schedules_refuse(self):
        c = self.client
        now = datetime.now(timezone.utc)
        for cron, zone in (("* * * *", "UTC"), ("60 * * * *", "UTC"), ("0 0 30 2 *", "UTC"),
                           ("@reboot", "UTC"), ("* * * * *", "Mars/Olympus_Mons")):
            for call in (lambda: c.schedule(self.name, self.queue, cron, "x", time_zone=zone),
                         lambda: c.cron_next(cron, now, zone)):
                with self.assertRaises(InvalidArgument) as caught:
                    call()
                self.assertEqual(caught.exception.sqlstate, "22023", (cron, zone))
                self.assertIsInstance(caught.exception.__cause__, psycopg.Error)
        with self.assertRaises(InvalidArgument) as caught:
            c.schedule("no spaces allowed", self.queue, "* * * * *", "x")
        self.assertEqual(caught.exception.sqlstate, "22023")
        with self.assertRaises(QueueNotFound) as caught:
            c.schedule(self.name, "py-no-such-queue", "* * * * *", "x")
        self.assertEqual(caught.exception.sqlstate, "42704")
        small = fresh_queue("py-schedules-small", max_message_size=100)
        with self.assertRaises(MessageTooLarge) as caught:
            c.schedule(self.name, small, "* * * * *", "x" * 200)
        self.assertEqual(caught.exception.sqlstate, "54000")
        self.assertNotIn(self.name, self.listed(), "nothing scheduled")


class PreparedTest(unittest.TestCase):
    def test_statements_are_prepared_and_prepared_again_when_lost(self):
        queue = fresh_queue("py-prepared")
        with Client(DSN) as c:
            c.put(queue, "a")
            c.get(queue)
            conn = c._conn
            statements = [row[0] for row in conn.execute(
                "SELECT statement FROM pg_prepared_statements").fetchall()]
            self.assertEqual(len(statements), 2, statements)
            self.assertTrue(any("queue_put(" in t for t in statements) and
                            any("queue_get(" in t for t in statements), statements)
            # the session loses them: the client prepares them again and goes on
            conn.execute("DEALLOCATE ALL")
            c.put(queue, "b")
            self.assertIs(c._conn, conn)
            self.assertEqual(c.stats(queue)["total"], 2)
        # on a connection of the caller's in a transaction, the error is the caller's
        with psycopg.connect(DSN) as conn:
            c = Client(conn)
            c.put(queue, "c")
            conn.commit()
            conn.execute("DEALLOCATE ALL")
            with self.assertRaises(QueueError) as caught:
                c.put(queue, "never")
            self.assertEqual(caught.exception.sqlstate, "26000")
            conn.rollback()
            c.put(queue, "d")
            conn.commit()
            self.assertEqual([m.body for m in c.peek(queue, 10)], ["b", "c", "d"])   # a is leased


class ArgumentErrorTest(unittest.TestCase):
    """What the client checks itself raises TypeError or ValueError, never
    calls the server, and is still an InvalidArgument with 22023."""

    def setUp(self):
        self.queue = fresh_queue("py-arguments")
        self.client = Client(DSN)

    def tearDown(self):
        self.client.close()

    def assert_client_side(self, python_type, own_type, call):
        with self.assertRaises(python_type) as caught:
            call()
        error = caught.exception
        self.assertIs(type(error), own_type)
        self.assertIsInstance(error, InvalidArgument)
        self.assertIsInstance(error, QueueError)
        self.assertEqual(error.sqlstate, "22023")
        self.assertIsNone(error.__cause__)
        return error

    def test_a_wrong_type_is_a_type_error(self):
        c = self.client
        for duration in ("soon", True, [1], b"1"):
            self.assert_client_side(TypeError, ArgumentTypeError, lambda: c.put(self.queue, "x", delay=duration))
        self.assert_client_side(TypeError, ArgumentTypeError, lambda: c.get(self.queue, visibility_timeout="30"))
        self.assert_client_side(TypeError, ArgumentTypeError, lambda: Client(42))
        self.assert_client_side(TypeError, ArgumentTypeError, lambda: Client(None))
        error = self.assert_client_side(TypeError, ArgumentTypeError,
                                        lambda: c.alter_queue(self.queue, colour="blue", size=1))
        self.assertIn("colour, size", str(error))
        self.assertEqual(c.stats(self.queue)["total"], 0, "no put was made")

    def test_create_queue_refuses_the_settings_of_alter_queue(self):
        c = self.client
        name = f"py-create-{uuid.uuid4().hex[:8]}"
        for settings in ({"delay": 5}, {"poison_queue": self.queue}, {"attributes": {"a": "1"}},
                         {"tags": {"t": "1"}}, {"visibility_timeout": 5, "delay": 0, "tags": None}):
            error = self.assert_client_side(TypeError, ArgumentTypeError,
                                            lambda: c.create_queue(name, **settings))
            self.assertIn("alter_queue", str(error))
        self.assertIn("delay, tags", str(error))
        self.assertNotIn(name, [q["queue"] for q in c.list_queues()], "no queue was made")

    def test_a_bad_value_is_a_value_error(self):
        c = self.client
        c.put(self.queue, "x")
        [m] = c.get(self.queue)
        other = Message("py-elsewhere", m.message_id, m.body, None, 1, m.inserted_at, None,
                        m.visible_at, m.pop_receipt, None, 0)
        self.assert_client_side(ValueError, ArgumentValueError, lambda: c.delete_batch([m, other]))
        self.assert_client_side(ValueError, ArgumentValueError, lambda: c.update_batch([m, other], 0))
        self.assertEqual(c.stats(self.queue)["in_flight"], 1, "neither batch reached the server")
        with psycopg.connect(DSN, autocommit=True) as conn:
            self.assert_client_side(ValueError, ArgumentValueError, lambda: Client(conn).copy())

    def test_server_side_errors_keep_their_sqlstate_types(self):
        """Bad values the server checks (a priority out of range, a negative
        delay, a missing receipt) stay InvalidArgument alone."""
        c = self.client
        c.put(self.queue, "to peek")
        [peeked] = c.peek(self.queue)
        for call, sqlstate in ((lambda: c.put(self.queue, "x", priority=1000), "22023"),
                               (lambda: c.put(self.queue, "x", delay=-1), "22023"),
                               (lambda: c.delete(peeked), "22004")):
            with self.assertRaises(InvalidArgument) as caught:
                call()
            self.assertIs(type(caught.exception), InvalidArgument)
            self.assertEqual(caught.exception.sqlstate, sqlstate)
            self.assertIsInstance(caught.exception.__cause__, psycopg.Error)


class OlderExtensionTest(unittest.TestCase):
    """The client on a database whose extension is still at 1.5: a call
    that names no setting of 1.6 sends a statement 1.5 has."""

    def test_extension_1_5(self):
        database = f"py_old_{uuid.uuid4().hex[:6]}"
        sql(f'CREATE DATABASE "{database}"')
        try:
            other = DSN.rsplit("/", 1)[0] + "/" + database
            with psycopg.connect(other, autocommit=True) as conn:
                conn.execute("CREATE SCHEMA queue")
                conn.execute("CREATE EXTENSION queue VERSION '1.5' SCHEMA queue")
            with Client(other) as c:
                c.create_queue("old", visibility_timeout=30)
                one = c.put("old", "one")
                self.assertEqual(one.visible_at, one.inserted_at)
                later = c.put("old", "later", delay=60, ttl=120)
                self.assertEqual(later.visible_at - later.inserted_at, timedelta(seconds=60))
                batch = c.put_batch("old", ["two", "three"], ttl=600)
                self.assertEqual([r.visible_at for r in batch], [r.inserted_at for r in batch])
                c.put_batch("old", ["later too"], delay=60)
                got = c.get("old", 10)
                self.assertEqual(sorted(m.body for m in got), ["one", "three", "two"])
                self.assertEqual([m.first_dequeued_at for m in got], [None] * 3, "not kept before 1.6")
                receipts = [m.pop_receipt for m in got]
                self.assertEqual([r.status for r in c.update_batch(got, 60)], ["updated"] * 3)
                self.assertTrue(all(m.pop_receipt != r for m, r in zip(got, receipts)))
                # keep_pop_receipts needs 1.6: the function 1.5 has takes four arguments
                with self.assertRaises(QueueError) as caught:
                    c.update_batch(got, 60, keep_pop_receipts=True)
                self.assertEqual(caught.exception.sqlstate, "42883")
                self.assertEqual([r.status for r in c.delete_batch(got)], ["deleted"] * 3)
                c.alter_queue("old", visibility_timeout=10, max_dequeue_count=2)
                listed = {q["queue"]: q for q in c.list_queues()}["old"]
                self.assertEqual((listed["visibility_timeout"], listed["max_dequeue_count"]),
                                 (timedelta(seconds=10), 2))
                self.assertNotIn("delay", listed)
                with self.assertRaises(QueueError) as caught:
                    c.alter_queue("old", delay=5)
                self.assertEqual(caught.exception.sqlstate, "42883")
                self.assertEqual(c.stats("old")["delayed"], 2)
                # no queue_delete_and_get before 1.7: a worker gets and deletes apart
                with self.assertRaises(QueueError) as caught:
                    c.delete_and_get("old", [])
                self.assertEqual(caught.exception.sqlstate, "42883")
                c.put_batch("old", ["w1", "w2", "w3"])
                handled = []
                worker = Worker(Client(other), "old", lambda m: handled.append(m.body))
                worker.start()
                deadline = time.monotonic() + 10
                while c.stats("old")["total"] > 2 and time.monotonic() < deadline:
                    time.sleep(0.05)
                worker.stop()
                self.assertEqual(sorted(handled), ["w1", "w2", "w3"])
                self.assertEqual(worker.metrics.processed, 3)
                # the update to 1.6 makes queue_list anew, with more columns:
                # the statement prepared before is refused (0A000), prepared
                # again under a new text, and sent once more
                self.assertNotIn("delay", c.list_queues()[0])
                with psycopg.connect(other, autocommit=True) as conn:
                    conn.execute("ALTER EXTENSION queue UPDATE TO '1.6'")
                self.assertEqual(c.list_queues()[0]["delay"], timedelta(0), "the columns of 1.6")
        finally:
            sql(f'DROP DATABASE "{database}" WITH (FORCE)')


class SchemaTest(unittest.TestCase):
    """How the client finds and names the extension's schema."""

    def test_a_function_planted_in_public_never_runs(self):
        """Another role that may create in public plants quote_ident(name),
        which beats pg_catalog.quote_ident(text) for a name, and
        make_interval(secs float8), which loses to pg_catalog's only because
        pg_catalog comes first on the search_path: the client runs neither,
        and a put stores one message."""
        queue = fresh_queue("py-planted")
        role = f"py_planter_{uuid.uuid4().hex[:6]}"
        log = f"public.{role}_calls"
        sql(f'CREATE ROLE "{role}"')
        try:
            sql(f'GRANT CREATE ON SCHEMA public TO "{role}"')
            with psycopg.connect(DSN, autocommit=True) as conn:
                conn.execute(f'SET ROLE "{role}"')
                conn.execute(f"CREATE TABLE {log} (function text, caller text)")
                conn.execute(f"GRANT INSERT ON {log} TO PUBLIC")
                # what the application's role would run: a note of the call,
                # and a second put pasted into the statement
                conn.execute(f"""
                    CREATE FUNCTION public.quote_ident(name) RETURNS text LANGUAGE plpgsql AS $$
                    BEGIN
                        INSERT INTO {log} VALUES ('quote_ident', current_user);
                        RETURN pg_catalog.format('queue.queue_put(%L, %L) AS planted, queue', '{queue}', 'planted');
                    END $$""")
                conn.execute(f"""
                    CREATE FUNCTION public.make_interval(secs double precision) RETURNS interval
                    LANGUAGE plpgsql AS $$
                    BEGIN
                        INSERT INTO {log} VALUES ('make_interval', current_user);
                        RETURN pg_catalog.make_interval(secs => secs);
                    END $$""")
            with Client(DSN) as client:
                client.put(queue, "one", delay=0, ttl=60)
                self.assertEqual(sql("SELECT body FROM queue.queue_peek(%s, 10)", (queue,)), [("one",)],
                                 "one put stores one message")
                [message] = client.get(queue, 5, visibility_timeout=30)
                client.update(message, 10)
                client.delete(message)
            self.assertEqual(sql(f"SELECT function, caller FROM {log}"), [], "a planted function ran")
            self.assertEqual(sql("SELECT total FROM queue.queue_stats(%s)", (queue,))[0][0], 0)
        finally:
            sql(f"DROP TABLE IF EXISTS {log}")
            sql(f'DROP OWNED BY "{role}"')
            sql(f'DROP ROLE "{role}"')

    def test_schema_named_with_percent_and_space(self):
        """The extension in a schema whose name has a %, a placeholder and
        a space (CREATE EXTENSION refuses quotes in it): every kind of call
        works, through psycopg and psycopg2, the schema found or given."""
        import psycopg2
        from psycopg import sql as psql
        database = f"py_odd_{uuid.uuid4().hex[:6]}"
        schema = "Q 100% odd%s"
        sql(f'CREATE DATABASE "{database}"')
        try:
            other = DSN.rsplit("/", 1)[0] + "/" + database
            with psycopg.connect(other, autocommit=True) as conn:
                conn.execute(psql.SQL("CREATE SCHEMA {}").format(psql.Identifier(schema)))
                conn.execute(psql.SQL("CREATE EXTENSION queue SCHEMA {}").format(psql.Identifier(schema)))
            connection = psycopg2.connect(other)
            connection.autocommit = True
            clients = {"found": Client(other), "given": Client(other, schema=schema),
                       "psycopg2": Client(connection)}
            try:
                for how, client in clients.items():
                    queue = f"odd-{how}"
                    client.create_queue(queue, visibility_timeout=30)
                    client.put(queue, "one", delay=0)
                    client.put_batch(queue, ["two", "three"])
                    self.assertIn(queue, [q["queue"] for q in client.list_queues()])
                    got = client.get(queue, 3, visibility_timeout=60)
                    self.assertEqual(sorted(m.body for m in got), ["one", "three", "two"], how)
                    client.update(got[0], 30)
                    client.delete(got[0])
                    self.assertEqual([r.status for r in client.delete_batch(got[1:])], ["deleted"] * 2)
                    self.assertEqual(client.stats(queue)["total"], 0)
                    client.drop_queue(queue)
                    if how == "found":
                        with client.copy() as twin:
                            self.assertEqual([row["queue"] for row in twin.stats()], [f"{queue}-poison"])
            finally:
                for client in clients.values():
                    client.close()
                connection.close()
        finally:
            sql(f'DROP DATABASE "{database}" WITH (FORCE)')


if __name__ == "__main__":
    unittest.main()
