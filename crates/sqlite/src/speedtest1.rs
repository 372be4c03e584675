//! SQLite's own benchmark program, `speedtest1` (SQLite's test/speedtest1.c), on a
//! commitlab device.
//!
//! speedtest1.c is not in this repository: `scripts/fetch-speedtest1.sh` takes it from
//! Debian's sqlite3 source package (SQLite 3.46.1, trixie) into
//! `target/speedtest1/speedtest1.c`, and a run names it (`source`). It is compiled at run
//! time with the system C compiler (`$CC`, else `cc`) into a shared object together with
//! `speedtest1_shim.c` and the bundled SQLite's own headers (embedded here at build time),
//! and loaded into this process. The object calls the bundled SQLite (the library this
//! crate links, with the VFS registered in it) through the `sqlite3_api_routines` table
//! SQLite hands to extensions, so speedtest1 runs against exactly the library every other
//! `commitlab sqlite` command uses. The object is cached in the user's cache directory
//! (`$XDG_CACHE_HOME` or `~/.cache`, `commitlab/speedtest1/`), named by a hash of its inputs.
//!
//! What the shim changes, for speedtest1's code only (see its header): its clock is the
//! VFS's, so the per-test times it prints are simulated device time (SQLite's CPU time is
//! not on the clock: a test that touches no device page takes 0 ms); its output goes to
//! this module (which also reads test boundaries from it, for per-test device counters);
//! a commit hook counts write transactions and their commit latency (from the commit hook,
//! called when SQLite starts committing, to the return of the speedtest1 call that
//! committed); `exit` returns here instead of ending the process.
//!
//! The mapping of a run to speedtest1's options: `--vfs` the run's registered VFS, the
//! database `commitlab.db` on the device, `--pagesize` the run's SQLite page size (it must
//! divide the flash page), `--journal` the mode's journal mode (batch: DELETE, with the VFS
//! reporting batch-atomic writes), and for WAL `--exclusive` (the VFS has no shared
//! memory). Options of speedtest1 that would configure the already initialised library
//! (`sqlite3_config`), start worker threads, choose another VFS, journal mode, page size or
//! database, or print the host process's own counters are refused, naming the option.
//!
//! After speedtest1 closes its connection, the run opens the database again through the
//! same VFS and requires `PRAGMA integrity_check` to say `ok`.

use crate::run::{
    metrics_between, snapshot_fs, Mode, OptionError, RunError, Snapshot, SqliteMetrics,
    SqliteOptions, Txns,
};
use crate::store::DeviceFs;
use crate::vfs::Registered;
use libsqlite3_sys as ffi;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use sim::histogram::Histogram;
use sim::SimTime;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CString};
use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use world::Config;

const SHIM: &str = include_str!("speedtest1_shim.c");
const SQLITE3_H: &str = include_str!(concat!(env!("COMMITLAB_SQLITE3_INCLUDE"), "/sqlite3.h"));
const SQLITE3EXT_H: &str =
    include_str!(concat!(env!("COMMITLAB_SQLITE3_INCLUDE"), "/sqlite3ext.h"));

/// Where `scripts/fetch-speedtest1.sh` puts speedtest1.c, relative to the repository root.
pub const DEFAULT_SOURCE: &str = "target/speedtest1/speedtest1.c";

/// speedtest1's test sets (3.46.1: `--testset`).
pub const TESTSETS: [&str; 8] = [
    "main",
    "cte",
    "rtree",
    "orm",
    "fp",
    "debug1",
    "trigger",
    "parsenumber",
];

/// A speedtest1 run: the SQLite side (`sql`: mode, page size, layout, fallback sync; its
/// workload fields are unused), the source file, and speedtest1's own options.
#[derive(Clone, Debug)]
pub struct Speedtest1Options {
    pub sql: SqliteOptions,
    pub source: PathBuf,
    /// speedtest1's options, as on its command line (`--size 10 --testset orm ...`).
    pub args: Vec<String>,
    /// SQLite's in-memory database (speedtest1's `--memdb`) on SQLite's default VFS, no
    /// device: the CPU baseline (docs/PERFORMANCE.md). Its timings are wall-clock.
    pub in_memory: bool,
}

