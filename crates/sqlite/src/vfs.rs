//! The SQLite VFS over a `DeviceFs`: SQLite's file calls become device I/O on the
//! simulated clock.
//!
//! | SQLite call | device |
//! |---|---|
//! | xRead | READ of each flash page touched (zeroes past the file's size) |
//! | xWrite | WRITE of each flash page touched (read-modify-write when only partly covered), not waited for |
//! | xSync | BARRIER, then the superblock if a size changed, waited for |
//! | xTruncate, xDelete | the superblock, waited for |
//! | SQLITE_FCNTL_BEGIN_ATOMIC_WRITE | BEGIN(tx) |
//! | xWrite inside the batch | merged into whole flash pages in the VFS |
//! | SQLITE_FCNTL_COMMIT_ATOMIC_WRITE | WRITE(tx) per flash page (+ superblock), COMMIT(tx), waited for |
//! | SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE | ABORT(tx) |
//!
//! The main database, its `-journal` and its `-wal` live on the device; temporary files
//! and statement journals (opened without a name, or as TEMP/TRANSIENT/SUBJOURNAL) live in
//! memory and cost no device time. The VFS has no shared-memory methods, so WAL runs in
//! `locking_mode = EXCLUSIVE`. One database per VFS; locks are no-ops (one connection).
//!
//! Every callback runs inside `catch_unwind`: a panic becomes SQLITE_INTERNAL with its
//! message in `last_error`, never an unwind across the FFI boundary. Errors of the file
//! layer become SQLite error codes (SQLITE_FULL for a file past its extent, an
//! SQLITE_IOERR_* code otherwise) with the message kept in `last_error` (and returned by
//! xGetLastError). Randomness and the current time are deterministic: a seeded stream and
//! a fixed epoch plus the simulated clock.

use crate::store::{DeviceFs, FileId, FsError};
use libsqlite3_sys as ffi;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// 2026-01-01T00:00:00Z in ms since the Unix epoch: the simulated clock's zero.
const EPOCH_UNIX_MS: i64 = 1_767_225_600_000;

/// The state a registered VFS hangs its callbacks on.
pub struct VfsCtx {
    pub fs: RefCell<DeviceFs>,
    pub last_error: RefCell<Option<String>>,
    rng: RefCell<sim::Rng>,
}

impl VfsCtx {
    fn fail(&self, rc: c_int, msg: String) -> c_int {
        *self.last_error.borrow_mut() = Some(msg);
        rc
    }
    fn fs_err(&self, rc: c_int, e: FsError) -> c_int {
        let rc = match e {
            FsError::Full { .. } => ffi::SQLITE_FULL,
            _ => rc,
        };
        self.fail(rc, e.to_string())
    }
}

enum Kind {
    Dev(FileId),
    Mem(Vec<u8>),
}

#[repr(C)]
struct File {
    base: ffi::sqlite3_file,
    ctx: *const VfsCtx,
    kind: Kind,
    delete_on_close: bool,
}

/// A VFS registered with SQLite under a name unique to it; unregistered on drop. Every
/// connection opened through it must be closed first (hold them in a struct declared
/// before this one, or drop them explicitly).
pub struct Registered {
    vfs: Box<ffi::sqlite3_vfs>,
    name: CString,
    ctx: Option<Box<VfsCtx>>,
    live: bool,
}

