#!/usr/bin/env python3
"""Runs the tests of pgqueue against a real server and prints TAP lines.

Needs PGQUEUE_TEST_DSN (a database with the extension installed in schema
"queue"), and for the restart tests PGQUEUE_TEST_PGDATA and
PGQUEUE_TEST_BINDIR (the server's data directory and pg_ctl's directory;
run as the server's owner).  Usage: python3 run.py [test_module...]
"""
import os
import sys
import traceback
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)


class TapResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.number = 0

    def _line(self, test, ok, note=""):
        self.number += 1
        name = f"{test.__class__.__name__}.{test._testMethodName}"
        print(f"{'ok' if ok else 'not ok'} {self.number} - python: {name}{note}", flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(test, True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(test, False)
        self._comment(err)

    def addError(self, test, err):
        super().addError(test, err)
        self._line(test, False)
        self._comment(err)

    def addSkip(self, test, reason):
        # a skip is reported, with its reason, and counts as a failure
        super().addSkip(test, reason)
        self._line(test, False, f" # skipped: {reason}")

    @staticmethod
    def _comment(err):
        for line in "".join(traceback.format_exception(*err)).splitlines():
            print(f"# {line}", flush=True)


def main():
    names = sys.argv[1:] or ["test_client", "test_worker"]
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    result = TapResult()
    suite.run(result)
    print(f"1..{result.number}")
    sys.exit(0 if result.wasSuccessful() and not result.skipped else 1)


if __name__ == "__main__":
    main()
