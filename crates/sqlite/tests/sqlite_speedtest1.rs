//! SQLite's speedtest1 on the device: small runs over `none` with a rollback journal and
//! WAL, and over atomic protocols with batch-atomic writes; each must leave a database
//! that passes `PRAGMA integrity_check` and must have moved the device's counters.
//!
//! speedtest1.c comes from Debian's sqlite3 source package (`scripts/fetch-speedtest1.sh`,
//! which `.ci/run` runs); without it these tests print why they are skipped.

use commitlab_sqlite::run::{Mode, SqliteOptions};
use commitlab_sqlite::speedtest1::{run_speedtest1, Speedtest1Options, Speedtest1Report};
use std::path::PathBuf;
use world::Config;

fn source() -> Option<PathBuf> {
    let p = std::env::var_os("COMMITLAB_SPEEDTEST1_SOURCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/speedtest1/speedtest1.c")
        });
    if p.is_file() {
        Some(p)
    } else {
        let msg = format!(
            "skipped: speedtest1.c not found at {} (run scripts/fetch-speedtest1.sh, or set COMMITLAB_SPEEDTEST1_SOURCE)",
            p.display()
        );
        println!("{msg}");
        eprintln!("{msg}");
        None
    }
}

fn cfg(protocol: &str) -> Config {
    let mut c = Config::default();
    c.protocol.name = protocol.into();
    c
}

fn opts(src: &PathBuf, mode: Mode, args: &[&str]) -> Speedtest1Options {
    Speedtest1Options {
        sql: SqliteOptions {
            mode,
            ..Default::default()
        },
        source: src.clone(),
        args: args.iter().map(|s| s.to_string()).collect(),
        in_memory: false,
    }
}

fn run(src: &PathBuf, protocol: &str, mode: Mode, args: &[&str]) -> Speedtest1Report {
    run_speedtest1(&cfg(protocol), &opts(src, mode, args))
        .unwrap_or_else(|e| panic!("speedtest1 {} over {protocol}: {e}", mode.name()))
}

fn assert_ran(r: &Speedtest1Report) {
    assert_eq!(r.integrity_check, "ok");
    let m = &r.metrics;
    assert!(m.device_writes > 0, "no device write: {m:?}");
    assert!(m.device_reads > 0 || m.vfs.file_reads > 0, "{m:?}");
    assert!(m.nand_programs >= m.device_writes, "{m:?}");
    assert!(m.sim_time_ns > 0);
    assert!(m.transactions > 0, "no commit counted: {m:?}");
    assert!(m.commit_latency_ns.count > 0);
    // speedtest1's main test set at --size 5 prints its tests 100..990 and TOTAL.
    assert!(r.tests.len() >= 20, "{} tests: {}", r.tests.len(), r.output);
    assert!(r.output.contains("TOTAL"), "{}", r.output);
    let writes: u64 = r.tests.iter().map(|t| t.device_writes).sum();
    assert!(writes > 0 && writes <= m.device_writes);
    let t: u64 = r.tests.iter().map(|t| t.sim_time_ns).sum();
    assert!(t > 0 && t <= m.sim_time_ns);
    // speedtest1's own per-test times are the simulated clock's: it reads whole ms at the
    // start and the end of each test, so each is within 1 ms of the device time measured
    // here (a wall clock would not be).
    for x in &r.tests {
        let ms = x.sim_time_ns as f64 / 1e6;
        assert!(
            (x.printed_ms as f64 - ms).abs() <= 1.0,
            "test {} {}: speedtest1 printed {} ms, the device took {ms:.3} ms",
            x.number,
            x.name,
            x.printed_ms
        );
    }
    assert!(r.tests.iter().any(|x| x.printed_ms > 0));
}

#[test]
fn speedtest1_runs_with_a_rollback_journal_over_none() {
    let Some(src) = source() else { return };
    let r = run(&src, "none", Mode::Delete, &["--size", "5"]);
    assert_ran(&r);
    let v = &r.metrics.vfs;
    assert!(v.journal_page_writes > 0, "{v:?}");
    assert_eq!(v.batch_commits, 0);
    assert_eq!(r.metrics.mode, Mode::Delete);
    assert_eq!(r.metrics.workload, "speedtest1");
}

