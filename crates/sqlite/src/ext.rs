//! The `commitlab` URI VFS: any SQLite client opens a database on an emulated device by
//! naming it, `file:x.db?vfs=commitlab&protocol=bpcc&journal=batch`.
//!
//! This is what the loadable extension (`crates/sqlite-ext`, for the stock `sqlite3` shell
//! and any client that loads extensions) registers. Unlike `vfs::Registered` (one VFS per
//! run, one device), this VFS serves many databases, one device each, made on the first
//! open of a name from its URI parameters and kept for the life of the process (so a
//! database can be closed and opened again, like a RAM disk that keeps its contents until
//! the process ends). The files of one database (main, `-journal`, `-wal`) are the
//! device's extents exactly as with `vfs::Registered` (same file layer, same I/O methods);
//! temporary files and statement journals go to SQLite's default VFS.
//!
//! URI parameters (docs/SQLITE.md, "The loadable extension"):
//!
//! | key | value | default |
//! |---|---|---|
//! | `protocol` | a commit protocol (`none`, `tc`, ..., `mhl-m`) | `none` |
//! | `journal` | `delete`, `truncate`, `persist`, `wal`, `batch` | `delete` (`batch` needs an atomic protocol) |
//! | `preset` | a device preset | `default` |
//! | `config` | a TOML configuration file | none |
//! | `seed` | the run's seed | the configuration's |
//! | `page_bytes` | `nand.page_bytes` | the preset's |
//! | `max_tx_pages` | `ftl.max_tx_pages` | the preset's |
//! | `page_size` | SQLite's page size (must divide the flash page) | the flash page size |
//!
//! (`mode` is SQLite's own URI parameter, ro/rw/rwc/memory, hence `journal`.) Any other
//! key SQLite does not know either, an unknown protocol or journal mode, a page size that
//! does not divide the flash page, `journal=batch` on a protocol without transactions or on
//! a SQLite built without SQLITE_ENABLE_BATCH_ATOMIC_WRITE: the open fails with
//! SQLITE_CANTOPEN and the message (naming the key) is printed on standard error and kept
//! for `last_error()`. A connection opened on this VFS gets the journal mode, the page
//! size and `synchronous = FULL` from an auto-extension (`conn_init`); WAL runs with
//! `locking_mode = EXCLUSIVE` (the VFS has no shared memory). The SQL function
//! `commitlab_stats()` returns the database's device counters and simulated time as JSON.
//!
//! One thread: the registry is not synchronised, so a process uses the VFS from one
//! thread at a time (the `sqlite3` shell does).

use crate::run::{build_fs, Mode, SqliteOptions};
use crate::vfs::{self, guard, VfsCtx};
use libsqlite3_sys as ffi;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicPtr, Ordering};
use world::{Config, ConfigSource};

/// The VFS's name in URIs.
pub const NAME: &str = "commitlab";

/// The URI keys this VFS reads.
pub const KEYS: [&str; 8] = [
    "protocol",
    "journal",
    "preset",
    "config",
    "seed",
    "page_bytes",
    "max_tx_pages",
    "page_size",
];

/// SQLite's own URI keys (sqlite3ParseUri and the pager), passed through.
const SQLITE_KEYS: [&str; 6] = ["vfs", "mode", "cache", "psow", "nolock", "immutable"];

/// What a database was opened with (its URI parameters, parsed).
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub protocol: String,
    pub journal: Mode,
    pub preset: Option<String>,
    pub config: Option<String>,
    pub seed: Option<u64>,
    pub page_bytes: Option<u32>,
    pub max_tx_pages: Option<u32>,
    pub page_size: u32,
}

