//! The `commitlab` URI VFS (what the loadable extension registers), driven through the
//! bundled SQLite: parameters, refusals with a message, journal modes, batch mode, and a
//! database that survives closing and reopening in the process.

use commitlab_sqlite::ext;
use rusqlite::{Connection, OpenFlags};
use std::sync::{Mutex, MutexGuard};

/// The VFS serves one thread at a time (its header); the test harness runs tests on
/// several, so each test holds this.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn open(uri: &str) -> rusqlite::Result<Connection> {
    ext::register().expect("register");
    Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_URI,
    )
}

fn stats(c: &Connection) -> serde_json::Value {
    let s: String = c
        .query_row("SELECT commitlab_stats()", [], |r| r.get(0))
        .expect("stats");
    serde_json::from_str(&s).expect("json")
}

#[test]
fn a_uri_opens_a_database_on_a_device_and_counts_its_io() {
    let _one = serial();
    let c = open("file:uri-a.db?vfs=commitlab&protocol=bpcc&journal=batch&page_bytes=4096")
        .expect("open");
    let jm: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("jm");
    assert_eq!(jm, "delete");
    c.execute_batch("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT); INSERT INTO t VALUES(1, 'x');")
        .expect("create");
    // The first transactions of an empty database use the journal (SQLite's rule,
    // jrnlBufferSize); every later one is a batch.
    let journal_before = stats(&c)["vfs"]["journal_page_writes"].clone();
    for i in 2..20 {
        c.execute("INSERT INTO t VALUES(?1, 'y')", [i])
            .expect("insert");
    }
    let s = stats(&c);
    assert_eq!(s["protocol"], "bpcc");
    assert_eq!(s["journal"], "batch");
    assert!(s["device_writes"].as_u64().unwrap_or(0) > 0, "{s}");
    assert!(s["vfs"]["batch_commits"].as_u64().unwrap_or(0) >= 18, "{s}");
    assert_eq!(s["vfs"]["journal_page_writes"], journal_before, "{s}");
    drop(c);
    // The device outlives the connection: reopening finds the rows.
    let c = open("file:uri-a.db?vfs=commitlab&protocol=bpcc&journal=batch&page_bytes=4096")
        .expect("reopen");
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .expect("count");
    assert_eq!(n, 19);
    let ic: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("ic");
    assert_eq!(ic, "ok");
}

#[test]
fn wal_and_the_rollback_journals_run_over_none() {
    let _one = serial();
    for j in ["delete", "truncate", "persist", "wal"] {
        let c = open(&format!(
            "file:uri-{j}.db?vfs=commitlab&journal={j}&page_bytes=4096"
        ))
        .expect("open");
        let jm: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .expect("jm");
        assert_eq!(jm, j);
        c.execute_batch("CREATE TABLE t(a); INSERT INTO t VALUES(1); INSERT INTO t VALUES(2);")
            .expect("write");
        let s = stats(&c);
        assert_eq!(s["protocol"], "none");
        if j == "wal" {
            assert!(s["vfs"]["wal_page_writes"].as_u64().unwrap_or(0) > 0, "{s}");
        } else {
            assert!(
                s["vfs"]["journal_page_writes"].as_u64().unwrap_or(0) > 0,
                "{s}"
            );
        }
    }
}

fn refused(uri: &str) -> String {
    let e = open(uri).map(|_| ()).expect_err("the open must be refused");
    let msg = ext::last_error().unwrap_or_default();
    assert!(
        matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::CannotOpen)),
        "{e}"
    );
    msg
}

#[test]
fn bad_parameters_are_refused_naming_the_key() {
    let _one = serial();
    let m = refused("file:bad1.db?vfs=commitlab&protocol=nope");
    assert!(m.contains("protocol") && m.contains("nope"), "{m}");
    let m = refused("file:bad2.db?vfs=commitlab&journal=sometimes");
    assert!(m.starts_with("journal:"), "{m}");
    let m = refused("file:bad3.db?vfs=commitlab&protocol=none&journal=batch");
    assert!(m.contains("journal") && m.contains("atomic"), "{m}");
    let m = refused("file:bad4.db?vfs=commitlab&colour=blue");
    assert!(m.starts_with("colour:"), "{m}");
    let m = refused("file:bad5.db?vfs=commitlab&page_bytes=4096&page_size=8192");
    assert!(m.contains("page_size"), "{m}");
    let m = refused("file:bad6.db?vfs=commitlab&seed=-3");
    assert!(m.starts_with("seed:"), "{m}");
}

#[test]
fn a_database_larger_than_the_device_is_sqlite_full() {
    let _one = serial();
    let c = open("file:full.db?vfs=commitlab&page_bytes=4096").expect("open");
    let r = c.execute_batch(
        "CREATE TABLE t(a, b); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200000) INSERT INTO t SELECT i, randomblob(1000) FROM n;",
    );
    let e = r.expect_err("64 MiB of device cannot take 200 MB");
    assert!(
        matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DiskFull)),
        "{e}"
    );
}
