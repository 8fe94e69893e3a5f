#!/usr/bin/env python3
"""Prints each message of a queue (pip install ./clients/python first).
A handler that raises releases its message; the queue moves it to
<queue>-poison after max_dequeue_count deliveries.  Usage: consumer.py DSN QUEUE"""
import signal
import sys

from pgqueue import Client, Worker


def handle(message):
    if message.body == "fail":
        raise ValueError("this one fails")
    sys.stdout.write(f"{message.message_id} {message.body}\n")   # one write: handlers run in threads
    sys.stdout.flush()


worker = Worker(Client(sys.argv[1]), sys.argv[2], handle, failure_delay=5)
signal.signal(signal.SIGTERM, lambda *_: worker.stop())   # finish what it holds, then exit
worker.run()
