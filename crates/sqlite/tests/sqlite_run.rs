//! SQLite on the emulated device: the library, the modes, bad input, determinism.

use commitlab_sqlite::run::{run, Mode, SqliteOptions, Workload};
use commitlab_sqlite::vfs::batch_atomic_compiled;

fn small(protocol: &str) -> world::Config {
    let mut c = commitlab_sqlite::crash::small_config(protocol);
    c.nand.blocks_per_plane = 32;
    c.nand.page_bytes = 4096;
    c
}

fn opts(mode: Mode) -> SqliteOptions {
    SqliteOptions {
        mode,
        transactions: 60,
        rows: 40,
        cache_pages: 200,
        wal_autocheckpoint: 8,
        ..Default::default()
    }
}

#[test]
fn the_bundled_sqlite_has_batch_atomic_writes() {
    assert!(batch_atomic_compiled());
}

#[test]
fn every_journal_mode_runs_over_none() {
    for mode in [Mode::Delete, Mode::Truncate, Mode::Persist, Mode::Wal] {
        let m = run(&small("none"), &opts(mode)).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        assert_eq!(m.transactions, 60, "{mode:?}");
        assert!(m.device_writes > 0 && m.sim_time_ns > 0, "{mode:?}: {m:?}");
        assert_eq!(m.vfs.batch_commits, 0);
    }
}

#[test]
fn batch_mode_writes_no_journal_on_an_atomic_protocol() {
    let m = run(&small("lighttx"), &opts(Mode::Batch)).expect("run");
    assert_eq!(m.vfs.batch_commits, 60, "{:?}", m.vfs);
    assert_eq!(m.vfs.journal_page_writes, 0, "{:?}", m.vfs);
    let d = run(&small("lighttx"), &opts(Mode::Delete)).expect("run");
    assert!(d.vfs.journal_page_writes > 0);
    assert!(
        m.device_writes < d.device_writes,
        "batch {} vs delete {}",
        m.device_writes,
        d.device_writes
    );
}

#[test]
fn batch_falls_back_to_the_journal_when_the_device_cannot_take_it() {
    let mut c = small("bpcc");
    c.ftl.max_tx_pages = 2;
    let m = run(&c, &opts(Mode::Batch)).expect("run");
    assert!(m.vfs.batch_fallbacks > 0, "{:?}", m.vfs);
    assert!(m.vfs.journal_page_writes > 0);
    assert_eq!(m.transactions, 60);
}

#[test]
fn batch_over_none_is_refused_naming_the_key() {
    let e = run(&small("none"), &opts(Mode::Batch))
        .unwrap_err()
        .to_string();
    assert!(e.contains("sqlite.mode"), "{e}");
}

#[test]
fn a_page_size_that_does_not_divide_the_flash_page_is_refused() {
    let mut o = opts(Mode::Delete);
    o.page_size = 8192;
    let e = run(&small("none"), &o).unwrap_err().to_string();
    assert!(e.contains("sqlite.page_size"), "{e}");
}

#[test]
fn a_database_larger_than_the_device_is_sqlite_full_not_a_panic() {
    let mut o = opts(Mode::Delete);
    o.rows = 20_000;
    let e = run(&small("none"), &o).unwrap_err().to_string();
    assert!(e.contains("larger than the device"), "{e}");
}

#[test]
fn same_seed_same_metrics() {
    let a =
        serde_json::to_string(&run(&small("afc"), &opts(Mode::Batch)).expect("a")).expect("json");
    let b =
        serde_json::to_string(&run(&small("afc"), &opts(Mode::Batch)).expect("b")).expect("json");
    assert_eq!(a, b);
}

#[test]
fn a_sql_file_runs_and_counts_its_transactions() {
    let mut o = opts(Mode::Wal);
    o.workload = Workload::Sql {
        name: "t.sql".into(),
        text: "CREATE TABLE x(a); INSERT INTO x VALUES(1); BEGIN; INSERT INTO x VALUES(2); INSERT INTO x VALUES(3); COMMIT; BEGIN; INSERT INTO x VALUES(4); ROLLBACK; SELECT * FROM x;".into(),
    };
    let m = run(&small("none"), &o).expect("run");
    assert_eq!((m.transactions, m.rolled_back), (2, 1), "{m:?}");
}

#[test]
fn the_vfs_itself_refuses_a_page_size_that_does_not_divide_the_flash_page() {
    // Past the run's own validation: SQLite asked directly for 8 KiB pages on 4 KiB flash
    // pages gets an I/O error with the VFS's message, not a panic across the FFI boundary.
    let fs = commitlab_sqlite::run::build_fs(&small("none"), &opts(Mode::Delete)).expect("fs");
    let vfs = commitlab_sqlite::vfs::Registered::new(fs, 1).expect("vfs");
    let conn = rusqlite::Connection::open_with_flags_and_vfs(
        "x.db",
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_CREATE,
        vfs.name(),
    )
    .expect("open");
    let e = conn
        .execute_batch("PRAGMA page_size = 8192; CREATE TABLE t(a); INSERT INTO t VALUES(1);")
        .unwrap_err();
    let msg = vfs.take_error().unwrap_or_default();
    assert!(msg.contains("does not divide the flash page"), "{e}: {msg}");
    drop(conn);
}