/// How speedtest1 treats an option: its argument count, or why it is refused.
enum Arg {
    Flag,
    /// One argument, checked.
    Value(fn(&str) -> Result<(), String>),
    Refused(&'static str),
}

fn positive(v: &str) -> Result<(), String> {
    match v.parse::<u32>() {
        Ok(n) if n >= 1 && n <= 2_000_000_000 => Ok(()),
        _ => Err(format!("'{v}' is not a positive integer")),
    }
}
fn integer(v: &str) -> Result<(), String> {
    v.parse::<i32>()
        .map(|_| ())
        .map_err(|_| format!("'{v}' is not an integer"))
}
fn digit(v: &str) -> Result<(), String> {
    match v.as_bytes() {
        [d] if d.is_ascii_digit() => Ok(()),
        _ => Err(format!("'{v}' is not one digit 0-9")),
    }
}
fn reserve(v: &str) -> Result<(), String> {
    match v.parse::<u8>() {
        Ok(_) => Ok(()),
        Err(_) => Err(format!("'{v}' is not a byte count 0-255")),
    }
}
fn testset(v: &str) -> Result<(), String> {
    for t in v.split(',') {
        if !TESTSETS.contains(&t) {
            return Err(format!(
                "unknown test set '{t}' (known: {})",
                TESTSETS.join(", ")
            ));
        }
    }
    Ok(())
}
fn path(v: &str) -> Result<(), String> {
    if v.is_empty() {
        Err("an empty file name".into())
    } else {
        Ok(())
    }
}

const LIBRARY_CONFIG: &str =
    "configures the SQLite library (sqlite3_config), which this process has already initialised";

fn arg_kind(name: &str) -> Option<Arg> {
    Some(match name {
        "autovacuum" | "big-transactions" | "checkpoint" | "exclusive" | "explain"
        | "fullfsync" | "incrvacuum" | "nolongdouble" | "nomutex" | "nosync" | "notnull"
        | "primarykey" | "reprepare" | "sqlonly" | "shrink-memory" | "strict"
        | "stmtscanstatus" | "trace" | "utf16be" | "utf16le" | "verify" | "without-rowid" => {
            Arg::Flag
        }
        "size" | "repeat" => Arg::Value(positive),
        "cachesize" => Arg::Value(integer),
        "temp" => Arg::Value(digit),
        "reserve" => Arg::Value(reserve),
        "testset" => Arg::Value(testset),
        "output" | "script" => Arg::Value(path),
        "journal" => Arg::Refused(
            "the journal mode is --mode's (delete, truncate, persist, wal, batch)",
        ),
        "vfs" => Arg::Refused("the VFS is the commitlab device's"),
        "memdb" => Arg::Refused("use --in-memory (the CPU baseline, no device)"),
        "pagesize" => Arg::Refused("use --page-size (it must divide the flash page)"),
        "heap" | "lookaside" | "pcache" | "multithread" | "serialized" | "singlethread"
        | "nomemstat" => Arg::Refused(LIBRARY_CONFIG),
        "threads" => Arg::Refused(
            "SQLite's worker threads would call the VFS from several threads; it serves one",
        ),
        "mmap" => Arg::Refused("the VFS has no memory-mapped I/O"),
        "key" => Arg::Refused("this SQLite has no encryption"),
        "stats" => Arg::Refused(
            "it prints the process's memory and Linux I/O counters, not the simulation's (see --json)",
        ),
        "help" | "?" => Arg::Refused("speedtest1.c's header lists its options"),
        _ => return None,
    })
}

fn bad(key: &str, reason: impl Into<String>) -> OptionError {
    OptionError {
        key: key.into(),
        reason: reason.into(),
    }
}

/// Checks speedtest1's options (any number of leading dashes, as speedtest1 takes them).
pub fn check_args(args: &[String]) -> Result<(), OptionError> {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let name = a.trim_start_matches('-');
        if name.len() == a.len() {
            return Err(bad(
                "speedtest1",
                format!(
                    "'{a}': the database is on the device, so speedtest1 takes no file name here"
                ),
            ));
        }
        match arg_kind(name) {
            None => {
                return Err(bad(
                    "speedtest1",
                    format!(
                        "unknown speedtest1 option '{a}' (commitlab's own options go before speedtest1's)"
                    ),
                ))
            }
            Some(Arg::Refused(why)) => return Err(bad("speedtest1", format!("{a}: {why}"))),
            Some(Arg::Flag) => i += 1,
            Some(Arg::Value(check)) => {
                let Some(v) = args.get(i + 1) else {
                    return Err(bad("speedtest1", format!("{a} needs a value")));
                };
                check(v).map_err(|e| bad("speedtest1", format!("{a}: {e}")))?;
                i += 2;
            }
        }
    }
    Ok(())
}

