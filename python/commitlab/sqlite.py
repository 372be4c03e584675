"""SQLite on an emulated device: ``commitlab.sqlite.connect(config)``.

    import commitlab.sqlite
    con = commitlab.sqlite.connect({"protocol.name": "bpcc"}, journal="batch")
    con.execute("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)")
    with con:                                   # BEGIN ... COMMIT (ROLLBACK on error)
        con.executemany("INSERT INTO t(b) VALUES (?)", [("x",), ("y",)])
    print(con.execute("SELECT count(*) FROM t").fetchone())
    print(con.metrics())                        # device writes, NAND programs, simulated time...
    con.close()

The database lives on its own emulated device (the configuration dict means what
``--set key=value`` means on the command line; ``protocol.name`` picks the commit protocol),
through the bundled SQLite and the commitlab VFS, as ``commitlab sqlite run`` does
(docs/SQLITE.md). ``journal`` is ``delete``, ``truncate``, ``persist``, ``wal`` or ``batch``
(batch-atomic writes on device transactions; atomic protocols only).

The connection is like ``sqlite3.Connection`` with ``isolation_level=None``: every statement
outside an explicit ``BEGIN`` commits on its own; ``commit()`` and ``rollback()`` end an open
transaction, and ``with con:`` wraps a block in one. Parameters are positional (``?``):
None, int, float, str, bytes. ``metrics()`` returns the device's counters since
``connect`` (docs/METRICS.md, "SQLite runs"). SQL errors raise ``commitlab.sqlite.Error``;
a bad configuration raises ``commitlab.CommitlabError``. One thread per connection.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import _commitlab
from ._commitlab import CommitlabError

Error = _commitlab.SqliteError

__all__ = ["connect", "Connection", "Cursor", "Error"]


class Cursor:
    """The result of one ``execute``: its rows, fetched already."""

    def __init__(self, rows: List[tuple], names: List[str], rowcount: int, lastrowid: int):
        self._rows = rows
        self._i = 0
        self.description = tuple((n, None, None, None, None, None, None) for n in names) or None
        self.rowcount = rowcount
        self.lastrowid = lastrowid

    def fetchone(self) -> Optional[tuple]:
        if self._i >= len(self._rows):
            return None
        self._i += 1
        return self._rows[self._i - 1]

    def fetchmany(self, size: int = 1) -> List[tuple]:
        out = self._rows[self._i : self._i + size]
        self._i += len(out)
        return out

    def fetchall(self) -> List[tuple]:
        out = self._rows[self._i :]
        self._i = len(self._rows)
        return out

    def __iter__(self) -> Iterator[tuple]:
        while True:
            r = self.fetchone()
            if r is None:
                return
            yield r


class Connection:
    """A SQLite database on an emulated device (see the module's docstring)."""

    def __init__(self, inner: Any):
        self._c = inner

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Cursor:
        if isinstance(parameters, Mapping):
            raise Error("named parameters are not supported; use ? and a sequence")
        rows, names, rowcount, lastrowid = self._c.execute(sql, list(parameters))
        return Cursor(rows, names, rowcount, lastrowid)

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]]) -> Cursor:
        total = 0
        last = Cursor([], [], -1, 0)
        for p in seq_of_parameters:
            last = self.execute(sql, p)
            total += max(last.rowcount, 0)
        last.rowcount = total
        return last

    def executescript(self, sql: str) -> None:
        self._c.executescript(sql)

    @property
    def in_transaction(self) -> bool:
        return self._c.in_transaction()

    def commit(self) -> None:
        if self.in_transaction:
            self._c.executescript("COMMIT")

    def rollback(self) -> None:
        if self.in_transaction:
            self._c.executescript("ROLLBACK")

    def metrics(self) -> Dict[str, Any]:
        """The device's counters since ``connect``: simulated time, device reads and
        writes, NAND programs and erases, GC migrations, write amplification, and the
        VFS's counters (flash pages written per file, syncs, batches)."""
        return json.loads(self._c.metrics_json())

    def close(self) -> None:
        self._c.close()

    def __enter__(self) -> "Connection":
        if not self.in_transaction:
            self._c.executescript("BEGIN")
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.rollback()


def connect(
    config: Optional[Mapping[str, Any]] = None,
    *,
    journal: str = "delete",
    preset: Optional[str] = None,
    page_size: int = 0,
    cache_pages: int = 2000,
    wal_autocheckpoint: int = 1000,
) -> Connection:
    """Opens a database on a fresh emulated device.

    ``config``: a dict of configuration keys (``{"protocol.name": "bpcc"}``); ``journal``:
    delete, truncate, persist, wal or batch; ``page_size``: SQLite's page size (0: the
    flash page size; it must divide the flash page); ``cache_pages``: SQLite's page cache;
    ``wal_autocheckpoint``: WAL frames between checkpoints."""
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise CommitlabError("config must be a dict")
    inner = _commitlab.sqlite_connect(
        json.dumps(dict(config)), preset, journal, page_size, cache_pages, wal_autocheckpoint
    )
    return Connection(inner)
