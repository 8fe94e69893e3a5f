"""The throwaway server the tests run against (see run.py)."""
import os
import subprocess
import time
import uuid

import psycopg

DSN = os.environ.get("PGQUEUE_TEST_DSN", "")


def dsn(**params):
    """The test DSN with libpq parameters added (application_name, user)."""
    extra = "&".join(f"{k}={v}" for k, v in params.items())
    if not extra:
        return DSN
    return DSN + ("&" if "?" in DSN else "?") + extra


def admin():
    return psycopg.connect(DSN, autocommit=True)


def sql(statement, params=()):
    """Runs one statement on a connection of its own; the rows."""
    with admin() as conn:
        cur = conn.execute(statement, params)
        return cur.fetchall() if cur.description else []


def fresh_queue(prefix, **settings):
    """A new queue with a unique name; its settings as keyword arguments."""
    from pgqueue import Client
    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    with Client(DSN) as client:
        client.create_queue(name, **settings)
    return name


def pg_ctl(action):
    """pg_ctl restart, stop or start (a fast shutdown: sessions are cut)."""
    mode = [] if action == "start" else ["-m", "fast"]
    subprocess.run([os.path.join(os.environ["PGQUEUE_TEST_BINDIR"], "pg_ctl"), "-D",
                    os.environ["PGQUEUE_TEST_PGDATA"], *mode, "-w", action,
                    "-l", os.path.join(os.environ["PGQUEUE_TEST_PGDATA"], "restart.log")],
                   check=True, stdout=subprocess.DEVNULL)


def restart():
    pg_ctl("restart")


def terminate(application_name):
    """Ends the sessions of that application name; how many."""
    return sql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
               "WHERE application_name = %s", (application_name,))[0][0]


def wait_for(predicate, timeout=30.0, step=0.05):
    """Polls until predicate() is true; returns whether it became so."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