/// The value of speedtest1 option `name` (its last occurrence), if given.
fn arg_value<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let mut v = None;
    for w in args.windows(2) {
        if w[0].trim_start_matches('-') == name && w[0].starts_with('-') {
            v = Some(w[1].as_str());
        }
    }
    v
}

/// One speedtest1 test as the device saw it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TestRow {
    pub number: u32,
    pub name: String,
    /// Simulated time from the test's start to its end.
    pub sim_time_ns: u64,
    /// The time speedtest1 printed for the test, in ms (its clock is the simulated one,
    /// read in whole ms at the test's start and end).
    pub printed_ms: u64,
    pub device_writes: u64,
    pub device_reads: u64,
    pub nand_programs: u64,
    pub nand_erases: u64,
    /// Write transactions committed during the test.
    pub transactions: u64,
}

/// A speedtest1 run's results.
#[derive(Clone, Debug, Serialize)]
pub struct Speedtest1Report {
    /// The run's metrics, as every `commitlab sqlite` run reports them (workload
    /// `speedtest1`; transactions are SQLite's write-transaction commits).
    pub metrics: SqliteMetrics,
    pub source: String,
    pub size: u32,
    pub testset: String,
    pub args: Vec<String>,
    pub tests: Vec<TestRow>,
    /// `PRAGMA integrity_check` of the database after the run, its rows joined by `; `.
    pub integrity_check: String,
    /// What speedtest1 printed on standard output (its per-test times in simulated time).
    #[serde(skip)]
    pub output: String,
    /// What it printed on standard error (`--trace`).
    #[serde(skip)]
    pub errors: String,
}

/// Why the compiled speedtest1 object cannot be had.
fn build_error(key: &str, m: String) -> RunError {
    RunError::Input(bad(key, m))
}

/// The shared object of speedtest1 `source` built with the shim: compiled on first use,
/// then reused (cached by a hash of the shim, the headers, the source and the compiler).
pub fn build(source: &Path) -> Result<PathBuf, RunError> {
    let text = std::fs::read(source).map_err(|e| {
        build_error(
            "sqlite.speedtest1.source",
            format!(
                "{}: {e} (fetch it with scripts/fetch-speedtest1.sh: Debian's sqlite3 source package; or pass --source)",
                source.display()
            ),
        )
    })?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (SHIM, SQLITE3_H, SQLITE3EXT_H, &text, &cc).hash(&mut h);
    let key = format!("{:016x}", h.finish());
    let dir = cache_dir();
    let lib = dir.join(format!("speedtest1-{key}.so"));
    if lib.is_file() {
        return Ok(lib);
    }
    let work = dir.join(format!("build-{key}-{}", std::process::id()));
    let io =
        |e: std::io::Error| build_error("sqlite.speedtest1", format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(&work).map_err(io)?;
    for (name, body) in [
        ("shim.c", SHIM.as_bytes()),
        ("sqlite3.h", SQLITE3_H.as_bytes()),
        ("sqlite3ext.h", SQLITE3EXT_H.as_bytes()),
        ("speedtest1.c", &text[..]),
    ] {
        std::fs::write(work.join(name), body).map_err(io)?;
    }
    let out = work.join("speedtest1.so");
    let r = std::process::Command::new(&cc)
        .current_dir(&work)
        .args([
            "-O2",
            "-fPIC",
            "-shared",
            "-w",
            "-DSQLITE_ENABLE_RTREE",
            "-DST1_SOURCE=\"speedtest1.c\"",
            "-I.",
            "shim.c",
            "-o",
        ])
        .arg(&out)
        .output()
        .map_err(|e| {
            build_error(
                "sqlite.speedtest1",
                format!("cannot run the C compiler '{cc}' ({e}); install one (e.g. gcc) or set CC"),
            )
        })?;
    if !r.status.success() {
        let msg = String::from_utf8_lossy(&r.stderr);
        let _ = std::fs::remove_dir_all(&work);
        return Err(build_error(
            "sqlite.speedtest1.source",
            format!(
                "{} does not compile as speedtest1 against SQLite {}: {}",
                source.display(),
                crate::vfs::sqlite_version(),
                msg.lines().take(8).collect::<Vec<_>>().join("\n")
            ),
        ));
    }
    // Rename into place: a concurrent build of the same key writes the same bytes.
    std::fs::rename(&out, &lib).map_err(io)?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(lib)
}

/// Where built speedtest1 objects are kept: the user's cache directory
/// (`$XDG_CACHE_HOME`, else `~/.cache`), not a directory other users can write to, since
/// the object is loaded into this process; the temporary directory only without either.
fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("commitlab").join("speedtest1")
}

