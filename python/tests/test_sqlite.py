"""commitlab.sqlite: a sqlite3.Connection-like object on an emulated device, and its metrics."""

import pytest

import commitlab
import commitlab.sqlite as csql


def test_connect_executes_sql_on_the_device_and_reports_its_metrics():
    con = csql.connect({"protocol.name": "bpcc"}, journal="batch")
    con.execute("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL, d BLOB)")
    with con:
        cur = con.executemany("INSERT INTO t(b, c, d) VALUES (?, ?, ?)",
                              [("x", 1.5, b"\x00\x01"), ("y", None, None)])
    assert cur.rowcount == 2
    for i in range(20):
        con.execute("INSERT INTO t(b) VALUES (?)", (f"row{i}",))
    assert con.execute("SELECT count(*) FROM t").fetchone() == (22,)
    rows = con.execute("SELECT b, c, d FROM t WHERE a <= 2 ORDER BY a").fetchall()
    assert rows == [("x", 1.5, b"\x00\x01"), ("y", None, None)]
    cur = con.execute("SELECT a AS id, b FROM t LIMIT 1")
    assert [d[0] for d in cur.description] == ["id", "b"]
    m = con.metrics()
    assert m["protocol"] == "bpcc" and m["journal"] == "batch"
    assert m["device_writes"] > 0 and m["nand_programs"] > 0 and m["sim_time_ns"] > 0
    assert m["vfs"]["batch_commits"] >= 20
    assert m["sqlite_version"].startswith("3.")
    con.close()
    with pytest.raises(csql.Error):
        con.execute("SELECT 1")


def test_rollback_undoes_and_journal_modes_write_their_journal():
    for journal, key in [("delete", "journal_page_writes"), ("wal", "wal_page_writes")]:
        con = csql.connect(journal=journal)
        con.execute("CREATE TABLE t(a)")
        con.execute("BEGIN")
        con.execute("INSERT INTO t VALUES (1)")
        assert con.in_transaction
        con.rollback()
        assert not con.in_transaction
        assert con.execute("SELECT count(*) FROM t").fetchone() == (0,)
        con.execute("INSERT INTO t VALUES (2)")
        m = con.metrics()
        assert m["journal"] == journal and m["vfs"][key] > 0, m
        con.close()


def test_import_commitlab_is_enough():
    assert commitlab.sqlite is csql
    con = commitlab.sqlite.connect()
    assert con.execute("SELECT 1 + 1").fetchone() == (2,)
    con.close()


def test_same_seed_same_metrics():
    def once():
        con = csql.connect({"protocol.name": "afc", "seed": 7}, journal="batch")
        con.execute("CREATE TABLE t(a, b)")
        for i in range(30):
            con.execute("INSERT INTO t VALUES (?, randomblob(100))", (i,))
        m = con.metrics()
        con.close()
        return m
    assert once() == once()


def test_bad_input_raises_with_the_key():
    with pytest.raises(commitlab.CommitlabError, match="journal"):
        csql.connect(journal="sometimes")
    with pytest.raises(commitlab.CommitlabError, match="sqlite.mode"):
        csql.connect({"protocol.name": "none"}, journal="batch")
    with pytest.raises(commitlab.CommitlabError, match="protocol"):
        csql.connect({"protocol.name": "nope"})
    con = csql.connect()
    with pytest.raises(csql.Error, match="no such table"):
        con.execute("SELECT * FROM missing")
    with pytest.raises(csql.Error):
        con.execute("SELECT ?", (object(),))
    con.close()