impl Params {
    /// Parses `(key, value)` pairs; a key neither this VFS nor SQLite knows is refused.
    pub fn parse<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Params, String> {
        let mut p = Params {
            protocol: "none".into(),
            journal: Mode::Delete,
            preset: None,
            config: None,
            seed: None,
            page_bytes: None,
            max_tx_pages: None,
            page_size: 0,
        };
        fn num<T: std::str::FromStr>(k: &str, v: &str) -> Result<T, String> {
            v.parse()
                .map_err(|_| format!("{k}: '{v}' is not a non-negative integer"))
        }
        for (k, v) in pairs {
            match k {
                "protocol" => {
                    ssd::protocol::lookup(v).map_err(|e| format!("protocol: {e}"))?;
                    p.protocol = v.into();
                }
                "journal" => {
                    p.journal = Mode::parse(v).map_err(|_| {
                        format!(
                            "journal: unknown journal mode '{v}' (known: delete, truncate, persist, wal, batch)"
                        )
                    })?
                }
                "preset" => p.preset = Some(v.into()),
                "config" => p.config = Some(v.into()),
                "seed" => p.seed = Some(num(k, v)?),
                "page_bytes" => p.page_bytes = Some(num(k, v)?),
                "max_tx_pages" => p.max_tx_pages = Some(num(k, v)?),
                "page_size" => p.page_size = num(k, v)?,
                _ if SQLITE_KEYS.contains(&k) => {}
                _ => {
                    return Err(format!(
                        "{k}: unknown URI parameter of the commitlab VFS (known: {})",
                        KEYS.join(", ")
                    ))
                }
            }
        }
        Ok(p)
    }

    /// The device configuration and SQLite options these parameters describe, checked.
    pub fn resolve(&self) -> Result<(Config, SqliteOptions), String> {
        // A registry name (checked in `parse`): letters, digits and '-' only.
        let mut sets = vec![format!("protocol.name=\"{}\"", self.protocol)];
        if let Some(b) = self.page_bytes {
            sets.push(format!("nand.page_bytes={b}"));
        }
        if let Some(m) = self.max_tx_pages {
            sets.push(format!("ftl.max_tx_pages={m}"));
        }
        let src = ConfigSource {
            preset: self.preset.clone(),
            file: self.config.as_ref().map(Into::into),
            sets,
        };
        let mut cfg = Config::load_over(None, &src).map_err(|e| e.to_string())?;
        if let Some(s) = self.seed {
            cfg.seed = s;
        }
        cfg.validate().map_err(|e| e.to_string())?;
        let o = SqliteOptions {
            mode: self.journal,
            page_size: self.page_size,
            ..Default::default()
        };
        o.validate(&cfg).map_err(|e| {
            // The options' keys are the run's; in a URI they are these parameters.
            e.to_string()
                .replace("sqlite.mode", "journal")
                .replace("sqlite.page_size", "page_size")
        })?;
        Ok((cfg, o))
    }
}

struct Db {
    ctx: Box<VfsCtx>,
    params: Params,
    cfg: Config,
    opts: SqliteOptions,
}

struct Registry {
    vfs: Box<ffi::sqlite3_vfs>,
    fallback: *mut ffi::sqlite3_vfs,
    dbs: RefCell<BTreeMap<String, Db>>,
    last_error: RefCell<Option<String>>,
    rng: RefCell<sim::Rng>,
}

static REGISTRY: AtomicPtr<Registry> = AtomicPtr::new(std::ptr::null_mut());

fn registry() -> Option<&'static Registry> {
    let p = REGISTRY.load(Ordering::Acquire);
    // SAFETY: set once in `register` to a leaked Box, never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// The message of the last open this VFS refused, if any (taken).
pub fn last_error() -> Option<String> {
    registry().and_then(|r| r.last_error.borrow_mut().take())
}