/// The bundled library's routines table, as SQLite hands it to extensions.
fn api() -> Result<*const ffi::sqlite3_api_routines, String> {
    static API: OnceLock<usize> = OnceLock::new();
    static SEEN: Mutex<usize> = Mutex::new(0);
    unsafe extern "C" fn capture(
        _db: *mut ffi::sqlite3,
        _err: *mut *mut c_char,
        api: *const ffi::sqlite3_api_routines,
    ) -> c_int {
        if let Ok(mut s) = SEEN.lock() {
            *s = api as usize;
        }
        ffi::SQLITE_OK
    }
    if let Some(p) = API.get() {
        return Ok(*p as *const ffi::sqlite3_api_routines);
    }
    // SAFETY: `capture` has the entry-point signature SQLite calls; it is cancelled below.
    unsafe { ffi::sqlite3_auto_extension(Some(capture)) };
    let c = Connection::open_in_memory();
    // SAFETY: as above.
    unsafe { ffi::sqlite3_cancel_auto_extension(Some(capture)) };
    c.map_err(|e| format!("sqlite: {e}"))?;
    let p = SEEN.lock().map(|s| *s).unwrap_or(0);
    if p == 0 {
        return Err("SQLite handed no routines table to its auto-extension".into());
    }
    Ok(*API.get_or_init(|| p) as *const ffi::sqlite3_api_routines)
}

/// Must match `St1Host` in speedtest1_shim.c.
#[repr(C)]
struct Host {
    ctx: *mut c_void,
    out: unsafe extern "C" fn(*mut c_void, c_int, *const c_char, c_int),
    commit: unsafe extern "C" fn(*mut c_void),
    rollback: unsafe extern "C" fn(*mut c_void),
    call_end: unsafe extern "C" fn(*mut c_void),
    rtree_geometry_callback: *const c_void,
    clock_vfs: *const c_char,
}

type RunFn = unsafe extern "C" fn(
    *const ffi::sqlite3_api_routines,
    *const Host,
    c_int,
    *mut *mut c_char,
) -> c_int;

/// What the callbacks collect during a run.
struct State<'a> {
    fs: Option<&'a RefCell<DeviceFs>>,
    out: String,
    err: String,
    tests: Vec<TestRow>,
    open: Option<(u32, String, Snapshot, u64)>,
    commits: u64,
    rollbacks: u64,
    pending: Option<SimTime>,
    latency: Histogram,
    fault: Option<String>,
}

impl State<'_> {
    fn snap(&self) -> Option<Snapshot> {
        self.fs
            .and_then(|f| f.try_borrow().ok().map(|fs| snapshot_fs(&fs)))
    }
    fn now(&self) -> Option<SimTime> {
        self.fs.and_then(|f| f.try_borrow().ok().map(|fs| fs.now))
    }
    /// speedtest1's output, chunk by chunk: `speedtest1_begin_test` prints
    /// "NNNN - name..... " in one call and `speedtest1_end_test` "   S.MMMs\n".
    fn on_out(&mut self, stream: c_int, text: &str) {
        if stream == 2 {
            self.err.push_str(text);
            return;
        }
        self.out.push_str(text);
        if let Some((num, name)) = begin_line(text) {
            if let Some(s) = self.snap() {
                self.open = Some((num, name, s, self.commits));
            }
        } else if let Some(printed_ms) = end_line(text) {
            if let (Some((number, name, b, c0)), Some(a)) = (self.open.take(), self.snap()) {
                self.tests.push(TestRow {
                    number,
                    name,
                    sim_time_ns: a.t - b.t,
                    printed_ms,
                    device_writes: a.writes - b.writes,
                    device_reads: a.reads - b.reads,
                    nand_programs: a.programs - b.programs,
                    nand_erases: a.erases - b.erases,
                    transactions: self.commits - c0,
                });
            }
        }
    }
}

