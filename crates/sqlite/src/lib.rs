//! Real software on the emulated device: SQLite through a VFS whose files live in a
//! commitlab device's logical space.
//!
//! - `store`: the file layer (`DeviceFs`): extents, crash-safe sizes, batch-atomic writes
//!   on device transactions; its header has the on-device layout and the crash argument;
//! - `vfs`: the SQLite VFS over it (FFI callbacks, each behind `catch_unwind`);
//! - `run`: a run's options, the session, the built-in workloads and the metrics;
//! - `ext`: the `commitlab` URI VFS (`file:x.db?vfs=commitlab&protocol=bpcc`), one device
//!   per database, which the loadable extension registers;
//! - `speedtest1`: SQLite's own benchmark program (test/speedtest1.c, fetched from Debian's
//!   source package at build time of the run, never kept here) compiled against the bundled
//!   library and run on the device, its per-test times in simulated time;
//! - `crash`: crash checking a real database: record a run's NAND operations, crash at
//!   each, recover the device alone, open the database with SQLite and judge it.
//!
//! Crash safety in one paragraph (the full case-by-case argument is `store`'s header): the
//! files live in extents fixed at format time, so the extent map never changes; sizes and
//! existence live in a superblock written alternately to LPN 0 and 1 (sequence number +
//! CRC-32, the newest valid one wins), issued only after a BARRIER has made every data
//! write before it durable, and waited for on xSync, xTruncate and xDelete; in batch mode
//! the superblock is one more WRITE of the batch's device transaction, so data and size
//! commit together.
//!
//! SQLite is the bundled library of `libsqlite3-sys` (version pinned in Cargo.toml),
//! compiled with SQLITE_ENABLE_BATCH_ATOMIC_WRITE (`.cargo/config.toml`, checked at run
//! time with `sqlite3_compileoption_used`).

pub mod crash;
pub mod ext;
pub mod run;
#[cfg(all(commitlab_sqlite_headers, not(feature = "loadable_extension")))]
pub mod speedtest1;
pub mod store;
pub mod vfs;

pub use run::{run, Mode, SqliteMetrics, SqliteOptions, Workload};
pub use store::{DeviceFs, FileId, FsOptions, Layout, Plant};