/// Registers the `commitlab` VFS (not as the default) and the auto-extension that sets up
/// each connection opened on it. Idempotent.
pub fn register() -> Result<(), String> {
    if registry().is_some() {
        return Ok(());
    }
    // SAFETY: a null name asks for the default VFS; SQLite owns it.
    let fallback = unsafe { ffi::sqlite3_vfs_find(std::ptr::null()) };
    if fallback.is_null() {
        return Err("SQLite has no default VFS for temporary files".into());
    }
    // SAFETY: fallback is a registered VFS.
    let fb_size = unsafe { (*fallback).szOsFile };
    let name = CString::new(NAME).map_err(|e| e.to_string())?;
    let vfs = Box::new(ffi::sqlite3_vfs {
        iVersion: 2,
        szOsFile: fb_size.max(vfs::file_size()),
        mxPathname: 512,
        pNext: std::ptr::null_mut(),
        zName: name.into_raw(),
        pAppData: std::ptr::null_mut(),
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
    let reg = Box::into_raw(Box::new(Registry {
        vfs,
        fallback,
        dbs: RefCell::new(BTreeMap::new()),
        last_error: RefCell::new(None),
        rng: RefCell::new(sim::Rng::new(1).fork("sqlite-uri-vfs")),
    }));
    // SAFETY: reg is leaked (lives for the process); the vfs struct inside it too.
    unsafe {
        (*reg).vfs.pAppData = reg as *mut c_void;
        let rc = ffi::sqlite3_vfs_register(&mut *(*reg).vfs, 0);
        if rc != ffi::SQLITE_OK {
            return Err(format!("sqlite3_vfs_register failed: {rc}"));
        }
        #[cfg(not(feature = "loadable_extension"))]
        let rc = ffi::sqlite3_auto_extension(Some(conn_init));
        // The routines table declares the entry point as `void (*)(void)` (sqlite3ext.h);
        // SQLite calls it with the three arguments all the same.
        #[cfg(feature = "loadable_extension")]
        let rc = ffi::sqlite3_auto_extension(Some(std::mem::transmute::<
            unsafe extern "C" fn(
                *mut ffi::sqlite3,
                *mut *mut c_char,
                *const ffi::sqlite3_api_routines,
            ) -> c_int,
            unsafe extern "C" fn(),
        >(conn_init)));
        if rc != ffi::SQLITE_OK {
            return Err(format!("sqlite3_auto_extension failed: {rc}"));
        }
    }
    REGISTRY.store(reg, Ordering::Release);
    Ok(())
}

/// The database a file name belongs to (the main file's name without `-journal`/`-wal`).
fn db_key(name: &str) -> &str {
    name.strip_suffix("-journal")
        .or_else(|| name.strip_suffix("-wal"))
        .unwrap_or(name)
}

unsafe fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// The URI parameters SQLite attached to a main-database name.
unsafe fn uri_pairs(name: *const c_char) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for i in 0.. {
        let k = ffi::sqlite3_uri_key(name, i);
        if k.is_null() {
            break;
        }
        let v = ffi::sqlite3_uri_parameter(name, k);
        out.push((cstr(k), cstr(v)));
    }
    out
}

impl Registry {
    fn refuse(&self, msg: String) -> c_int {
        eprintln!("commitlab VFS: {msg}");
        *self.last_error.borrow_mut() = Some(msg);
        ffi::SQLITE_CANTOPEN
    }

    /// The database `key` with `params`, made on its first open.
    fn db(&self, key: &str, params: Params) -> Result<*const VfsCtx, String> {
        let mut dbs = self.dbs.borrow_mut();
        if let Some(d) = dbs.get(key) {
            if d.params != params {
                return Err(format!(
                    "{key} is open on a device made with {:?}; open it with the same parameters",
                    d.params
                ));
            }
            return Ok(&*d.ctx);
        }
        let (cfg, opts) = params.resolve()?;
        let mut fs = build_fs(&cfg, &opts).map_err(|e| e.to_string())?;
        // No crash images here: an overwritten page version is never read again.
        fs.opts.reclaim_versions = true;
        let ctx = Box::new(VfsCtx::new(fs, cfg.seed));
        let p: *const VfsCtx = &*ctx;
        dbs.insert(
            key.to_string(),
            Db {
                ctx,
                params,
                cfg,
                opts,
            },
        );
        Ok(p)
    }

    fn ctx_of(&self, name: &str) -> Option<*const VfsCtx> {
        self.dbs
            .borrow()
            .get(db_key(name))
            .map(|d| &*d.ctx as *const VfsCtx)
    }
}

unsafe fn reg_of(vfs: *mut ffi::sqlite3_vfs) -> &'static Registry {
    &*((*vfs).pAppData as *const Registry)
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    guard(std::ptr::null(), || {
        let reg = reg_of(vfs);
        if !vfs::on_device(name, flags) {
            let fb = reg.fallback;
            return match (*fb).xOpen {
                Some(open) => open(fb, name, file, flags, out_flags),
                None => ffi::SQLITE_CANTOPEN,
            };
        }
        let n = cstr(name);
        let ctx = if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
            let pairs = uri_pairs(name);
            let params = match Params::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))) {
                Ok(p) => p,
                Err(e) => return reg.refuse(e),
            };
            match reg.db(&n, params) {
                Ok(c) => c,
                Err(e) => return reg.refuse(format!("{n}: {e}")),
            }
        } else {
            match reg.ctx_of(&n) {
                Some(c) => c,
                None => return reg.refuse(format!("{n}: no database of this VFS owns it")),
            }
        };
        vfs::open_file(ctx, name, file, flags, out_flags)
    })
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    _sync_dir: c_int,
) -> c_int {
    guard(std::ptr::null(), || {
        let n = cstr(name);
        match reg_of(vfs).ctx_of(&n) {
            Some(c) => vfs::delete_file(&*c, &n),
            None => ffi::SQLITE_OK,
        }
    })
}