/// `speedtest1_begin_test`'s chunk: "%4d - %s%.*s " (name padded with dots).
fn begin_line(t: &str) -> Option<(u32, String)> {
    if t.ends_with('\n') || !t.ends_with(' ') {
        return None;
    }
    let (num, rest) = t.trim_start().split_once(" - ")?;
    let num = num.parse().ok()?;
    let name = rest.trim_end().trim_end_matches('.').trim_end().to_string();
    Some((num, name))
}

/// `speedtest1_end_test`'s chunk: "%4d.%03ds\n"; the time it prints, in ms.
fn end_line(t: &str) -> Option<u64> {
    let body = t.strip_suffix("s\n")?;
    let (s, ms) = body.trim_start().split_once('.')?;
    if s.is_empty()
        || !s.bytes().all(|b| b.is_ascii_digit())
        || ms.len() != 3
        || !ms.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some(s.parse::<u64>().ok()? * 1000 + ms.parse::<u64>().ok()?)
}

unsafe fn state<'a>(ctx: *mut c_void) -> &'a mut State<'a> {
    &mut *(ctx as *mut State<'a>)
}

fn guarded(ctx: *mut c_void, f: impl FnOnce(&mut State)) {
    // SAFETY: ctx is the `State` of the running `run_speedtest1`, alive for the call.
    let st = unsafe { state(ctx) };
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(&mut *st))) {
        let m = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into());
        st.fault.get_or_insert(m);
    }
}

unsafe extern "C" fn cb_out(ctx: *mut c_void, stream: c_int, z: *const c_char, n: c_int) {
    guarded(ctx, |s| {
        let n = usize::try_from(n).unwrap_or(0);
        // SAFETY: the shim passes n bytes at z.
        let b = if z.is_null() {
            &[][..]
        } else {
            unsafe { std::slice::from_raw_parts(z as *const u8, n) }
        };
        s.on_out(stream, &String::from_utf8_lossy(b));
    })
}

unsafe extern "C" fn cb_commit(ctx: *mut c_void) {
    guarded(ctx, |s| {
        s.commits += 1;
        s.pending = s.now();
    })
}

unsafe extern "C" fn cb_rollback(ctx: *mut c_void) {
    guarded(ctx, |s| {
        s.rollbacks += 1;
        s.pending = None;
    })
}

unsafe extern "C" fn cb_call_end(ctx: *mut c_void) {
    guarded(ctx, |s| {
        if let (Some(t0), Some(t1)) = (s.pending, s.now()) {
            s.latency.record(t1 - t0);
            s.pending = None;
        }
    })
}

/// One speedtest1 run at a time in a process: the shared object's globals are speedtest1's.
static RUNNING: Mutex<()> = Mutex::new(());

/// Runs speedtest1's main once with `argv`; returns its exit code.
fn call(
    lib: &Path,
    argv: &[String],
    st: &mut State,
    clock_vfs: Option<&CString>,
) -> Result<c_int, String> {
    let api = api()?;
    let cargs: Vec<CString> = argv
        .iter()
        .map(|a| {
            CString::new(a.as_str()).map_err(|_| format!("speedtest1: '{a}' holds a NUL byte"))
        })
        .collect::<Result<_, _>>()?;
    let mut ptrs: Vec<*mut c_char> = cargs.iter().map(|c| c.as_ptr() as *mut c_char).collect();
    ptrs.push(std::ptr::null_mut());
    let host = Host {
        ctx: st as *mut State as *mut c_void,
        out: cb_out,
        commit: cb_commit,
        rollback: cb_rollback,
        call_end: cb_call_end,
        rtree_geometry_callback: ffi::sqlite3_rtree_geometry_callback as *const c_void,
        clock_vfs: clock_vfs.map_or(std::ptr::null(), |c| c.as_ptr()),
    };
    let _one = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: the object is the shim built by `build`; its entry point has `RunFn`'s
    // signature; `host`, the argument strings and `st` outlive the call, and the library
    // stays loaded until after it.
    unsafe {
        let l = libloading::Library::new(lib).map_err(|e| format!("{}: {e}", lib.display()))?;
        let f: libloading::Symbol<RunFn> = l
            .get(b"commitlab_speedtest1_run\0")
            .map_err(|e| format!("{}: {e}", lib.display()))?;
        let argc = c_int::try_from(cargs.len()).map_err(|_| "too many arguments".to_string())?;
        let rc = f(api, &host, argc, ptrs.as_mut_ptr());
        drop(l);
        Ok(rc)
    }
}