#[test]
fn tpcb_in_sql_keeps_its_balances_consistent_and_logs_each_committed_transaction() {
    for mode in [Mode::Wal, Mode::Batch] {
        let mut o = opts(mode);
        o.workload = Workload::Tpcb;
        o.rows = 200;
        o.rollback_ratio = 0.2;
        let m = run(&small("bpcc"), &o).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        assert_eq!(m.transactions + m.rolled_back, 60, "{m:?}");
        assert!(m.rolled_back > 0 && m.transactions > 0, "{m:?}");
        assert_eq!(m.workload, "tpcb");
    }
    // The database itself: Σ account = Σ teller = Σ branch, one history row per commit.
    let c = small("none");
    let mut o = opts(Mode::Delete);
    o.workload = Workload::Tpcb;
    o.rows = 200;
    o.rollback_ratio = 0.2;
    let fs = commitlab_sqlite::run::build_fs(&c, &o).expect("fs");
    let s = commitlab_sqlite::run::Session::open(fs, c.seed, &o).expect("open");
    let (committed, _) = commitlab_sqlite::run::tpcb_load_and_run(&s, &o, 1).expect("tpcb");
    let q = |sql: &str| -> i64 { s.conn.query_row(sql, [], |r| r.get(0)).expect(sql) };
    let a = q("SELECT sum(abalance) FROM accounts");
    assert_eq!(a, q("SELECT sum(tbalance) FROM tellers"));
    assert_eq!(a, q("SELECT sum(bbalance) FROM branches"));
    assert_eq!(a, q("SELECT coalesce(sum(delta), 0) FROM history"));
    assert_eq!(q("SELECT count(*) FROM history"), committed as i64);
    assert!(q("SELECT count(DISTINCT aid) FROM history") > 10);
    assert!(q("SELECT max(aid) FROM history") < 200);
    drop(s);
    let mut bad = opts(Mode::Wal);
    bad.workload = Workload::Tpcb;
    bad.rollback_ratio = 0.7;
    let e = run(&small("none"), &bad).unwrap_err().to_string();
    assert!(e.starts_with("sqlite.rollback_ratio"), "{e}");
}

#[test]
fn the_in_memory_baseline_runs_the_mobile_mix_and_refuses_other_workloads() {
    let o = opts(Mode::Delete);
    let n = commitlab_sqlite::run::run_in_memory(&small("none"), &o).expect("memory");
    assert_eq!(n, 60);
    let mut b = opts(Mode::Delete);
    b.workload = Workload::Bank;
    let e = commitlab_sqlite::run::run_in_memory(&small("none"), &b)
        .unwrap_err()
        .to_string();
    assert!(e.contains("sqlite.workload"), "{e}");
}

#[test]
fn a_run_keeps_only_the_page_versions_its_pages_map() {
    // Every page version a run writes used to stay in memory (787 MB for 20,000 mobile
    // transactions on the default device); with reclamation a run holds about one version
    // per mapped page, and its results do not change.
    use commitlab_sqlite::run::{build_fs, Session};
    for (p, mode) in [
        ("none", Mode::Delete),
        ("bpcc", Mode::Batch),
        ("none", Mode::Wal),
    ] {
        let c = small(p);
        let mut o = opts(mode);
        o.transactions = 400;
        let held = |reclaim: bool| {
            let mut fs = build_fs(&c, &o).expect("fs");
            fs.opts.reclaim_versions = reclaim;
            let s = Session::open(fs, c.seed, &o).expect("open");
            s.conn
                .execute_batch("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);")
                .expect("create");
            for i in 0..o.transactions {
                s.conn
                    .execute(
                        "INSERT OR REPLACE INTO t VALUES(?1 % 50, printf('%.*c', 200, 'x'))",
                        [i],
                    )
                    .expect("insert");
            }
            let n: i64 = s
                .conn
                .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                .expect("count");
            assert_eq!(n, 50);
            let fs = s.close().expect("close");
            (
                fs.versions.resident_bytes(),
                fs.dev.core.stats.host_writes,
                fs.now,
            )
        };
        let (all, w1, t1) = held(false);
        let (some, w2, t2) = held(true);
        assert_eq!(
            (w1, t1),
            (w2, t2),
            "{p} {mode:?}: reclaiming changed the run"
        );
        assert!(
            some * 10 < all,
            "{p} {mode:?}: {some} of {all} bytes still held"
        );
    }
}
