//! The loadable SQLite extension: `.load ./libcommitlab_sqlite` in the `sqlite3` shell
//! registers the `commitlab` URI VFS (`commitlab_sqlite::ext`, see its header and
//! docs/SQLITE.md), after which `.open 'file:x.db?vfs=commitlab&protocol=bpcc'` puts a
//! database on an emulated device.
//!
//! Every SQLite call goes through the routines table the loader passes
//! (`sqlite3_api_routines`, libsqlite3-sys `loadable_extension`), so the extension uses the
//! host process's SQLite, whatever its version and compile options. A library built
//! without SQLITE_ENABLE_BATCH_ATOMIC_WRITE (Debian's `sqlite3` is) runs the journal modes
//! and refuses `journal=batch`; the extension detects it with `sqlite3_compileoption_used`
//! and says so on standard error when it loads.

use libsqlite3_sys as ffi;
use std::ffi::{c_char, c_int};

/// Copies `msg` into memory SQLite frees.
unsafe fn sqlite_string(msg: &str) -> *mut c_char {
    let b = msg.as_bytes();
    let p = ffi::sqlite3_malloc(b.len() as c_int + 1) as *mut c_char;
    if !p.is_null() {
        std::ptr::copy_nonoverlapping(b.as_ptr() as *const c_char, p, b.len());
        *p.add(b.len()) = 0;
    }
    p
}

/// The entry point SQLite derives from the file name `libcommitlab_sqlite.so`.
///
/// # Safety
/// Called by SQLite's extension loader with a live connection and its routines table.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_commitlabsqlite_init(
    db: *mut ffi::sqlite3,
    err: *mut *mut c_char,
    api: *mut ffi::sqlite3_api_routines,
) -> c_int {
    let r = std::panic::catch_unwind(|| -> Result<c_int, String> {
        // SAFETY: the loader's routines table; kept by libsqlite3-sys for every call.
        ffi::rusqlite_extension_init2(api).map_err(|e| format!("{e}"))?;
        sqlite::ext::register()?;
        if !sqlite::vfs::batch_atomic_compiled() {
            eprintln!(
                "commitlab VFS: this SQLite ({}) was built without SQLITE_ENABLE_BATCH_ATOMIC_WRITE: journal=batch is refused; delete, truncate, persist and wal run",
                sqlite::vfs::sqlite_version()
            );
        }
        let _ = db;
        // Stay loaded after this connection closes: the VFS lives in this library.
        Ok(ffi::SQLITE_OK_LOAD_PERMANENTLY)
    });
    let msg = match r {
        Ok(Ok(rc)) => return rc,
        Ok(Err(m)) => m,
        Err(_) => "panic while loading the commitlab extension".into(),
    };
    if !err.is_null() {
        *err = sqlite_string(&format!("commitlab: {msg}"));
    }
    ffi::SQLITE_ERROR
}

/// The generic entry point, for loaders that do not derive one from the file name.
///
/// # Safety
/// As `sqlite3_commitlabsqlite_init`.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_extension_init(
    db: *mut ffi::sqlite3,
    err: *mut *mut c_char,
    api: *mut ffi::sqlite3_api_routines,
) -> c_int {
    sqlite3_commitlabsqlite_init(db, err, api)
}