fn state_for(fs: Option<&RefCell<DeviceFs>>) -> State<'_> {
    State {
        fs,
        out: String::new(),
        err: String::new(),
        tests: Vec::new(),
        open: None,
        commits: 0,
        rollbacks: 0,
        pending: None,
        latency: Histogram::new(),
        fault: None,
    }
}

/// speedtest1's `--size` and `--testset` as the run sees them (its defaults: 100, main).
fn size_and_testset(args: &[String]) -> (u32, String) {
    let size = arg_value(args, "size")
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let ts = arg_value(args, "testset").unwrap_or("main").to_string();
    (size, ts)
}

/// Runs speedtest1 on the device `cfg` describes.
pub fn run_speedtest1(cfg: &Config, o: &Speedtest1Options) -> Result<Speedtest1Report, RunError> {
    cfg.validate()
        .map_err(|e| RunError::Config(e.to_string()))?;
    o.sql.validate(cfg)?;
    check_args(&o.args)?;
    if o.in_memory {
        return Err(RunError::Input(bad(
            "sqlite.speedtest1",
            "in-memory runs go through run_in_memory",
        )));
    }
    let lib = build(&o.source)?;
    let mut fs = crate::run::build_fs(cfg, &o.sql)?;
    fs.opts.reclaim_versions = true;
    let flash = fs.page_bytes() as u32;
    let page = o.sql.effective_page_size(flash)?;
    let vfs = Registered::new(fs, cfg.seed).map_err(RunError::Run)?;
    let name = vfs.name().to_string();
    let mut argv = vec![
        "speedtest1".to_string(),
        "--pagesize".into(),
        page.to_string(),
        "--journal".into(),
        o.sql.mode.journal_mode().to_ascii_lowercase(),
    ];
    if o.sql.mode == Mode::Wal {
        argv.push("--exclusive".into());
    }
    argv.extend(o.args.iter().cloned());
    argv.extend(["--vfs".into(), name.clone(), "commitlab.db".into()]);
    let clock = CString::new(name.clone()).map_err(|e| RunError::Run(e.to_string()))?;
    let fs_cell = &vfs.ctx().fs;
    let before = snapshot_fs(&fs_cell.borrow());
    let mut st = state_for(Some(fs_cell));
    let rc = call(&lib, &argv, &mut st, Some(&clock)).map_err(RunError::Run)?;
    if let Some(f) = st.fault.take() {
        return Err(RunError::Run(format!("speedtest1 callback: {f}")));
    }
    if rc != 0 {
        let vfs_msg = vfs
            .take_error()
            .map(|m| format!(" (vfs: {m})"))
            .unwrap_or_default();
        return Err(RunError::Run(format!(
            "speedtest1 stopped with exit code {rc}: {}{vfs_msg}",
            st.err.trim_end()
        )));
    }
    let after = snapshot_fs(&fs_cell.borrow());
    let integrity = integrity_check(&name, o.sql.mode).map_err(|e| {
        let vfs_msg = vfs
            .take_error()
            .map(|m| format!(" (vfs: {m})"))
            .unwrap_or_default();
        RunError::Run(format!("{e}{vfs_msg}"))
    })?;
    let (size, testset) = size_and_testset(&o.args);
    let t = Txns {
        committed: st.commits,
        rolled_back: st.rollbacks,
        latency: std::mem::take(&mut st.latency),
    };
    let metrics = metrics_between(cfg, &o.sql, "speedtest1".into(), flash, &before, &after, &t);
    Ok(Speedtest1Report {
        metrics,
        source: o.source.display().to_string(),
        size,
        testset,
        args: o.args.clone(),
        tests: std::mem::take(&mut st.tests),
        integrity_check: integrity,
        output: std::mem::take(&mut st.out),
        errors: std::mem::take(&mut st.err),
    })
}