#[test]
fn speedtest1_runs_with_batch_atomic_writes_over_atomic_protocols() {
    let Some(src) = source() else { return };
    for p in ["bpcc", "tc"] {
        let r = run(&src, p, Mode::Batch, &["--size", "5"]);
        assert_ran(&r);
        let v = &r.metrics.vfs;
        assert!(v.batch_commits > 0, "{p}: {v:?}");
        // Only a transaction on a still-empty database uses the journal (SQLite's
        // jrnlBufferSize), and big transactions that exceed the device's transaction
        // size fall back: most commits are batches.
        assert!(
            v.batch_commits * 2 > r.metrics.transactions,
            "{p}: {} batches of {} commits",
            v.batch_commits,
            r.metrics.transactions
        );
    }
}

#[test]
fn speedtest1_runs_in_wal_mode_and_repeats_byte_for_byte() {
    let Some(src) = source() else { return };
    let a = run(&src, "none", Mode::Wal, &["--size", "5"]);
    assert_ran(&a);
    assert!(a.metrics.vfs.wal_page_writes > 0);
    let b = run(&src, "none", Mode::Wal, &["--size", "5"]);
    assert_eq!(a.output, b.output);
    assert_eq!(a.tests, b.tests);
    assert_eq!(
        serde_json::to_string(&a.metrics).unwrap(),
        serde_json::to_string(&b.metrics).unwrap()
    );
}

#[test]
fn speedtest1_refuses_what_cannot_be_honoured() {
    let Some(src) = source() else { return };
    let e = run_speedtest1(&cfg("none"), &opts(&src, Mode::Batch, &["--size", "5"]))
        .expect_err("batch over none");
    assert!(e.to_string().contains("sqlite.mode"), "{e}");
    let e = run_speedtest1(
        &cfg("none"),
        &opts(&src, Mode::Delete, &["--journal", "wal"]),
    )
    .expect_err("--journal");
    assert!(e.to_string().contains("--mode"), "{e}");
    let mut o = opts(&src, Mode::Delete, &["--size", "5"]);
    o.sql.page_size = 8192;
    let e = run_speedtest1(&cfg("none"), &o).expect_err("page size larger than the flash page");
    assert!(e.to_string().contains("sqlite.page_size"), "{e}");
    let mut o = opts(&src, Mode::Delete, &[]);
    o.source = PathBuf::from("/nonexistent/speedtest1.c");
    let e = run_speedtest1(&cfg("none"), &o).expect_err("missing source");
    assert!(e.to_string().contains("fetch-speedtest1"), "{e}");
}

#[test]
fn speedtest1_fatal_error_returns_instead_of_exiting() {
    let Some(src) = source() else { return };
    // A database larger than its extent: SQLite reports "database or disk is full", and
    // speedtest1's fatal_error calls exit(1), which must come back here as an error.
    let mut o = opts(&src, Mode::Delete, &["--size", "5"]);
    o.sql.layout.db_pages = 8;
    o.sql.layout.journal_pages = 64;
    o.sql.layout.wal_pages = 8;
    let e = run_speedtest1(&cfg("none"), &o).expect_err("database past its extent");
    assert!(e.to_string().contains("exit code 1"), "{e}");
}

#[test]
fn speedtest1_runs_in_memory_without_a_device() {
    let Some(src) = source() else { return };
    // No --vfs: speedtest1 deletes its database through the default VFS first, which the
    // shim answers without touching a file (a crash here once: the clock VFS had no
    // xDelete; found by `commitlab sqlite speedtest1 --in-memory --size 10`).
    let mut o = opts(&src, Mode::Delete, &["--size", "5"]);
    o.in_memory = true;
    let out = commitlab_sqlite::speedtest1::run_in_memory(&o).expect("in-memory run");
    assert!(out.contains("TOTAL"), "{out}");
    assert!(out.contains(" 990 - ANALYZE"), "{out}");
}