unsafe extern "C" fn x_access(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    _flags: c_int,
    out: *mut c_int,
) -> c_int {
    guard(std::ptr::null(), || {
        let n = cstr(name);
        let e = reg_of(vfs)
            .ctx_of(&n)
            .is_some_and(|c| vfs::file_exists(&*c, &n));
        *out = c_int::from(e);
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_full_pathname(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n_out: c_int,
    out: *mut c_char,
) -> c_int {
    // Names are keys of this process's registry, not paths: kept as given.
    guard(std::ptr::null(), || {
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
    guard(std::ptr::null(), || {
        let mut r = reg_of(vfs).rng.borrow_mut();
        let n = usize::try_from(n).unwrap_or(0);
        for i in 0..n {
            *out.add(i) = r.next_u64() as u8 as c_char;
        }
        n as c_int
    })
}

unsafe extern "C" fn x_sleep(_vfs: *mut ffi::sqlite3_vfs, micros: c_int) -> c_int {
    micros
}

/// The latest simulated instant of any database (ms past the fixed epoch).
unsafe fn now_ms(vfs: *mut ffi::sqlite3_vfs) -> i64 {
    let reg = reg_of(vfs);
    let ns = reg.dbs.try_borrow().map_or(0, |d| {
        d.values()
            .filter_map(|db| db.ctx.fs.try_borrow().ok().map(|f| f.now.as_ns()))
            .max()
            .unwrap_or(0)
    });
    vfs::EPOCH_UNIX_MS + (ns / 1_000_000) as i64
}

unsafe extern "C" fn x_current_time(vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    guard(std::ptr::null(), || {
        *out = 2_440_587.5 + now_ms(vfs) as f64 / 86_400_000.0;
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_current_time_int64(vfs: *mut ffi::sqlite3_vfs, out: *mut i64) -> c_int {
    guard(std::ptr::null(), || {
        *out = 210_866_760_000_000 + now_ms(vfs);
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_get_last_error(
    vfs: *mut ffi::sqlite3_vfs,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    guard(std::ptr::null(), || {
        let n = usize::try_from(n).unwrap_or(0);
        if n == 0 {
            return 0;
        }
        let msg = reg_of(vfs).last_error.borrow().clone().unwrap_or_default();
        let b = msg.as_bytes();
        let k = b.len().min(n - 1);
        std::ptr::copy_nonoverlapping(b.as_ptr() as *const c_char, out, k);
        *out.add(k) = 0;
        0
    })
}

/// Copies `msg` into memory SQLite frees (for an auto-extension's error message).
unsafe fn sqlite_string(msg: &str) -> *mut c_char {
    let b = msg.as_bytes();
    let p = ffi::sqlite3_malloc(b.len() as c_int + 1) as *mut c_char;
    if !p.is_null() {
        std::ptr::copy_nonoverlapping(b.as_ptr() as *const c_char, p, b.len());
        *p.add(b.len()) = 0;
    }
    p
}

/// The database of a connection, if its main file is on this VFS.
unsafe fn db_of_conn(db: *mut ffi::sqlite3) -> Option<(&'static Registry, String)> {
    let reg = registry()?;
    let mut p: *mut ffi::sqlite3_vfs = std::ptr::null_mut();
    let rc = ffi::sqlite3_file_control(
        db,
        c"main".as_ptr(),
        ffi::SQLITE_FCNTL_VFS_POINTER,
        &mut p as *mut _ as *mut c_void,
    );
    if rc != ffi::SQLITE_OK || !std::ptr::eq(p, &*reg.vfs) {
        return None;
    }
    let key = cstr(ffi::sqlite3_db_filename(db, c"main".as_ptr()));
    reg.dbs.borrow().contains_key(&key).then_some((reg, key))
}

/// The pragmas a connection on this VFS starts with.
pub fn pragmas(o: &SqliteOptions, flash_page: u32) -> Result<String, String> {
    let page = o
        .effective_page_size(flash_page)
        .map_err(|e| e.to_string())?;
    let mut s = String::new();
    if o.mode == Mode::Wal {
        // No shared memory: WAL keeps its index in heap memory (run.rs, Session::open).
        s.push_str("PRAGMA locking_mode = EXCLUSIVE; ");
    }
    s.push_str(&format!(
        "PRAGMA page_size = {page}; PRAGMA synchronous = FULL; PRAGMA journal_mode = {};",
        o.mode.journal_mode()
    ));
    Ok(s)
}

/// The auto-extension: every connection whose main database is on this VFS gets the
/// journal mode, page size and `synchronous = FULL`, and `commitlab_stats()`.
unsafe extern "C" fn conn_init(
    db: *mut ffi::sqlite3,
    err: *mut *mut c_char,
    _api: *const ffi::sqlite3_api_routines,
) -> c_int {
    let r = std::panic::catch_unwind(|| {
        let Some((reg, key)) = db_of_conn(db) else {
            return Ok(());
        };
        let sql = {
            let dbs = reg.dbs.borrow();
            let d = &dbs[&key];
            pragmas(&d.opts, d.cfg.nand.page_bytes)?
        };
        let c = CString::new(sql).map_err(|e| e.to_string())?;
        let mut e: *mut c_char = std::ptr::null_mut();
        let rc = ffi::sqlite3_exec(db, c.as_ptr(), None, std::ptr::null_mut(), &mut e);
        if rc != ffi::SQLITE_OK {
            let m = cstr(e);
            ffi::sqlite3_free(e as *mut c_void);
            return Err(format!("setting up {key}: {m}"));
        }
        let rc = ffi::sqlite3_create_function_v2(
            db,
            c"commitlab_stats".as_ptr(),
            0,
            ffi::SQLITE_UTF8,
            std::ptr::null_mut(),
            Some(stats_fn),
            None,
            None,
            None,
        );
        if rc != ffi::SQLITE_OK {
            return Err(format!("registering commitlab_stats: {rc}"));
        }
        Ok(())
    });
    let msg = match r {
        Ok(Ok(())) => return ffi::SQLITE_OK,
        Ok(Err(m)) => m,
        Err(_) => "panic while setting up a commitlab connection".to_string(),
    };
    if !err.is_null() {
        *err = sqlite_string(&msg);
    }
    ffi::SQLITE_ERROR
}

/// The device's counters for the database `key`, as JSON.
pub fn stats_json(key: &str) -> Option<String> {
    let reg = registry()?;
    let dbs = reg.dbs.try_borrow().ok()?;
    let d = dbs.get(key)?;
    let fs = d.ctx.fs.try_borrow().ok()?;
    let n = fs.dev.core.nand.counters();
    let v = serde_json::json!({
        "protocol": d.cfg.protocol.name,
        "journal": d.opts.mode.name(),
        "seed": d.cfg.seed,
        "flash_page_bytes": d.cfg.nand.page_bytes,
        "sim_time_ns": fs.now.as_ns(),
        "device_writes": fs.dev.core.stats.host_writes,
        "device_reads": fs.dev.core.stats.host_reads,
        "nand_programs": n.programs,
        "nand_erases": n.erases,
        "gc_page_migrations": fs.dev.core.stats.gc_page_migrations,
        "vfs": fs.stats,
    });
    Some(v.to_string())
}

unsafe extern "C" fn stats_fn(
    cx: *mut ffi::sqlite3_context,
    _n: c_int,
    _args: *mut *mut ffi::sqlite3_value,
) {
    let r = std::panic::catch_unwind(|| {
        let db = ffi::sqlite3_context_db_handle(cx);
        let key = cstr(ffi::sqlite3_db_filename(db, c"main".as_ptr()));
        stats_json(&key)
    });
    match r {
        Ok(Some(s)) => {
            let c = CString::new(s).unwrap_or_default();
            ffi::sqlite3_result_text(cx, c.as_ptr(), -1, ffi::SQLITE_TRANSIENT());
        }
        _ => ffi::sqlite3_result_error(
            cx,
            c"commitlab_stats: the main database is not on the commitlab VFS".as_ptr(),
            -1,
        ),
    }
}