/// `PRAGMA integrity_check` of the database on VFS `vfs`, its rows joined by "; ".
fn integrity_check(vfs: &str, mode: Mode) -> Result<String, String> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let c = Connection::open_with_flags_and_vfs("commitlab.db", flags, vfs)
        .map_err(|e| format!("sqlite: reopening the database after speedtest1: {e}"))?;
    if mode == Mode::Wal {
        c.execute_batch("PRAGMA locking_mode = EXCLUSIVE;")
            .map_err(|e| format!("sqlite: {e}"))?;
    }
    let mut q = c
        .prepare("PRAGMA integrity_check")
        .map_err(|e| format!("sqlite: integrity_check: {e}"))?;
    let rows: Vec<String> = q
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|r| r.collect())
        .map_err(|e| format!("sqlite: integrity_check: {e}"))?;
    drop(q);
    c.close().map_err(|(_, e)| format!("sqlite: {e}"))?;
    Ok(rows.join("; "))
}

/// The same speedtest1 on SQLite's in-memory database (`--memdb`) on the default VFS, no
/// device: the CPU baseline of docs/PERFORMANCE.md. Returns speedtest1's output (its times
/// are wall-clock here).
pub fn run_in_memory(o: &Speedtest1Options) -> Result<String, RunError> {
    check_args(&o.args)?;
    let lib = build(&o.source)?;
    let page = if o.sql.page_size == 0 {
        4096
    } else {
        o.sql.page_size
    };
    let mut argv = vec![
        "speedtest1".to_string(),
        "--memdb".into(),
        "--pagesize".into(),
        page.to_string(),
    ];
    argv.extend(o.args.iter().cloned());
    argv.push("memory.db".into());
    let mut st = state_for(None);
    let rc = call(&lib, &argv, &mut st, None).map_err(RunError::Run)?;
    if rc != 0 {
        return Err(RunError::Run(format!(
            "speedtest1 stopped with exit code {rc}: {}",
            st.err.trim_end()
        )));
    }
    Ok(st.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_are_honoured_or_refused_by_name() {
        assert!(check_args(&v(&["--size", "5", "--testset", "main,orm", "-nosync"])).is_ok());
        for (args, needle) in [
            (v(&["--journal", "wal"]), "--mode"),
            (v(&["--vfs", "unix"]), "VFS"),
            (v(&["--heap", "1", "2"]), "sqlite3_config"),
            (v(&["--threads", "2"]), "threads"),
            (v(&["--size", "0"]), "positive"),
            (v(&["--size"]), "needs a value"),
            (v(&["--testset", "nope"]), "unknown test set"),
            (v(&["--bogus"]), "unknown speedtest1 option"),
            (v(&["x.db"]), "no file name"),
            (v(&["--temp", "12"]), "one digit"),
        ] {
            let e = check_args(&args).expect_err(&format!("{args:?} accepted"));
            assert_eq!(e.key, "speedtest1");
            assert!(e.reason.contains(needle), "{args:?}: {}", e.reason);
        }
    }

    #[test]
    fn test_boundaries_are_read_from_speedtest1_output() {
        assert_eq!(
            begin_line(" 100 - 500 INSERTs into table with no index...... "),
            Some((100, "500 INSERTs into table with no index".into()))
        );
        assert_eq!(begin_line("-- Speedtest1 for SQLite 3.50.2\n"), None);
        assert_eq!(end_line("   0.012s\n"), Some(12));
        assert_eq!(end_line("  12.345s\n"), Some(12_345));
        assert_eq!(end_line("       TOTAL....... 0.012s\n"), None);
        assert_eq!(end_line("0.01s\n"), None);
    }

    #[test]
    fn size_and_testset_take_the_last_value() {
        assert_eq!(size_and_testset(&[]), (100, "main".into()));
        assert_eq!(
            size_and_testset(&v(&["--size", "5", "--testset", "orm", "-size", "7"])),
            (7, "orm".into())
        );
    }
}
