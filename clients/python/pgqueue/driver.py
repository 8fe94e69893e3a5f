"""The little the client needs from a driver, for psycopg 3 and psycopg2.

Both use ``%s`` placeholders and adapt lists to arrays; they differ in how
they connect, name the SQLSTATE of an error, and tell a closed connection.
"""
import importlib
from datetime import datetime, timezone
from typing import Any, Optional, Type

# A message waiting for its group's turn is visible at 'infinity', which
# psycopg 3 refuses to load and psycopg2 loads as datetime.max: both give that.
INFINITY = datetime.max.replace(tzinfo=timezone.utc)
MINUS_INFINITY = datetime.min.replace(tzinfo=timezone.utc)
_timestamptz_loader: Optional[Type[Any]] = None


def connect(dsn: str) -> Any:
    """A new connection in autocommit mode: psycopg 3, else psycopg2."""
    try:
        import psycopg
    except ImportError:
        # psycopg2 ships no type hints: imported by name, typed as a module
        psycopg2 = importlib.import_module("psycopg2")
        conn = psycopg2.connect(dsn)
        conn.autocommit = True
        return conn
    return psycopg.connect(dsn, autocommit=True)


def quote_ident(conn: Any, name: str) -> str:
    """A name as a quoted SQL identifier, quoted by the connection's driver
    (psycopg's or psycopg2's sql.Identifier)."""
    if any(cls.__module__.split(".")[0] == "psycopg2" for cls in type(conn).__mro__):
        sql: Any = importlib.import_module("psycopg2.sql")
    else:
        sql = importlib.import_module("psycopg.sql")
    return str(sql.Identifier(name).as_string(conn))


def sqlstate(error: BaseException) -> Optional[str]:
    """The SQLSTATE of a driver error, or None for one without."""
    return getattr(error, "sqlstate", None) or getattr(error, "pgcode", None)


def is_driver_error(error: BaseException) -> bool:
    """Whether the error came from psycopg or psycopg2 (both derive their
    errors from a class named Error in their own module)."""
    return any(cls.__name__ == "Error" and cls.__module__.split(".")[0] in ("psycopg", "psycopg2")
               for cls in type(error).__mro__)


def is_closed(conn: Any) -> bool:
    """psycopg 3 says True, psycopg2 a non-zero number, once the connection
    is closed or found broken."""
    return bool(conn.closed)


def execute_prepared(cursor: Any, statement: str, params: Any) -> None:
    """Runs the statement, prepared on its connection with psycopg 3 (which
    keeps it by its text); psycopg2 cannot prepare."""
    if hasattr(cursor, "adapters"):
        cursor.execute(statement, params, prepare=True)
    else:
        cursor.execute(statement, params)


def outside_transaction(conn: Any) -> bool:
    """Whether the connection is idle, not in a transaction (that an error
    would have aborted)."""
    info = getattr(conn, "info", None)
    if info is not None and hasattr(info, "transaction_status"):
        return int(info.transaction_status) == 0     # psycopg 3: IDLE
    return int(conn.get_transaction_status()) == 0   # psycopg2: TRANSACTION_STATUS_IDLE


def stale_statement(error: BaseException) -> bool:
    """The server refused a prepared statement before running it: its plan
    went stale (0A000) or the session lost it (26000)."""
    code = sqlstate(error)
    return (code == "0A000" and "cached plan must not change result type" in str(error)) or code == "26000"


def cancel(conn: Any) -> None:
    """Asks the server to cancel the statement running on the connection."""
    conn.cancel()


def prepare(cursor: Any) -> None:
    """Lets a psycopg 3 cursor load infinite timestamps, as psycopg2 does."""
    adapters = getattr(cursor, "adapters", None)
    if adapters is not None:
        adapters.register_loader("timestamptz", _infinite_timestamptz_loader())


def _infinite_timestamptz_loader() -> Type[Any]:
    global _timestamptz_loader
    if _timestamptz_loader is None:
        from psycopg.types.datetime import TimestamptzLoader

        class Loader(TimestamptzLoader):
            def load(self, data: Any) -> datetime:
                if bytes(data) == b"infinity":
                    return INFINITY
                if bytes(data) == b"-infinity":
                    return MINUS_INFINITY
                return super().load(data)

        _timestamptz_loader = Loader
    return _timestamptz_loader