impl Registered {
    pub fn new(fs: DeviceFs, seed: u64) -> Result<Registered, String> {
        let ctx = Box::new(VfsCtx {
            fs: RefCell::new(fs),
            last_error: RefCell::new(None),
            rng: RefCell::new(sim::Rng::new(seed).fork("sqlite-vfs")),
        });
        let name =
            CString::new(format!("commitlab-{:p}", &*ctx)).map_err(|e| format!("vfs name: {e}"))?;
        let mut vfs = Box::new(ffi::sqlite3_vfs {
            iVersion: 2,
            szOsFile: std::mem::size_of::<File>() as c_int,
            mxPathname: 512,
            pNext: std::ptr::null_mut(),
            zName: name.as_ptr(),
            pAppData: &*ctx as *const VfsCtx as *mut c_void,
            xOpen: Some(x_open),
            xDelete: Some(x_delete),
            xAccess: Some(x_access),
            xFullPathname: Some(x_full_pathname),
            xDlOpen: None,
            xDlError: None,
            xDlSym: None,
            xDlClose: None,
            xRandomness: Some(x_randomness),
            xSleep: Some(x_sleep),
            xCurrentTime: Some(x_current_time),
            xGetLastError: Some(x_get_last_error),
            xCurrentTimeInt64: Some(x_current_time_int64),
            xSetSystemCall: None,
            xGetSystemCall: None,
            xNextSystemCall: None,
        });
        // SAFETY: the vfs struct, its name and its context are boxed and outlive the
        // registration (unregistered in `Drop` before they are freed).
        let rc = unsafe { ffi::sqlite3_vfs_register(&mut *vfs, 0) };
        if rc != ffi::SQLITE_OK {
            return Err(format!("sqlite3_vfs_register failed: {rc}"));
        }
        Ok(Registered {
            vfs,
            name,
            ctx: Some(ctx),
            live: true,
        })
    }

    pub fn name(&self) -> &str {
        self.name.to_str().unwrap_or("commitlab")
    }
    pub fn ctx(&self) -> &VfsCtx {
        self.ctx.as_deref().expect("context present until into_fs")
    }
    pub fn take_error(&self) -> Option<String> {
        self.ctx().last_error.borrow_mut().take()
    }

    /// Unregisters the VFS and hands back the file layer (and with it the device).
    pub fn into_fs(mut self) -> DeviceFs {
        self.unregister();
        let ctx = self.ctx.take().expect("context present until into_fs");
        ctx.fs.into_inner()
    }

    fn unregister(&mut self) {
        if self.live {
            // SAFETY: registered in `new`; SQLite only unlinks it.
            unsafe { ffi::sqlite3_vfs_unregister(&mut *self.vfs) };
            self.live = false;
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.unregister();
    }
}

/// Whether the SQLite library was compiled with SQLITE_ENABLE_BATCH_ATOMIC_WRITE.
pub fn batch_atomic_compiled() -> bool {
    // SAFETY: a static NUL-terminated string; the call reads it only.
    unsafe { ffi::sqlite3_compileoption_used(c"ENABLE_BATCH_ATOMIC_WRITE".as_ptr()) == 1 }
}

/// The bundled SQLite's version string.
pub fn sqlite_version() -> String {
    // SAFETY: sqlite3_libversion returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(ffi::sqlite3_libversion()) }
        .to_string_lossy()
        .into_owned()
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

/// Runs a callback body; a panic becomes `SQLITE_INTERNAL` with its message kept.
fn guard(ctx: *const VfsCtx, f: impl FnOnce() -> c_int) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(rc) => rc,
        Err(p) => {
            let msg = format!("panic in the commitlab VFS: {}", panic_text(p));
            if !ctx.is_null() {
                // SAFETY: ctx points at the registered VfsCtx (see `Registered`).
                let c = unsafe { &*ctx };
                if let Ok(mut e) = c.last_error.try_borrow_mut() {
                    *e = Some(msg);
                }
            }
            ffi::SQLITE_INTERNAL
        }
    }
}

unsafe fn vfs_ctx(vfs: *mut ffi::sqlite3_vfs) -> *const VfsCtx {
    (*vfs).pAppData as *const VfsCtx
}

fn file_of_name(name: &str) -> FileId {
    if name.ends_with("-journal") {
        FileId::Journal
    } else if name.ends_with("-wal") {
        FileId::Wal
    } else {
        FileId::Db
    }
}

