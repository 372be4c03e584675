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
