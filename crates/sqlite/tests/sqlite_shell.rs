//! The loadable extension in the stock `sqlite3` shell: `.load` it, open databases on
//! emulated devices by URI, and see bad parameters refused with their message.
//!
//! Needs the `sqlite3` shell (Debian: `apt-get install sqlite3`) and the extension built
//! (`cargo build --release --manifest-path crates/sqlite-ext/Cargo.toml --target-dir
//! target`; `COMMITLAB_SQLITE_EXT` names another path); `.ci/run` provides both. Without
//! them the test says "skipped" on stderr and passes.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn extension() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("COMMITLAB_SQLITE_EXT") {
        return Some(PathBuf::from(p));
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = root.join("target/release/libcommitlab_sqlite.so");
    p.exists().then_some(p)
}

fn shell(script: &str) -> Option<(String, String)> {
    let ext = extension()?;
    let mut child = match Command::new("sqlite3")
        .arg("-batch")
        .arg(":memory:")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(_) => return None,
    };
    let ext = ext.with_extension("");
    let text = format!(".load {}\n{script}", ext.display());
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("sqlite3");
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn the_sqlite3_shell_loads_the_extension_and_opens_databases_on_devices() {
    let script = "\
.open 'file:w.db?vfs=commitlab&protocol=bpcc&journal=wal&page_bytes=4096'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
INSERT INTO t(b) VALUES('x'),('y'),('z');
BEGIN; INSERT INTO t(b) VALUES('gone'); ROLLBACK;
SELECT 'count', count(*) FROM t;
PRAGMA journal_mode;
SELECT 'writes', json_extract(commitlab_stats(), '$.device_writes') > 0, json_extract(commitlab_stats(), '$.protocol');
PRAGMA integrity_check;
.open 'file:d.db?vfs=commitlab&journal=persist'
CREATE TABLE u(a); INSERT INTO u VALUES(1);
PRAGMA journal_mode;
SELECT 'journal', json_extract(commitlab_stats(), '$.vfs.journal_page_writes') > 0;
.open 'file:w.db?vfs=commitlab&protocol=bpcc&journal=wal&page_bytes=4096'
SELECT 'reopened', count(*) FROM t;
.open 'file:bad.db?vfs=commitlab&protocol=nope'
.open 'file:bad2.db?vfs=commitlab&journal=sometimes'
.open 'file:bad3.db?vfs=commitlab&colour=blue'
";
    let Some((out, err)) = shell(script) else {
        eprintln!("skipped: no sqlite3 shell or no built extension (see the header)");
        return;
    };
    for want in [
        "count|3",
        "wal",
        "writes|1|bpcc",
        "ok",
        "persist",
        "journal|1",
        "reopened|3",
    ] {
        assert!(
            out.lines().any(|l| l == want),
            "missing {want:?} in\n{out}\nstderr:\n{err}"
        );
    }
    assert!(err.contains("protocol: unknown protocol 'nope'"), "{err}");
    assert!(
        err.contains("journal: unknown journal mode 'sometimes'"),
        "{err}"
    );
    assert!(err.contains("colour: unknown URI parameter"), "{err}");
}

#[test]
fn batch_mode_is_refused_or_runs_as_the_host_sqlite_allows() {
    let script = "\
SELECT 'batch-compiled', sqlite_compileoption_used('ENABLE_BATCH_ATOMIC_WRITE');
.open 'file:b.db?vfs=commitlab&protocol=lighttx&journal=batch&page_bytes=4096'
CREATE TABLE t(a); INSERT INTO t VALUES(1); INSERT INTO t VALUES(2);
SELECT 'batches', json_extract(commitlab_stats(), '$.vfs.batch_commits');
";
    let Some((out, err)) = shell(script) else {
        eprintln!("skipped: no sqlite3 shell or no built extension (see the header)");
        return;
    };
    if out.lines().any(|l| l == "batch-compiled|1") {
        assert!(
            out.lines()
                .any(|l| l.starts_with("batches|") && l != "batches|0"),
            "{out}\n{err}"
        );
    } else {
        // Debian's sqlite3 lacks SQLITE_ENABLE_BATCH_ATOMIC_WRITE: said at load, refused at open.
        assert!(
            err.contains("built without SQLITE_ENABLE_BATCH_ATOMIC_WRITE"),
            "{err}"
        );
        assert!(err.contains("journal:"), "{err}");
        assert!(!out.lines().any(|l| l.starts_with("batches|")), "{out}");
    }
}