static IO_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_lock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let ctxp = vfs_ctx(vfs);
    guard(ctxp, || {
        let ctx = &*ctxp;
        let f = file as *mut File;
        // Until initialised, SQLite must not call xClose on it.
        (*f).base.pMethods = std::ptr::null();
        let persistent = flags
            & (ffi::SQLITE_OPEN_MAIN_DB | ffi::SQLITE_OPEN_MAIN_JOURNAL | ffi::SQLITE_OPEN_WAL)
            != 0;
        let kind = if name.is_null() || !persistent {
            Kind::Mem(Vec::new())
        } else {
            let id = if flags & ffi::SQLITE_OPEN_MAIN_JOURNAL != 0 {
                FileId::Journal
            } else if flags & ffi::SQLITE_OPEN_WAL != 0 {
                FileId::Wal
            } else {
                FileId::Db
            };
            let mut fs = ctx.fs.borrow_mut();
            if !fs.meta(id).exists {
                if flags & ffi::SQLITE_OPEN_CREATE == 0 {
                    return ctx.fail(
                        ffi::SQLITE_CANTOPEN,
                        format!("the {} file does not exist on the device", id.name()),
                    );
                }
                fs.create(id);
            }
            Kind::Dev(id)
        };
        std::ptr::write(
            f,
            File {
                base: ffi::sqlite3_file {
                    pMethods: &IO_METHODS,
                },
                ctx: ctxp,
                kind,
                delete_on_close: flags & ffi::SQLITE_OPEN_DELETEONCLOSE != 0,
            },
        );
        if !out_flags.is_null() {
            *out_flags = flags;
        }
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    _sync_dir: c_int,
) -> c_int {
    let ctxp = vfs_ctx(vfs);
    guard(ctxp, || {
        let ctx = &*ctxp;
        if name.is_null() {
            return ffi::SQLITE_OK;
        }
        let n = CStr::from_ptr(name).to_string_lossy();
        let id = file_of_name(&n);
        let r = ctx.fs.borrow_mut().delete(id);
        match r {
            Ok(()) => ffi::SQLITE_OK,
            Err(e) => ctx.fs_err(ffi::SQLITE_IOERR_DELETE, e),
        }
    })
}

unsafe extern "C" fn x_access(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    _flags: c_int,
    out: *mut c_int,
) -> c_int {
    let ctxp = vfs_ctx(vfs);
    guard(ctxp, || {
        let ctx = &*ctxp;
        let n = if name.is_null() {
            String::new()
        } else {
            CStr::from_ptr(name).to_string_lossy().into_owned()
        };
        let exists = if n.ends_with("-shm") || n.is_empty() {
            false
        } else {
            ctx.fs.borrow().meta(file_of_name(&n)).exists
        };
        *out = c_int::from(exists);
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_full_pathname(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n_out: c_int,
    out: *mut c_char,
) -> c_int {
    guard(vfs_ctx(vfs), || {
        let src = if name.is_null() {
            &[][..]
        } else {
            CStr::from_ptr(name).to_bytes()
        };
        let n = usize::try_from(n_out).unwrap_or(0);
        if src.len() + 1 > n {
            return ffi::SQLITE_CANTOPEN;
        }
        std::ptr::copy_nonoverlapping(src.as_ptr() as *const c_char, out, src.len());
        *out.add(src.len()) = 0;
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_randomness(vfs: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    let ctxp = vfs_ctx(vfs);
    guard(ctxp, || {
        let ctx = &*ctxp;
        let mut r = ctx.rng.borrow_mut();
        let n = usize::try_from(n).unwrap_or(0);
        for i in 0..n {
            *out.add(i) = r.next_u64() as u8 as c_char;
        }
        n as c_int
    })
}

unsafe extern "C" fn x_sleep(vfs: *mut ffi::sqlite3_vfs, micros: c_int) -> c_int {
    // No wall-clock sleep inside the simulation; nothing waits on another connection.
    guard(vfs_ctx(vfs), || micros)
}

unsafe fn now_ms(vfs: *mut ffi::sqlite3_vfs) -> i64 {
    let ctx = &*vfs_ctx(vfs);
    let ns = ctx.fs.try_borrow().map(|f| f.now.as_ns()).unwrap_or(0);
    EPOCH_UNIX_MS + (ns / 1_000_000) as i64
}

unsafe extern "C" fn x_current_time(vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    guard(vfs_ctx(vfs), || {
        *out = 2_440_587.5 + now_ms(vfs) as f64 / 86_400_000.0;
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_current_time_int64(vfs: *mut ffi::sqlite3_vfs, out: *mut i64) -> c_int {
    guard(vfs_ctx(vfs), || {
        *out = 210_866_760_000_000 + now_ms(vfs);
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_get_last_error(
    vfs: *mut ffi::sqlite3_vfs,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    let ctxp = vfs_ctx(vfs);
    guard(ctxp, || {
        let ctx = &*ctxp;
        let n = usize::try_from(n).unwrap_or(0);
        if n == 0 {
            return 0;
        }
        let msg = ctx.last_error.borrow().clone().unwrap_or_default();
        let b = msg.as_bytes();
        let k = b.len().min(n - 1);
        std::ptr::copy_nonoverlapping(b.as_ptr() as *const c_char, out, k);
        *out.add(k) = 0;
        0
    })
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file as *mut File;
    let ctxp = (*f).ctx;
    guard(ctxp, || {
        let ctx = &*ctxp;
        let mut rc = ffi::SQLITE_OK;
        if let (Kind::Dev(id), true) = (&(*f).kind, (*f).delete_on_close) {
            if let Err(e) = ctx.fs.borrow_mut().delete(*id) {
                rc = ctx.fs_err(ffi::SQLITE_IOERR_DELETE, e);
            }
        }
        std::ptr::drop_in_place(&mut (*f).kind);
        (*f).base.pMethods = std::ptr::null();
        rc
    })
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let f = file as *mut File;
    let ctxp = (*f).ctx;
    guard(ctxp, || {
        let ctx = &*ctxp;
        let (Ok(n), Ok(off)) = (usize::try_from(amt), u64::try_from(off)) else {
            return ctx.fail(ffi::SQLITE_IOERR_READ, "negative read".into());
        };
        let out = std::slice::from_raw_parts_mut(buf as *mut u8, n);
        let got = match &(*f).kind {
            Kind::Mem(v) => {
                out.fill(0);
                let lo = (off as usize).min(v.len());
                let hi = (off as usize).saturating_add(n).min(v.len());
                out[..hi - lo].copy_from_slice(&v[lo..hi]);
                hi - lo
            }
            Kind::Dev(id) => match ctx.fs.borrow_mut().read(*id, off, out) {
                Ok(k) => k,
                Err(e) => return ctx.fs_err(ffi::SQLITE_IOERR_READ, e),
            },
        };
        if got < n {
            ffi::SQLITE_IOERR_SHORT_READ
        } else {
            ffi::SQLITE_OK
        }
    })
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let f = file as *mut File;
    let ctxp = (*f).ctx;
    guard(ctxp, || {
        let ctx = &*ctxp;
        let (Ok(n), Ok(off)) = (usize::try_from(amt), u64::try_from(off)) else {
            return ctx.fail(ffi::SQLITE_IOERR_WRITE, "negative write".into());
        };
        let data = std::slice::from_raw_parts(buf as *const u8, n);
        match &mut (*f).kind {
            Kind::Mem(v) => {
                let end = off as usize + n;
                if v.len() < end {
                    v.resize(end, 0);
                }
                v[off as usize..end].copy_from_slice(data);
                ffi::SQLITE_OK
            }
            Kind::Dev(id) => {
                let mut fs = ctx.fs.borrow_mut();
                let p = fs.page_bytes();
                if *id == FileId::Db && n > 0 && p % n != 0 {
                    return ctx.fail(
                        ffi::SQLITE_IOERR_WRITE,
                        format!(
                            "the SQLite page size ({n} bytes) does not divide the flash page ({p} bytes); use a page size that does"
                        ),
                    );
                }
                match fs.write(*id, off, data) {
                    Ok(()) => ffi::SQLITE_OK,
                    Err(e) => ctx.fs_err(ffi::SQLITE_IOERR_WRITE, e),
                }
            }
        }
    })
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    let f = file as *mut File;
    let ctxp = (*f).ctx;
    guard(ctxp, || {
        let ctx = &*ctxp;
        let size = u64::try_from(size).unwrap_or(0);
        match &mut (*f).kind {
            Kind::Mem(v) => {
                v.truncate(size as usize);
                ffi::SQLITE_OK
            }
            Kind::Dev(id) => match ctx.fs.borrow_mut().truncate(*id, size) {
                Ok(()) => ffi::SQLITE_OK,
                Err(e) => ctx.fs_err(ffi::SQLITE_IOERR_TRUNCATE, e),
            },
        }
    })
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    let f = file as *mut File;
    let ctxp = (*f).ctx;
    guard(ctxp, || {
        let ctx = &*ctxp;
        match &(*f).kind {
            Kind::Mem(_) => ffi::SQLITE_OK,
            Kind::Dev(id) => match ctx.fs.borrow_mut().sync(*id) {
                Ok(()) => ffi::SQLITE_OK,
                Err(e) => ctx.fs_err(ffi::SQLITE_IOERR_FSYNC, e),
            },
        }
    })
}

unsafe extern "C" fn x_file_size(
    file: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    let f = file as *mut File;
    let ctxp = (*f).ctx;
    guard(ctxp, || {
        let ctx = &*ctxp;
        *out = match &(*f).kind {
            Kind::Mem(v) => v.len() as i64,
            Kind::Dev(id) => ctx.fs.borrow().meta(*id).size as i64,
        };
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_lock(file: *mut ffi::sqlite3_file, _level: c_int) -> c_int {
    // One connection per VFS: locks are granted at once.
    guard((*(file as *mut File)).ctx, || ffi::SQLITE_OK)
}

unsafe extern "C" fn x_check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    guard((*(file as *mut File)).ctx, || {
        *out = 0;
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    _arg: *mut c_void,
) -> c_int {
    let f = file as *mut File;
    let ctxp = (*f).ctx;
    guard(ctxp, || {
        let ctx = &*ctxp;
        if !matches!((*f).kind, Kind::Dev(FileId::Db)) {
            return ffi::SQLITE_NOTFOUND;
        }
        let (r, code) = match op {
            ffi::SQLITE_FCNTL_BEGIN_ATOMIC_WRITE => (
                ctx.fs.borrow_mut().begin_batch(),
                ffi::SQLITE_IOERR_BEGIN_ATOMIC,
            ),
            ffi::SQLITE_FCNTL_COMMIT_ATOMIC_WRITE => (
                ctx.fs.borrow_mut().commit_batch(),
                ffi::SQLITE_IOERR_COMMIT_ATOMIC,
            ),
            ffi::SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE => (
                ctx.fs.borrow_mut().rollback_batch(),
                ffi::SQLITE_IOERR_ROLLBACK_ATOMIC,
            ),
            _ => return ffi::SQLITE_NOTFOUND,
        };
        match r {
            Ok(()) => ffi::SQLITE_OK,
            // A batch the device cannot take is an I/O error, so SQLite falls back to its
            // journal (pager.c: `(rc&0xFF)==SQLITE_IOERR`), never SQLITE_FULL.
            Err(e) => ctx.fail(code, e.to_string()),
        }
    })
}

unsafe extern "C" fn x_sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file as *mut File;
    let ctxp = (*f).ctx;
    guard(ctxp, || {
        let p = (*ctxp)
            .fs
            .try_borrow()
            .map(|fs| fs.page_bytes())
            .unwrap_or(512);
        p.clamp(512, 65_536) as c_int
    })
}

unsafe extern "C" fn x_device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file as *mut File;
    let ctxp = (*f).ctx;
    guard(ctxp, || {
        // A write rewrites whole flash pages out of place (read-modify-write), so a power
        // cut during it leaves bytes outside the written range as they were.
        let mut c = ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE;
        if matches!((*f).kind, Kind::Dev(FileId::Db)) {
            if let Ok(fs) = (*ctxp).fs.try_borrow() {
                if fs.opts.batch && fs.dev.info().atomic {
                    c |= ffi::SQLITE_IOCAP_BATCH_ATOMIC;
                }
            }
        }
        c
    })
}
