//! Runs many configurations on a pool of worker threads, returning results in input order
//! (each run is deterministic on its own, so the order of execution does not matter and the
//! report is byte-identical whatever `--jobs` is).
//!
//! Shared prefills: at 32 GiB the prefill and ageing are most of a point's cost, and most
//! points of a figure start from the same device (a sweep of abort ratios or isolation
//! levels changes only the workload). Jobs with the same `world::prefill_key` form a group:
//! the first job to start prefills once (`world::prefill`), every job of the group runs
//! from its own copy of that device (`world::run_prefilled`), which gives the same result,
//! byte for byte, as prefilling separately (tests in `world/tests/shared_prefill.rs` and
//! below). If a group's prefill fails, every other job of the group runs on its own, so its
//! error is its own.
//!
//! Kept states: a built state outlives its batch. When the last job of a group has its copy,
//! the state is kept (in the `Ledger`, under its key and the state's type), and a later
//! batch, of the same paper or another, whose group has the same key starts from it instead
//! of building it again (LightTx's 32 GiB devices recur in Figs. 7, 9–12 and 19; Flag
//! Commit's aged devices in its figures' batches). The runner cannot know whether a later
//! batch needs a state, so it keeps every one while memory allows: a kept state stays
//! charged, but the admission rule counts its bytes as free, and when a job starts over the
//! budget the oldest kept states are dropped until the charges fit again (`Ledger::evict`).
//! A key names everything the state depends on, so a kept state is the state the later
//! batch would build (tests below).
//!
//! Memory: the admission rule. Every job is charged the bytes its device needs
//! (`job_bytes`, from the geometry, with what recovery adds if it measures recovery, and a
//! host run's engine tables from its schema, `footprint`), and every shared image the bytes of one device
//! (`image_bytes`) from the moment its builder starts prefilling until the last job of its
//! group has its own copy; a builder is charged both. A worker starts a job only while the
//! charges of everything running or alive plus the job's stay within the budget
//! (`Progress::mem_budget_bytes`), or when nothing else runs, so a job bigger than the
//! budget runs alone and nothing waits forever. Among the jobs that fit, a job whose
//! group's device is ready comes first (so images are freed soon), then jobs in figure
//! order. Before this rule a fixed limit of one shared image at a time bounded memory at
//! `jobs` + 1 devices, whatever their size, and two 32 GiB jobs measuring recovery beside a
//! shared image took the full TxFlash + LightTx reproduction to 4.24 GiB of peak RSS. The
//! schedule changes the wall time only: each job's result depends on its configuration
//! alone (tests below).
//!
//! Order: longest first. Within a batch the costliest job starts first (`Sched::new`,
//! `cost_estimate`). Batches may run at once: the papers of one reproduction run side by
//! side (`crate::run_papers`), each on a `Progress::child` of one progress, and every batch
//! of them takes its workers from one `Gate`: at most `Progress::jobs` jobs run at once in
//! all, the admission rule charges every batch's jobs and images against one budget, and a
//! worker about to start offers the cost of its batch's next job, starting only if no
//! other batch's waiting worker offers a costlier one (`Gate::next`). So both workers stay
//! busy until the last batch's last jobs, instead of idling at the end of every figure's
//! batch while one paper ran at a time.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;
use world::{Config, Prefilled, RunMetrics, RunOptions};

/// One run to make: a label for progress and errors, and its configuration.
pub struct Job {
    pub label: String,
    pub cfg: Config,
}

/// How a reproduction runs its points: how many at once, and where progress goes. Progress
/// lines say how many points are done out of the total planned, and an ETA from the mean
/// wall time per point so far.
pub struct Progress<'a> {
    pub jobs: usize,
    /// The admission rule's budget (module docs: memory).
    mem_budget_bytes: u64,
    report: &'a (dyn Fn(&str) + Sync),
    start: Instant,
    done: Arc<AtomicUsize>,
    planned: Arc<AtomicUsize>,
    /// The jobs running and the bytes charged across every batch that runs at once: a
    /// progress and its `child`ren (papers run side by side) share one (module docs: order).
    gate: Arc<Gate>,
    /// The total was set by `preplan` for every paper at once: `plan` leaves it alone.
    preplanned: bool,
    /// Only counts the points the papers plan (`counting`): `run_all` and `run_each` run
    /// nothing and return an error in every slot.
    counting: bool,
    /// (label, configuration as TOML) of every job `run_all` was given since the last
    /// `take_configs` (for REPORT.html).
    configs: Mutex<Vec<(String, String)>>,
    /// What every job run since the last `take_timings` cost (timings.csv).
    timings: Mutex<Vec<PointTiming>>,
    /// The points run on another engine (`remote`): `run_all` answers from its results and
    /// runs nothing here.
    remote: Option<&'a crate::remote::Remote>,
    /// The results of the points run so far, by their resolved configuration, shared by
    /// every `child` (`crate::memo`); `None` runs every point, identical ones included.
    memo: Option<Arc<crate::memo::Memo>>,
}

/// What one point cost to run: the figures of timings.csv. Measurements of this machine,
/// not results: unlike every other file of a reproduction they change from run to run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PointTiming {
    pub label: String,
    /// How the job ran: `alone` (built its own device), `builder` (built a device its group
    /// shares, then ran from it), `follow` (ran from a copy of its group's device) or `same`
    /// (not run: answered by the run of an identical point, `crate::memo`).
    pub task: &'static str,
    /// On-CPU time of the worker thread for the whole job (`world::bench::cpu_time_ns`).
    pub cpu_s: f64,
    /// Of `cpu_s`, the part spent building the device the job starts from (prefill,
    /// ageing) where the runner builds it apart from the run; empty where the run builds
    /// its own inside (`run_all` jobs that run alone).
    pub setup_cpu_s: Option<f64>,
    pub wall_s: f64,
    /// The scheduler's estimate of the job's cost (`cost_estimate`), in its own units.
    pub cost_estimate: u64,
    /// The process's resident set when the job ended and its peak so far (VmRSS, VmHWM):
    /// with several jobs at once, not one job's own figure.
    pub rss_end_bytes: u64,
    pub peak_rss_bytes: u64,
}

impl<'a> Progress<'a> {
    /// `jobs` = 0 means one per available core.
    pub fn new(jobs: usize, report: &'a (dyn Fn(&str) + Sync)) -> Progress<'a> {
        let jobs = if jobs == 0 {
            std::thread::available_parallelism().map_or(1, |p| p.get())
        } else {
            jobs
        };
        Progress {
            jobs,
            mem_budget_bytes: default_mem_budget_bytes(),
            report,
            start: Instant::now(),
            done: Arc::new(AtomicUsize::new(0)),
            planned: Arc::new(AtomicUsize::new(0)),
            gate: Arc::new(Gate::new(jobs)),
            preplanned: false,
            counting: false,
            configs: Mutex::new(Vec::new()),
            timings: Mutex::new(Vec::new()),
            remote: None,
            memo: Some(Arc::default()),
        }
    }

    /// Runs every point, an identical one too, instead of answering it from the run of its
    /// twin (`crate::memo`); for the tests that compare both.
    pub fn set_memo(&mut self, on: bool) {
        self.memo = on.then(Arc::default);
    }

    /// Whether identical points of a real (not counting) run of this progress are answered
    /// from one run (`crate::memo`): the memo is on and the points run here, not remotely.
    pub(crate) fn answers_identical_points(&self) -> bool {
        self.memo.is_some() && self.remote.is_none()
    }

    /// The memo of identical points (`crate::memo`), if they are answered from one run: not
    /// while counting, and not on a remote engine (which keys its results alike).
    pub(crate) fn memo(&self) -> Option<&crate::memo::Memo> {
        if self.counting || self.remote.is_some() {
            return None;
        }
        self.memo.as_deref()
    }

    /// How many configurations are recorded for REPORT.html.
    pub(crate) fn configs_len(&self) -> usize {
        self.configs.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Replaces the configurations recorded since there were `from` with `configs`.
    pub(crate) fn set_configs_from(&self, from: usize, configs: Vec<(String, String)>) {
        let mut c = self.configs.lock().unwrap_or_else(|e| e.into_inner());
        c.truncate(from);
        c.extend(configs);
    }

    /// A point answered by an identical point's run (`crate::memo`): counted done.
    pub(crate) fn answered(&self, t: PointTiming, failed: bool) {
        self.finished(t, failed);
    }

    /// Runs the points on another engine (`remote` module docs): every `run_all` answers
    /// from `remote`'s results and records the points it has none for.
    pub fn set_remote(&mut self, remote: &'a crate::remote::Remote) {
        self.remote = Some(remote);
    }

    /// The remote engine the points run on, if any (never while only counting).
    pub(crate) fn remote_engine(&self) -> Option<&'a crate::remote::Remote> {
        if self.counting {
            None
        } else {
            self.remote
        }
    }

    /// Records the jobs' configurations for REPORT.html, as `run_all` and `run_each` do
    /// (for `remote::each`, which answers in their place).
    pub(crate) fn record_configs(&self, jobs: &[Job]) {
        self.configs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(jobs.iter().map(|j| (j.label.clone(), j.cfg.to_toml())));
    }

    /// Records what a point cost where it ran (a remote point's), without a progress line.
    pub(crate) fn record_timing(&self, t: PointTiming) {
        self.timings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(t);
    }

    /// A progress for one of several batches run at once (`crate::run_papers`: the papers
    /// side by side): its own configurations and timings, and the same workers, memory
    /// budget, counts and output as `self`, so that `jobs` jobs run at once across all of
    /// them, within one budget, the costliest waiting job first (module docs: order).
    pub fn child(&self) -> Progress<'a> {
        Progress {
            jobs: self.jobs,
            mem_budget_bytes: self.mem_budget_bytes,
            report: self.report,
            start: self.start,
            done: Arc::clone(&self.done),
            planned: Arc::clone(&self.planned),
            gate: Arc::clone(&self.gate),
            preplanned: self.preplanned,
            counting: self.counting,
            configs: Mutex::new(Vec::new()),
            timings: Mutex::new(Vec::new()),
            remote: self.remote,
            memo: self.memo.clone(),
        }
    }

    /// What every job run since the last call cost, in the order the jobs finished.
    pub fn take_timings(&self) -> Vec<PointTiming> {
        std::mem::take(&mut *self.timings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// A progress that runs nothing: the papers' `plan` calls add up (`planned`) and every
    /// run returns an error, so running a paper with it counts the points it plans without
    /// running them (each paper plans all its points before its first run).
    pub fn counting(report: &'a (dyn Fn(&str) + Sync)) -> Progress<'a> {
        let mut p = Progress::new(1, report);
        p.counting = true;
        p
    }

    /// Is this a counting progress (`counting`)? A paper may then plan its points without
    /// sizing them.
    pub fn is_counting(&self) -> bool {
        self.counting
    }

    /// The points planned so far.
    pub fn planned(&self) -> usize {
        self.planned.load(Ordering::SeqCst)
    }

    /// Sets the total the ETA counts toward for the whole reproduction (every paper's points,
    /// counted first with `counting`); the papers' own `plan` calls then change nothing.
    pub fn preplan(&mut self, total: usize) {
        self.planned.store(total, Ordering::SeqCst);
        self.preplanned = true;
    }

    /// Sets the memory budget of the admission rule (module docs: memory); 0 runs one job
    /// at a time.
    pub fn set_mem_budget_bytes(&mut self, bytes: u64) {
        self.mem_budget_bytes = bytes;
    }

    /// The memory budget of the admission rule, in bytes.
    pub fn mem_budget_bytes(&self) -> u64 {
        self.mem_budget_bytes
    }

    /// Adds `n` points to the total the ETA counts toward.
    pub fn plan(&self, n: usize) {
        if !self.preplanned {
            self.planned.fetch_add(n, Ordering::SeqCst);
        }
    }

    /// Every distinct configuration run since the last call, as (labels of the runs that
    /// used it, TOML), in first-use order.
    pub fn take_configs(&self) -> Vec<(String, String)> {
        let seen = std::mem::take(&mut *self.configs.lock().unwrap_or_else(|e| e.into_inner()));
        let mut grouped: Vec<(Vec<String>, String)> = Vec::new();
        for (label, toml) in seen {
            match grouped.iter_mut().find(|(_, t)| *t == toml) {
                Some((labels, _)) => labels.push(label),
                None => grouped.push((vec![label], toml)),
            }
        }
        grouped
            .into_iter()
            .map(|(labels, toml)| (labels.join(", "), toml))
            .collect()
    }

    pub fn say(&self, line: &str) {
        (self.report)(line);
    }

    fn finished(&self, t: PointTiming, failed: bool) {
        let k = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        let total = self.planned.load(Ordering::SeqCst).max(k);
        let el = self.start.elapsed().as_secs_f64();
        let eta = el / k as f64 * (total - k) as f64;
        let setup = t.setup_cpu_s.map_or(String::new(), |x| {
            format!(", {x:.1} of them building its device")
        });
        (self.report)(&format!(
            "[{k}/{total}] {}{} ({:.1} CPU-s{setup}; {el:.0} s elapsed, ETA {eta:.0} s)",
            t.label,
            if failed { " (failed)" } else { "" },
            t.cpu_s
        ));
        self.timings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(t);
    }
}

/// Measures one job for timings.csv: the worker thread's CPU time and the wall time from
/// `new` to `done`.
struct Meter {
    cpu_ns: u64,
    wall: Instant,
}

impl Meter {
    fn new() -> Meter {
        Meter {
            cpu_ns: world::bench::cpu_time_ns(),
            wall: Instant::now(),
        }
    }

    /// CPU seconds since `new`.
    fn cpu_s(&self) -> f64 {
        world::bench::cpu_time_ns().saturating_sub(self.cpu_ns) as f64 / 1e9
    }

    fn done(
        &self,
        label: &str,
        task: &'static str,
        setup_cpu_s: Option<f64>,
        cost_estimate: u64,
    ) -> PointTiming {
        PointTiming {
            label: label.to_string(),
            task,
            cpu_s: self.cpu_s(),
            setup_cpu_s,
            wall_s: self.wall.elapsed().as_secs_f64(),
            cost_estimate,
            rss_end_bytes: rss_bytes(),
            peak_rss_bytes: world::bench::peak_rss_bytes(),
        }
    }
}

/// The process's resident set in bytes (VmRSS), or 0 if unknown.
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// The scheduler's estimate of what a job costs, for longest-first ordering (module docs:
/// order): the device's pages times what building it writes (construction, prefill,
/// ageing), plus the workload's page operations. Relative only (the units are page
/// operations, weighted alike); it orders jobs, never changes them.
pub fn cost_estimate(cfg: &Config) -> u64 {
    let pages = cfg
        .device()
        .image_params()
        .map_or(0, |p| u64::from(p.geometry.pages()));
    let w = &cfg.workload;
    let setup = pages as f64 * (1.0 + w.prefill.max(0.0) + w.age.max(0.0));
    let work = match w.kind {
        world::WorkloadKind::Txn => {
            w.txn.transactions as f64 * f64::from(w.txn.size_min + w.txn.size_max) / 2.0
        }
        world::WorkloadKind::Synthetic => {
            w.synthetic.requests as f64
                * f64::from(w.synthetic.request_pages_min + w.synthetic.request_pages_max)
                / 2.0
        }
        world::WorkloadKind::Seqwriter => w.seqwriter.pages as f64,
        // A host transaction touches tens of pages, each with locking and buffer work: a
        // TPC-C transaction costs about as much CPU as 60 device page writes (host bench:
        // ~20,000 TPC-C transactions against ~1.2 M device writes per CPU-second).
        world::WorkloadKind::Host => cfg.host.transactions as f64 * 60.0,
        world::WorkloadKind::Trace => 0.0,
    };
    (setup + work) as u64
}

/// The error every run returns under a counting progress (`Progress::counting`).
const COUNTING: &str = "not run (counting the planned points)";

/// Runs every job, `progress.jobs` at a time and within `progress.mem_budget_bytes` (module
/// docs: memory); a run that fails yields `Err(message)` in its slot. Jobs that start from
/// the same prefilled device share one prefill (module docs).
pub fn run_all(jobs: Vec<Job>, progress: &Progress) -> Vec<Result<RunMetrics, String>> {
    // Identical points run once (`crate::memo`).
    crate::memo::answer(
        jobs,
        progress,
        |_| crate::remote::PointTask::Run,
        |j| run_all_sharing(j, progress, true),
    )
}

/// The default memory budget of the admission rule (module docs: memory); see
/// `default_mem_budget_bytes`. 4.5 GiB: a shared 32 GiB Flag Commit image (≈ 1.1 GiB
/// charged) beside a job on each of two workers fits, so Flag Commit ages each device once
/// per group at full scale. The charges count a host run's engine tables
/// (`footprint::host_run_bytes`) but not CFC_ex's per-slot tables nor the allocator's slack
/// (PERFORMANCE.md, "Full scale, measured per point").
pub const MEM_BUDGET_BYTES: u64 = 9 << 29;

/// `MEM_BUDGET_BYTES`, or half the memory available (`MemAvailable`) when the reproduction
/// starts if that is less.
pub fn default_mem_budget_bytes() -> u64 {
    match world::config::mem_available_bytes() {
        Some(avail) => MEM_BUDGET_BYTES.min(avail / 2),
        None => MEM_BUDGET_BYTES,
    }
}

/// Bytes per page of the FTL's and the protocol's per-page tables, as an estimate: the
/// FTL's mapping table, reverse map and page flags take about 8.5 (4 per logical page, 4
/// and ½ per physical page); the largest protocol tables measured, BPCC's page versions and
/// uncommitted intentions at TxFlash Fig. 8's 32 GiB, about 10.5 more.
const TABLE_BYTES_PER_PAGE: u64 = 20;

/// The bytes of one device of `cfg`'s shape (a running job's, or a shared prefilled image):
/// the NAND image's page records (10 bytes plus the protocol's OOB bytes per page), in tag
/// mode each block's summary page (a copy of its pages' OOB bytes, stored as bytes) or in
/// full mode every page's data,
/// and the FTL's and protocol's tables (`TABLE_BYTES_PER_PAGE`). 0 if the device parameters
/// are invalid (the run then fails with that error on its own).
pub fn image_bytes(cfg: &Config) -> u64 {
    let Ok(p) = cfg.device().image_params() else {
        return 0;
    };
    let g = &p.geometry;
    let pages = u64::from(g.pages());
    let oob = u64::from(p.oob_used);
    let data = if p.data_mode == media::DataMode::Full {
        pages * u64::from(g.page_bytes)
    } else if cfg.ftl.summary_pages {
        // Per block: the OOB of every other page, plus the map entry and allocation.
        u64::from(g.blocks()) * (u64::from(g.pages_per_block.saturating_sub(1)) * oob + 64)
    } else {
        0
    };
    pages * (10 + oob + TABLE_BYTES_PER_PAGE) + data
}

/// The bytes a job is charged while it runs (module docs: memory): its device
/// (`image_bytes`), plus, if it measures recovery, what recovery adds while it runs: the
/// recovered device's tables (a device run's own were dropped, `measured`; a host run keeps
/// its FTL's, which `image_bytes` charges, and hands its medium to the restart,
/// `host::engine::measure_recovery`) and a whole-device scan's result (each page's address,
/// OOB bytes and a flag). A host run measures recovery by `host.measure_recovery`, a
/// device run by `run.measure_recovery` (a host run ignores the latter). A host run adds
/// its engine's and strategy's tables (`footprint::host_run_bytes`).
pub fn job_bytes(cfg: &Config) -> u64 {
    let device = image_bytes(cfg).saturating_add(crate::footprint::host_run_bytes(cfg));
    let recovers = if cfg.workload.kind == world::WorkloadKind::Host {
        cfg.host.measure_recovery
    } else {
        cfg.run.measure_recovery
    };
    if !recovers {
        return device;
    }
    let Ok(p) = cfg.device().image_params() else {
        return device;
    };
    let pages = u64::from(p.geometry.pages());
    device + pages * (TABLE_BYTES_PER_PAGE + 4 + u64::from(p.oob_used) + 1)
}

/// What the admission rule needs to know about a batch of jobs: each job's group of
/// shared prefills and whether it shares, the bytes it is charged, each group's image bytes
/// and the budget.
#[derive(Clone)]
struct Plan {
    group: Vec<usize>,
    shared: Vec<bool>,
    job_bytes: Vec<u64>,
    image_bytes: Vec<u64>,
    budget_bytes: u64,
    /// Each job's `cost_estimate`, for longest-first order (module docs: order).
    cost: Vec<u64>,
    /// Each job's sharing key (`None`: runs alone): a shared group's state is kept under
    /// it after the batch, and taken from there by a later batch (module docs: kept states).
    keys: Vec<Option<String>>,
    /// Jobs that share their group's state only as its last taker (`last_takers`): such a
    /// job starts once every other job of the group has its copy, and takes the state
    /// itself, with its charge, instead of a copy (so the state is not kept).
    last: Vec<bool>,
}

/// A shared prefill's state (`D`: the prefilled device; `()` in the scheduler's tests).
enum Slot<D> {
    /// A thread is prefilling it; its image is charged.
    Building,
    /// Ready: `untaken` jobs of the group have not yet started, `copying` have started and
    /// not yet made their own copy. The image stays charged until both are 0.
    Ready {
        dev: Arc<D>,
        untaken: usize,
        copying: usize,
    },
    /// The prefill failed (its image no longer charged): the group's remaining jobs run on
    /// their own.
    Failed,
}

/// What a worker does with the job it took.
enum Task<D> {
    /// Build and prefill its own device (a job alone in its group, or sharing off).
    Alone,
    /// Prefill the group's device, publish it, then run from a copy.
    Builder,
    /// Run from a copy of the group's device.
    Follow(Arc<D>),
}

/// The scheduler's answer to a free worker.
enum Pick<D> {
    Start(usize, Task<D>),
    /// Nothing can start until a running job finishes, a prefill is published or a copy is
    /// made.
    Wait,
    /// No job is left to start.
    Done,
}

/// What every batch running at once shares (`Progress::child`): the jobs running and the
/// bytes charged to them and to live shared images, across batches, and the offers of the
/// workers waiting for a start (module docs: order).
struct Ledger {
    running: usize,
    charged_bytes: u64,
    /// Jobs that may run at once across every batch (`Progress::jobs`).
    max_running: usize,
    /// Each waiting worker's offer: its ticket → the cost of the job its batch would start
    /// now. A worker starts only if no other offer is costlier (ties: the older ticket).
    offers: BTreeMap<u64, u64>,
    next_ticket: u64,
    /// States kept after their batch, oldest first (module docs: kept states); their bytes
    /// are part of `charged_bytes` and also counted in `kept_bytes`.
    kept: Vec<Kept>,
    kept_bytes: u64,
}

/// A built state kept for later batches: its key (with the state's type), the state, and
/// the bytes charged for it.
struct Kept {
    key: String,
    state: Arc<dyn Any + Send + Sync>,
    bytes: u64,
}

impl Ledger {
    fn new(max_running: usize) -> Ledger {
        Ledger {
            running: 0,
            charged_bytes: 0,
            max_running: max_running.max(1),
            offers: BTreeMap::new(),
            next_ticket: 0,
            kept: Vec::new(),
            kept_bytes: 0,
        }
    }

    /// The bytes the admission rule counts: every charge but the kept states', which are
    /// dropped when a job needs their memory (`evict`).
    fn admitted_bytes(&self) -> u64 {
        self.charged_bytes - self.kept_bytes
    }

    /// Keeps `state` under `key`, still charged `bytes` (a state already kept under the key,
    /// built by a batch that ran at the same time, is dropped).
    fn keep(&mut self, key: String, state: Arc<dyn Any + Send + Sync>, bytes: u64) {
        self.forget(&key);
        self.kept.push(Kept { key, state, bytes });
        self.kept_bytes += bytes;
    }

    /// Removes the state kept under `key`, its charge with it.
    fn forget(&mut self, key: &str) -> Option<Kept> {
        let p = self.kept.iter().position(|k| k.key == key)?;
        let k = self.kept.remove(p);
        self.kept_bytes -= k.bytes;
        self.charged_bytes -= k.bytes;
        Some(k)
    }

    /// The state kept under `key`, taken out of the store: charged from now on as a live
    /// shared image of `bytes`.
    fn adopt(&mut self, key: &str, bytes: u64) -> Option<Arc<dyn Any + Send + Sync>> {
        let k = self.forget(key)?;
        self.charged_bytes += bytes;
        Some(k.state)
    }

    /// Drops the oldest kept states while the charges exceed `budget` (a job was just
    /// admitted on the admission rule, which counts kept bytes as free).
    fn evict(&mut self, budget: u64) {
        while self.charged_bytes > budget && !self.kept.is_empty() {
            let k = self.kept.remove(0);
            self.kept_bytes -= k.bytes;
            self.charged_bytes -= k.bytes;
        }
    }

    /// Whether an offer of `cost` by `ticket` is beaten by another waiting worker's.
    fn beaten(&self, ticket: u64, cost: u64) -> bool {
        self.offers
            .iter()
            .any(|(&t, &c)| t != ticket && (c > cost || (c == cost && t < ticket)))
    }
}

/// The ledger under its lock, and the signal that it (or any batch's scheduler) changed.
struct Gate {
    ledger: Mutex<Ledger>,
    changed: Condvar,
}

impl Gate {
    fn new(jobs: usize) -> Gate {
        Gate {
            ledger: Mutex::new(Ledger::new(jobs)),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies `f` to the batch's scheduler and the ledger (the ledger's lock first, always),
    /// then wakes every waiting worker.
    fn update<D: Send + Sync + 'static, R>(
        &self,
        sched: &Mutex<Sched<D>>,
        f: impl FnOnce(&mut Sched<D>, &mut Ledger) -> R,
    ) -> R {
        let r = {
            let mut led = self.lock();
            let mut s = sched.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut s, &mut led)
        };
        self.changed.notify_all();
        r
    }

    /// The next job a worker of this batch starts, waiting while none can (module docs:
    /// memory and order); `None` when the batch has none left to start.
    fn next<D: Send + Sync + 'static>(
        &self,
        sched: &Mutex<Sched<D>>,
        plan: &Plan,
    ) -> Option<(usize, Task<D>)> {
        let mut led = self.lock();
        let ticket = led.next_ticket;
        led.next_ticket += 1;
        loop {
            let mut s = sched.lock().unwrap_or_else(|e| e.into_inner());
            // The offer is the job this batch would start on a free worker, so that when one
            // frees, the costliest offer takes it.
            let offer = s.offer(plan, &led);
            if let Some(cost) = offer {
                if led.running < led.max_running && !led.beaten(ticket, cost) {
                    let pick = s.take(plan, &mut led);
                    drop(s);
                    led.offers.remove(&ticket);
                    drop(led);
                    self.changed.notify_all();
                    return match pick {
                        Pick::Start(i, task) => Some((i, task)),
                        Pick::Wait | Pick::Done => None,
                    };
                }
            }
            let done = s.pending.is_empty();
            drop(s);
            // Withdrawing or lowering an offer may let a worker it held back start.
            let old = match offer {
                Some(c) => led.offers.insert(ticket, c),
                None => led.offers.remove(&ticket),
            };
            if old.is_some_and(|o| offer.is_none_or(|c| c < o)) {
                self.changed.notify_all();
            }
            if done {
                return None;
            }
            led = self.changed.wait(led).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The scheduler of one batch: which job a free worker starts, under the admission rule
/// (module docs: memory), with the charges kept in the ledger every batch running at once
/// shares. Pure bookkeeping, no I/O and no threads: the runner calls it under the ledger's
/// lock, the tests drive it directly.
struct Sched<D> {
    /// Jobs not yet taken, in the order they should start (grouped by prefill key).
    pending: Vec<usize>,
    slots: BTreeMap<usize, Slot<D>>,
}

/// Which pending job `Sched::choose` picked and how it starts.
enum Choice {
    /// A job whose group's device is ready (or whose group's build failed).
    Ready(usize),
    /// A job that runs alone or builds a new group's device.
    New(usize),
}

impl<D: Send + Sync + 'static> Sched<D> {
    fn new(plan: &Plan) -> Sched<D> {
        let mut pending: Vec<usize> = (0..plan.group.len()).collect();
        // Longest first (module docs: order): a group's jobs stay together (one shared image
        // alive at a time), groups by their costliest job, then jobs by cost; ties keep the
        // batch's order.
        let mut group_max: BTreeMap<usize, u64> = BTreeMap::new();
        for (i, &g) in plan.group.iter().enumerate() {
            let m = group_max.entry(g).or_insert(0);
            *m = (*m).max(plan.cost[i]);
        }
        pending.sort_by(|&a, &b| {
            let (ga, gb) = (plan.group[a], plan.group[b]);
            group_max[&gb]
                .cmp(&group_max[&ga])
                .then(ga.cmp(&gb))
                .then(plan.cost[b].cmp(&plan.cost[a]))
                .then(a.cmp(&b))
        });
        Sched {
            pending,
            slots: BTreeMap::new(),
        }
    }

    /// The admission rule: a job starts if its charge fits in what the budget leaves, or if
    /// no job is running (so a job bigger than the budget runs alone, and nothing waits
    /// forever). Whether a worker is free is the caller's (`Gate::next`, the tests).
    fn fits(&self, plan: &Plan, led: &Ledger, bytes: u64) -> bool {
        led.running == 0 || led.admitted_bytes().saturating_add(bytes) <= plan.budget_bytes
    }

    /// Where a group's state is kept after its batch: its key, with the state's type (two
    /// kinds of state never answer for each other).
    fn kept_key(plan: &Plan, i: usize) -> Option<String> {
        plan.keys[i]
            .as_ref()
            .map(|k| format!("{}\n{k}", std::any::type_name::<D>()))
    }

    /// The job `take` would start now, as its place in `pending`: first a job whose group's
    /// device is ready (so images are freed soon), else, in pending order, a job that runs
    /// alone or builds a new group's device (charged its own bytes plus the image's); each only if it
    /// fits.
    fn choose(&self, plan: &Plan, led: &Ledger) -> Option<Choice> {
        let ready = self.pending.iter().position(|&i| {
            if !plan.shared[i] {
                return false;
            }
            match self.slots.get(&plan.group[i]) {
                // A last taker takes the state, whose charge becomes part of its own.
                Some(Slot::Ready {
                    untaken, copying, ..
                }) if plan.last[i] => {
                    *untaken == 1
                        && *copying == 0
                        && self.fits(
                            plan,
                            led,
                            plan.job_bytes[i].saturating_sub(plan.image_bytes[plan.group[i]]),
                        )
                }
                Some(Slot::Ready { .. }) | Some(Slot::Failed) => {
                    self.fits(plan, led, plan.job_bytes[i])
                }
                _ => false,
            }
        });
        if let Some(p) = ready {
            return Some(Choice::Ready(p));
        }
        self.pending
            .iter()
            .position(|&i| {
                if !plan.shared[i] {
                    self.fits(plan, led, plan.job_bytes[i])
                } else {
                    // A last taker never builds: another job of its group does.
                    !plan.last[i]
                        && !self.slots.contains_key(&plan.group[i])
                        && self.fits(
                            plan,
                            led,
                            plan.job_bytes[i] + plan.image_bytes[plan.group[i]],
                        )
                }
            })
            .map(Choice::New)
    }

    /// The cost of the job `take` would start now (`None`: none can start).
    fn offer(&self, plan: &Plan, led: &Ledger) -> Option<u64> {
        self.choose(plan, led).map(|c| match c {
            Choice::Ready(p) | Choice::New(p) => plan.cost[self.pending[p]],
        })
    }

    /// Starts the job `choose` picks, charging it (and a new group's image) to the ledger.
    fn take(&mut self, plan: &Plan, led: &mut Ledger) -> Pick<D> {
        if self.pending.is_empty() {
            return Pick::Done;
        }
        match self.choose(plan, led) {
            None => Pick::Wait,
            Some(Choice::Ready(p)) => {
                let i = self.pending.remove(p);
                led.charged_bytes += plan.job_bytes[i];
                led.running += 1;
                let g = plan.group[i];
                if plan.last[i] {
                    if let Some(Slot::Ready { dev, .. }) = self.slots.remove(&g) {
                        // The only handle left: the job runs on the state itself.
                        led.charged_bytes -= plan.image_bytes[g];
                        led.evict(plan.budget_bytes);
                        return Pick::Start(i, Task::Follow(dev));
                    }
                }
                let task = match self.slots.get_mut(&g) {
                    Some(Slot::Ready {
                        dev,
                        untaken,
                        copying,
                    }) => {
                        *untaken -= 1;
                        *copying += 1;
                        Task::Follow(Arc::clone(dev))
                    }
                    _ => Task::Alone,
                };
                led.evict(plan.budget_bytes);
                Pick::Start(i, task)
            }
            Some(Choice::New(p)) => {
                let i = self.pending.remove(p);
                led.running += 1;
                led.charged_bytes += plan.job_bytes[i];
                if !plan.shared[i] {
                    led.evict(plan.budget_bytes);
                    return Pick::Start(i, Task::Alone);
                }
                let g = plan.group[i];
                // A state an earlier batch built and kept: the group starts from it.
                let kept = Self::kept_key(plan, i)
                    .and_then(|k| led.adopt(&k, plan.image_bytes[g]))
                    .and_then(|state| state.downcast::<D>().ok());
                let task = match kept {
                    Some(dev) => {
                        let others = plan.group.iter().filter(|&&x| x == g).count() - 1;
                        self.slots.insert(
                            g,
                            Slot::Ready {
                                dev: Arc::clone(&dev),
                                untaken: others,
                                copying: 1,
                            },
                        );
                        Task::Follow(dev)
                    }
                    None => {
                        led.charged_bytes += plan.image_bytes[g];
                        self.slots.insert(g, Slot::Building);
                        Task::Builder
                    }
                };
                led.evict(plan.budget_bytes);
                Pick::Start(i, task)
            }
        }
    }

    /// A builder's prefill of `group` finished: `Some(device)`, which the builder itself copies
    /// too, or `None` if it failed.
    fn published(&mut self, plan: &Plan, led: &mut Ledger, group: usize, dev: Option<Arc<D>>) {
        let others = plan.group.iter().filter(|&&g| g == group).count() - 1;
        match dev {
            Some(dev) => {
                self.slots.insert(
                    group,
                    Slot::Ready {
                        dev,
                        untaken: others,
                        copying: 1,
                    },
                );
            }
            None => {
                led.charged_bytes -= plan.image_bytes[group];
                self.slots.insert(group, Slot::Failed);
            }
        }
    }

    /// A job of `group` has its own copy (or took the image itself) and dropped its handle
    /// to the shared image; the last one frees the image's charge.
    fn copied(&mut self, plan: &Plan, led: &mut Ledger, group: usize) {
        if let Some(Slot::Ready {
            untaken, copying, ..
        }) = self.slots.get_mut(&group)
        {
            *copying -= 1;
            if *untaken == 0 && *copying == 0 {
                let slot = self.slots.remove(&group);
                // Kept for later batches (module docs: kept states), still charged; a
                // group without a key frees its charge.
                match (slot, Self::kept_key(plan, group)) {
                    (Some(Slot::Ready { dev, .. }), Some(key)) => {
                        led.keep(key, dev, plan.image_bytes[group])
                    }
                    _ => led.charged_bytes -= plan.image_bytes[group],
                }
            }
        }
    }

    /// Job `i` finished: its charge is freed.
    fn finished(&mut self, plan: &Plan, led: &mut Ledger, i: usize) {
        led.running -= 1;
        led.charged_bytes -= plan.job_bytes[i];
    }
}

/// Whether a job of `cfg` may share its starting state (`run_each_shared`): the state's
/// image and a job like it on each of `threads` workers fit in `budget` together.
fn shares_within(cfg: &Config, threads: usize, budget: u64) -> bool {
    image_bytes(cfg).saturating_add(job_bytes(cfg).saturating_mul(threads as u64)) <= budget
}

/// Builds the plan of a batch: groups by prefill key (a group of one, or a job without a
/// prefill, runs alone; so does every job when `share` is off).
fn plan(jobs: &[Job], progress: &Progress, share: bool) -> Plan {
    let keys: Vec<Option<String>> = jobs
        .iter()
        .map(|j| (share && j.cfg.workload.prefill > 0.0).then(|| world::prefill_key(&j.cfg)))
        .collect();
    plan_keyed(jobs, &keys, progress.mem_budget_bytes)
}

/// Builds the plan of a batch from each job's sharing key: jobs with the same key share one
/// device build (a group of one too, so that its state is kept for later batches, or taken
/// from an earlier one); a job without a key runs alone.
fn plan_keyed(jobs: &[Job], keys: &[Option<String>], budget_bytes: u64) -> Plan {
    plan_keyed_last(jobs, keys, &vec![false; jobs.len()], budget_bytes)
}

/// `plan_keyed` with the jobs that share only as their group's last taker (`Plan::last`).
fn plan_keyed_last(
    jobs: &[Job],
    keys: &[Option<String>],
    last: &[bool],
    budget_bytes: u64,
) -> Plan {
    // A group's id is the index of its first job (a job without a key is its own group).
    let group: Vec<usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| match k {
            Some(k) => keys
                .iter()
                .position(|x| x.as_deref() == Some(k.as_str()))
                .unwrap_or(i),
            None => i,
        })
        .collect();
    let mut image = vec![0u64; jobs.len()];
    for (j, &g) in jobs.iter().zip(&group) {
        image[g] = image_bytes(&j.cfg);
    }
    Plan {
        // A group of one shares too: its state is kept for a later batch, or taken from an
        // earlier one (module docs: kept states).
        shared: keys.iter().map(Option::is_some).collect(),
        keys: keys.to_vec(),
        job_bytes: jobs.iter().map(|j| job_bytes(&j.cfg)).collect(),
        image_bytes: image,
        budget_bytes,
        cost: jobs.iter().map(|j| cost_estimate(&j.cfg)).collect(),
        group,
        last: last.to_vec(),
    }
}

/// Whether a job of `cfg` may share its starting state as its group's last taker
/// (`Plan::last`): while it runs on the state itself, a job like it on each other worker
/// fits in `budget` beside it. For a point that measures recovery, which `shares_within`
/// refuses at full scale (the image and two recovering jobs exceed the budget).
fn shares_last_within(cfg: &Config, threads: usize, budget: u64) -> bool {
    let others = image_bytes(cfg).saturating_mul(threads.saturating_sub(1) as u64);
    job_bytes(cfg).saturating_add(others) <= budget
}

/// The sharing keys and last takers of a batch (`run_each_shared`): a job shares under its
/// `key` if its group's image and a job like it on every worker fit in the budget
/// (`shares_within`); otherwise, if it fits as a last taker (`shares_last_within`), it
/// shares as its group's last taker, one per group and only in a group with another job
/// to build the state (the first such job in batch order; the others run alone).
fn last_takers(
    jobs: &[Job],
    threads: usize,
    budget: u64,
    key: impl Fn(&Config) -> Option<String>,
) -> (Vec<Option<String>>, Vec<bool>) {
    let mut keys = Vec::with_capacity(jobs.len());
    let mut last = Vec::with_capacity(jobs.len());
    for j in jobs {
        if shares_within(&j.cfg, threads, budget) {
            keys.push(key(&j.cfg));
            last.push(false);
        } else if shares_last_within(&j.cfg, threads, budget) {
            keys.push(key(&j.cfg));
            last.push(true);
        } else {
            keys.push(None);
            last.push(false);
        }
    }
    for i in 0..jobs.len() {
        let Some(k) = keys[i].clone() else { continue };
        if !last[i] {
            continue;
        }
        let same = |x: usize| keys[x].as_deref() == Some(k.as_str());
        let builder = (0..jobs.len()).any(|x| same(x) && !last[x]);
        let earlier_last = (0..i).any(|x| same(x) && last[x]);
        if !builder || earlier_last {
            keys[i] = None;
            last[i] = false;
        }
    }
    (keys, last)
}

/// `run_all`, with prefill sharing switchable (off: every job prefills its own device; for
/// the test that both give the same results).
pub fn run_all_sharing(
    jobs: Vec<Job>,
    progress: &Progress,
    share: bool,
) -> Vec<Result<RunMetrics, String>> {
    let n = jobs.len();
    if progress.counting {
        return jobs
            .iter()
            .map(|j| Err(format!("{}: {COUNTING}", j.label)))
            .collect();
    }
    progress
        .configs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(jobs.iter().map(|j| (j.label.clone(), j.cfg.to_toml())));
    if let Some(remote) = progress.remote {
        return remote.serve(&jobs, progress, |_| crate::remote::PointTask::Run);
    }
    let threads = progress.jobs.clamp(1, n.max(1));
    let plan = plan(&jobs, progress, share);
    let sched: Mutex<Sched<Prefilled>> = Mutex::new(Sched::new(&plan));
    let gate = &progress.gate;
    let results: Mutex<Vec<Option<Result<RunMetrics, String>>>> =
        Mutex::new((0..n).map(|_| None).collect());
    let take = || gate.next(&sched, &plan);
    // Takes a job's own copy of its group's device, then frees the image's charge if it
    // was the last to need it.
    let own_copy = |g: usize, dev: Arc<Prefilled>| -> Result<Prefilled, world::WorldError> {
        let own = take_copy(dev);
        release_freed_memory();
        gate.update(&sched, |s, led| s.copied(&plan, led, g));
        own
    };
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                while let Some((i, task)) = take() {
                    let job = &jobs[i];
                    let g = plan.group[i];
                    let meter = Meter::new();
                    let kind = match task {
                        Task::Alone => "alone",
                        Task::Builder => "builder",
                        Task::Follow(_) => "follow",
                    };
                    let mut setup_cpu_s = None;
                    mem_log(progress, &job.label, &format!("start {kind}"));
                    let err = |e: world::WorldError| format!("{}: {e}", job.label);
                    let r = match task {
                        Task::Alone => {
                            measured(&job.cfg, |c| world::run(c, &RunOptions::default()))
                                .map_err(err)
                        }
                        Task::Follow(dev) => own_copy(g, dev)
                            .and_then(|own| measured(&job.cfg, |c| world::run_prefilled(c, own)))
                            .map_err(err),
                        Task::Builder => match world::prefill(&job.cfg) {
                            Ok(dev) => {
                                setup_cpu_s = Some(meter.cpu_s());
                                mem_log(progress, &job.label, "prefilled");
                                let dev = Arc::new(dev);
                                gate.update(&sched, |s, led| {
                                    s.published(&plan, led, g, Some(Arc::clone(&dev)))
                                });
                                own_copy(g, dev)
                                    .and_then(|own| {
                                        measured(&job.cfg, |c| world::run_prefilled(c, own))
                                    })
                                    .map_err(err)
                            }
                            Err(e) => {
                                gate.update(&sched, |s, led| s.published(&plan, led, g, None));
                                Err(err(e))
                            }
                        },
                    };
                    release_freed_memory();
                    gate.update(&sched, |s, led| s.finished(&plan, led, i));
                    mem_log(progress, &job.label, "end");
                    progress.finished(
                        meter.done(&job.label, kind, setup_cpu_s, plan.cost[i]),
                        r.is_err(),
                    );
                    if let Ok(mut v) = results.lock() {
                        v[i] = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("run did not complete".into())))
        .collect()
}

/// Returns the memory the allocator holds free to the system, so that the resident set
/// follows what the admission rule charges. glibc keeps freed chunks in its arenas (below its
/// adaptive mmap threshold, which grows to 32 MiB after a large free: most of a device's
/// tables and its summary pages' bytes); without this the full reproduction's resident set
/// stayed 0.8–1.3 GiB above its live data between jobs. The `commitlab` binary's global
/// allocator is mimalloc (docs/TOOL.md, "Commands and output"): `mi_collect(true)` returns what
/// this thread's mimalloc heap holds free (a no-op where mimalloc is linked but unused, as in
/// the Python module, whose allocations glibc's `malloc_trim` covers). Changes memory only,
/// never results.
fn release_freed_memory() {
    // SAFETY: mi_collect only purges free pages of mimalloc's heaps; no preconditions.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim only returns free memory of glibc's heaps to the kernel
        // (madvise / sbrk); it touches no live allocation and has no preconditions.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Runs `cfg` through `run` and, if it measures recovery, measures it on the run's own
/// device once the run is over, instead of inside the run (`world::run` would copy the image
/// and recover the copy while the run's whole device is still alive: at 32 GiB that copy
/// and those tables were about 0.7 GiB of a TxFlash Fig. 8 job's 1.9 GiB peak). The same
/// steps as `world::run`'s, on the same image, so the same metrics, byte for byte.
pub(crate) fn measured(
    cfg: &Config,
    run: impl FnOnce(&Config) -> Result<world::RunOutput, world::WorldError>,
) -> Result<RunMetrics, world::WorldError> {
    if !cfg.run.measure_recovery {
        return run(cfg).map(|o| o.metrics);
    }
    let mut bare = cfg.clone();
    bare.run.measure_recovery = false;
    let out = run(&bare)?;
    let mut m = out.metrics;
    let t = std::time::Instant::now();
    // The run's FTL and protocol tables go here; its image is recovered as it is.
    let image = out.device.into_nand().into_image();
    let nand = media::Nand::from_image(image, cfg.nand.timing.clone());
    let (_, rep) =
        ssd::Device::recover_with(&cfg.device(), nand, cfg.run.recovery_reads).map_err(|e| {
            world::WorldError::Device {
                at: sim::SimTime::from_ns(m.sim_time_ns),
                request: "recovery after the run".into(),
                error: e,
            }
        })?;
    m.recovery = Some(world::metrics::RecoveryMetrics {
        pages_read: rep.pages_read,
        scanned_pages: rep.scanned_pages,
        time_ns: rep.time_ns,
        had_checkpoint: rep.had_checkpoint,
    });
    m.recovery_wall_time_s = t.elapsed().as_secs_f64();
    Ok(m)
}

/// With `COMMITLAB_MEM_LOG` set, prints one line to stderr per job event with the process's
/// resident set and its peak so far (`VmRSS`, `VmHWM` of /proc/self/status), to find which
/// jobs overlap when memory peaks. Diagnostics only: nothing in the results depends on it.
fn mem_log(progress: &Progress, label: &str, event: &str) {
    if std::env::var_os("COMMITLAB_MEM_LOG").is_none() {
        return;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = |key: &str| -> u64 {
        status
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let gib = |k: u64| k as f64 / (1024.0 * 1024.0);
    eprintln!(
        "mem {:8.1} s rss {:6.3} GiB peak {:6.3} GiB  {event}: {label}",
        progress.start.elapsed().as_secs_f64(),
        gib(kib("VmRSS:")),
        gib(kib("VmHWM:")),
    );
}

/// A job's own copy of a shared prefilled device; the last holder takes the device itself
/// instead of copying. The handle is dropped before returning.
fn take_copy(dev: Arc<Prefilled>) -> Result<Prefilled, world::WorldError> {
    match Arc::try_unwrap(dev) {
        Ok(d) => Ok(d),
        Err(shared) => shared.try_clone().ok_or_else(|| {
            world::WorldError::Config("a prefilled device could not be copied".into())
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flag Commit's full-scale configuration (the `flagcommit` preset, 32 GiB of 2 KiB
    /// pages in tag mode, TPC-C on the host) on `protocol`.
    fn flagcommit_full(protocol: &str, recovery: bool) -> Config {
        let mut c = Config::load(&world::ConfigSource {
            preset: Some("flagcommit".into()),
            file: None,
            sets: vec![
                "nand.data_mode=\"tag\"".into(),
                "nand.append_bytes=4".into(),
                format!("protocol.name=\"{protocol}\""),
            ],
        })
        .unwrap();
        c.workload.kind = world::WorkloadKind::Host;
        c.host.strategy = "device-tx".into();
        c.host.measure_recovery = recovery;
        c
    }

    /// A host run measures its recovery by `host.measure_recovery` and is charged for it by
    /// that flag alone (`run.measure_recovery`, on by default, means nothing to it); a
    /// device run by `run.measure_recovery`.
    #[test]
    fn a_job_is_charged_recovery_by_the_flag_its_run_reads() {
        let mut c = flagcommit_full("cfc", false);
        assert!(c.run.measure_recovery);
        let tables = crate::footprint::host_run_bytes(&c);
        assert_eq!(job_bytes(&c), image_bytes(&c) + tables);
        c.host.measure_recovery = true;
        c.run.measure_recovery = false;
        assert!(job_bytes(&c) > image_bytes(&c) + tables);
        let mut d = flagcommit_full("cfc", false);
        d.workload.kind = world::WorkloadKind::Synthetic;
        assert!(job_bytes(&d) > image_bytes(&d));
        d.run.measure_recovery = false;
        assert_eq!(job_bytes(&d), image_bytes(&d));
    }

    /// At the default budget a 32 GiB Flag Commit point shares its aged device with two
    /// workers running (the image and two jobs fit), so full scale ages each device once
    /// per group; a point that measures recovery (charged its recovered tables and scan
    /// too) still ages its own.
    #[test]
    fn full_scale_flag_commit_shares_its_aged_device_at_the_default_budget() {
        for p in ["cfc", "afc", "bpcc", "scc"] {
            assert!(
                shares_within(&flagcommit_full(p, false), 2, MEM_BUDGET_BYTES),
                "{p}"
            );
            assert!(
                !shares_within(&flagcommit_full(p, true), 2, MEM_BUDGET_BYTES),
                "{p}"
            );
            // A recovering point shares as its group's last taker.
            assert!(
                shares_last_within(&flagcommit_full(p, true), 2, MEM_BUDGET_BYTES),
                "{p}"
            );
        }
    }

    /// A small device prefilled to 80 % and aged, running `transactions` transactions of up
    /// to 12 pages: the shared setup of the runner's identity tests.
    fn small_aged(
        protocol: &str,
        aborts: f64,
        seed: u64,
        transactions: u64,
        recovery: bool,
    ) -> Config {
        let mut cfg = Config {
            seed,
            ..Config::default()
        };
        cfg.protocol.name = protocol.into();
        cfg.nand.blocks_per_plane = 24;
        cfg.workload.prefill = 0.8;
        cfg.workload.age = 0.5;
        cfg.workload.kind = world::WorkloadKind::Txn;
        cfg.workload.txn.transactions = transactions;
        cfg.workload.txn.size_max = 12;
        cfg.workload.txn.abort_ratio = aborts;
        cfg.run.measure_recovery = recovery;
        cfg
    }

    /// Drives the scheduler as `threads` workers would, each job finishing in the order
    /// jobs started (a builder publishes its prefill and every job makes its copy as soon as
    /// it starts); returns the events and checks the budget at every start.
    fn simulate(plan: &Plan, threads: usize) -> Vec<String> {
        let mut s: Sched<()> = Sched::new(plan);
        let mut led = Ledger::new(threads);
        let mut running: Vec<usize> = Vec::new();
        let mut events = Vec::new();
        loop {
            while running.len() < threads {
                match s.take(plan, &mut led) {
                    Pick::Start(i, task) => {
                        let g = plan.group[i];
                        let kind = match task {
                            Task::Alone => "alone",
                            Task::Builder => {
                                s.published(plan, &mut led, g, Some(Arc::new(())));
                                "builder"
                            }
                            Task::Follow(_) if plan.last[i] => "last",
                            Task::Follow(_) => "follow",
                        };
                        if plan.shared[i] {
                            s.copied(plan, &mut led, g);
                        }
                        // The rule: under the budget, or the only job running.
                        assert!(
                            led.charged_bytes <= plan.budget_bytes || led.running == 1,
                            "job {i} started over the budget: {} > {}",
                            led.charged_bytes,
                            plan.budget_bytes
                        );
                        events.push(format!("+{i} {kind} ({})", led.charged_bytes));
                        running.push(i);
                    }
                    Pick::Wait => break,
                    Pick::Done => break,
                }
            }
            if running.is_empty() {
                assert!(s.pending.is_empty(), "stuck with jobs pending");
                assert_eq!(led.charged_bytes, 0, "charges left after the last job");
                return events;
            }
            let i = running.remove(0);
            s.finished(plan, &mut led, i);
            events.push(format!("-{i}"));
        }
    }

    /// The admission rule: a job starts only while the bytes charged to running jobs and
    /// live shared images stay within the budget, a job bigger than the budget runs alone,
    /// and a builder is charged its group's image as well as its own device.
    #[test]
    fn admission_keeps_declared_bytes_within_the_budget() {
        // Five jobs that run alone, 2 workers, budget 10.
        let alone = Plan {
            group: vec![0, 1, 2, 3, 4],
            shared: vec![false; 5],
            job_bytes: vec![4, 5, 3, 12, 6],
            image_bytes: vec![0; 5],
            budget_bytes: 10,
            cost: vec![0; 5],
            keys: vec![None; 5],
            last: vec![false; 5],
        };
        assert_eq!(
            simulate(&alone, 2),
            [
                "+0 alone (4)",
                "+1 alone (9)",
                "-0",
                "+2 alone (8)",
                "-1",
                // 3 (12) is over the budget: 4 (6), which fits, starts first, and 3
                // waits until it can run alone.
                "+4 alone (9)",
                "-2",
                "-4",
                "+3 alone (12)",
                "-3",
            ]
        );
        // A budget of 0 runs one job at a time; an unlimited one as many as there are workers.
        let one_at_a_time = simulate(
            &Plan {
                budget_bytes: 0,
                ..alone.clone()
            },
            2,
        );
        assert!(one_at_a_time
            .windows(2)
            .all(|w| !(w[0].starts_with('+') && w[1].starts_with('+'))));
        assert_eq!(
            simulate(
                &Plan {
                    budget_bytes: u64::MAX,
                    ..alone.clone()
                },
                2
            )[..2],
            ["+0 alone (4)", "+1 alone (9)"]
        );

        // Two groups of shared prefills (jobs 0, 2, 4 and 1, 3) and a loner, each device 3,
        // each job 3 (6 if it measures recovery). A builder is charged its job and the image.
        let shared = Plan {
            group: vec![0, 1, 0, 1, 0, 2],
            shared: vec![true, true, true, true, true, false],
            job_bytes: vec![6, 3, 3, 3, 6, 3],
            image_bytes: vec![3, 3, 3],
            budget_bytes: 12,
            cost: vec![0; 6],
            keys: vec![None; 6],
            last: vec![false; 6],
        };
        assert_eq!(
            simulate(&shared, 2),
            [
                "+0 builder (9)",
                "+2 follow (12)",
                "-0",
                // Job 4 is the group's last user: the image's charge goes when it has its copy.
                "+4 follow (9)",
                "-2",
                // The second group's builder: 3 + 3 with job 4's 6 running.
                "+1 builder (12)",
                "-4",
                "+3 follow (6)",
                "-1",
                "+5 alone (6)",
                "-3",
                "-5",
            ]
        );
        // Same plan, budget 8: a builder (6 + 3) exceeds it and runs alone.
        assert_eq!(
            simulate(
                &Plan {
                    budget_bytes: 8,
                    ..shared.clone()
                },
                2
            ),
            [
                "+0 builder (9)",
                "-0",
                "+2 follow (6)",
                "-2",
                "+4 follow (6)",
                "-4",
                "+1 builder (6)",
                "-1",
                "+3 follow (3)",
                "+5 alone (6)",
                "-3",
                "-5",
            ]
        );
    }

    /// A last taker (`Plan::last`) starts only once every other job of its group has its
    /// copy, and takes the image itself: the image's charge becomes part of its own.
    #[test]
    fn a_last_taker_takes_the_image_after_every_other_copy() {
        // One group (jobs 0, 1, 2; job 2 measures recovery: 5), each device 3, budget 9.
        let plan = Plan {
            group: vec![0, 0, 0],
            shared: vec![true; 3],
            job_bytes: vec![3, 3, 5],
            image_bytes: vec![3, 0, 0],
            budget_bytes: 9,
            cost: vec![0, 0, 9],
            keys: vec![None; 3],
            last: vec![false, false, true],
        };
        assert_eq!(
            simulate(&plan, 2),
            [
                // The costliest job is the last taker: it neither builds nor starts early.
                "+0 builder (6)",
                "+1 follow (9)",
                "-0",
                // Its 5 with the other job's 3: 8, the image no longer charged apart.
                "+2 last (8)",
                "-1",
                "-2",
            ]
        );
    }

    /// Recovery measured by the runner on the run's own device, after the run, gives the
    /// figures `world::run` gives when it measures recovery on a copy inside the run, for
    /// jobs that run alone, build or follow a shared prefill, on protocols that scan the
    /// whole device and one that recovers from a checkpoint.
    #[test]
    fn recovery_measured_after_the_run_gives_the_runs_own_figures() {
        for protocol in ["bpcc", "lighttx"] {
            let mk = |aborts: f64| small_aged(protocol, aborts, 3, 150, true);
            let direct: Vec<String> = [0.0, 0.3]
                .iter()
                .map(|&a| {
                    let m = world::run(&mk(a), &RunOptions::default()).unwrap().metrics;
                    assert!(m.recovery.as_ref().is_some_and(|r| r.pages_read > 0));
                    world::deterministic_json(&m)
                })
                .collect();
            let say = |_: &str| {};
            for share in [false, true] {
                let p = Progress::new(2, &say);
                let jobs = [0.0, 0.3]
                    .iter()
                    .map(|&a| Job {
                        label: format!("{protocol} {a}"),
                        cfg: mk(a),
                    })
                    .collect();
                let via: Vec<String> = run_all_sharing(jobs, &p, share)
                    .into_iter()
                    .map(|r| world::deterministic_json(&r.unwrap()))
                    .collect();
                assert_eq!(direct, via, "{protocol}, sharing {share}");
            }
        }
    }

    /// The number of jobs changes the wall time, never the results or their order.
    #[test]
    fn results_do_not_depend_on_the_number_of_jobs() {
        let jobs = || {
            (0..4)
                .map(|i| {
                    let mut cfg = Config {
                        seed: i + 1,
                        ..Config::default()
                    };
                    cfg.workload.synthetic.requests = 200;
                    cfg.run.measure_recovery = false;
                    Job {
                        label: format!("seed {}", i + 1),
                        cfg,
                    }
                })
                .collect::<Vec<_>>()
        };
        let lines = Mutex::new(Vec::new());
        let say = |l: &str| lines.lock().unwrap().push(l.to_string());
        let json = |jobs_n: usize| {
            let p = Progress::new(jobs_n, &say);
            p.plan(4);
            run_all(jobs(), &p)
                .into_iter()
                .map(|r| world::deterministic_json(&r.unwrap()))
                .collect::<Vec<_>>()
        };
        assert_eq!(json(1), json(3));
        let lines = lines.into_inner().unwrap();
        assert!(lines
            .iter()
            .any(|l| l.starts_with("[4/4] ") && l.contains("ETA")));
    }

    /// A job for the cross-batch tests: nothing is run (`run_each`'s function only records
    /// it); its cost estimate grows with `txns` (a host job's transactions).
    fn host_job(txns: u64) -> Job {
        let mut cfg = Config::default();
        cfg.workload.kind = world::WorkloadKind::Host;
        cfg.host.transactions = txns;
        Job {
            label: format!("t{txns}"),
            cfg,
        }
    }

    /// Waits up to 60 s for `ready` to hold, re-checking as `cv` signals; whether it held.
    fn wait_for(m: &Mutex<usize>, cv: &Condvar, ready: impl Fn(usize) -> bool) -> bool {
        let g = m.lock().unwrap();
        let (g, _) = cv
            .wait_timeout_while(g, std::time::Duration::from_secs(60), |v| !ready(*v))
            .unwrap();
        ready(*g)
    }

    /// Batches run at once on the children of one progress (papers side by side,
    /// `crate::run_papers`) share its workers: with 2 jobs, two batches of one job each run
    /// their jobs together (one batch at a time never would); with 1 job, three batches
    /// never run two jobs at once (a worker pool per batch would run three).
    #[test]
    fn batches_side_by_side_share_the_workers() {
        let say = |_: &str| {};
        // Two workers: each batch's job waits until the other's has started.
        let p = Progress::new(2, &say);
        let (m, cv) = (Mutex::new(0usize), Condvar::new());
        let both = |_: &Config| -> Result<bool, String> {
            *m.lock().unwrap() += 1;
            cv.notify_all();
            Ok(wait_for(&m, &cv, |v| v >= 2))
        };
        let met: Vec<bool> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..2)
                .map(|k| {
                    let c = p.child();
                    let both = &both;
                    sc.spawn(move || run_each(vec![host_job(k + 1)], &c, both))
                })
                .collect();
            hs.into_iter()
                .flat_map(|h| h.join().unwrap())
                .map(|r| r.unwrap())
                .collect()
        });
        assert_eq!(
            met,
            vec![true, true],
            "the two batches' jobs did not overlap"
        );

        // One worker, three batches of three jobs: at most one job at a time.
        let p = Progress::new(1, &say);
        let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let one = |_: &Config| -> Result<(), String> {
            let k = now.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(k, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(5));
            now.fetch_sub(1, Ordering::SeqCst);
            Ok(())
        };
        std::thread::scope(|sc| {
            for b in 0..3u64 {
                let c = p.child();
                let one = &one;
                sc.spawn(move || {
                    let jobs = (0..3).map(|j| host_job(b * 10 + j + 1)).collect();
                    for r in run_each(jobs, &c, one) {
                        r.unwrap();
                    }
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert_eq!(p.done.load(Ordering::SeqCst), 9);
    }

    /// An offer is beaten by a costlier one of another waiting worker, and on equal cost by
    /// the older ticket; never by its own.
    #[test]
    fn an_offer_is_beaten_by_a_costlier_or_older_equal_one() {
        let mut led = Ledger::new(2);
        led.offers.insert(0, 10);
        led.offers.insert(1, 1000);
        assert!(led.beaten(0, 10));
        assert!(!led.beaten(1, 1000));
        led.offers.insert(1, 10);
        assert!(!led.beaten(0, 10));
        assert!(led.beaten(1, 10));
        led.offers.clear();
        led.offers.insert(3, 7);
        assert!(!led.beaten(3, 7));
    }

    /// A free worker starts the costliest job any batch has waiting: with one worker busy
    /// and two other batches waiting (a cheap job offered first, a costly one second), the
    /// costly one starts next. Waiting batches offered in no order of cost before.
    #[test]
    fn the_costliest_waiting_job_of_any_batch_starts_first() {
        let say = |_: &str| {};
        let p = Progress::new(1, &say);
        let order = Mutex::new(Vec::new());
        let (m, cv) = (Mutex::new(0usize), Condvar::new());
        let record = |c: &Config| -> Result<(), String> {
            order.lock().unwrap().push(c.host.transactions);
            Ok(())
        };
        // The blocker holds the worker until both other batches have offered their job.
        let blocker = |c: &Config| -> Result<(), String> {
            record(c)?;
            *m.lock().unwrap() = 1;
            cv.notify_all();
            let t0 = Instant::now();
            while p.gate.lock().offers.len() < 2 {
                assert!(t0.elapsed().as_secs() < 60, "the batches never offered");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Ok(())
        };
        std::thread::scope(|sc| {
            let c0 = p.child();
            let blocker = &blocker;
            sc.spawn(move || run_each(vec![host_job(5)], &c0, blocker));
            assert!(wait_for(&m, &cv, |v| v == 1));
            // The cheap batch offers first (the older ticket), then the costly one.
            let (ca, cb) = (p.child(), p.child());
            let record = &record;
            let a = sc.spawn(move || run_each(vec![host_job(1), host_job(2)], &ca, record));
            let t0 = Instant::now();
            while p.gate.lock().offers.is_empty() {
                assert!(t0.elapsed().as_secs() < 60);
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            let b = sc.spawn(move || run_each(vec![host_job(1000)], &cb, record));
            a.join().unwrap();
            b.join().unwrap();
        });
        assert_eq!(order.into_inner().unwrap(), vec![5, 1000, 2, 1]);
    }

    /// A state built by one batch is kept after it: a later batch whose group has the same
    /// key starts from it (no builder builds it again), a group of one included; a state of
    /// another type under the same key is not taken.
    #[test]
    fn a_later_batch_starts_from_the_state_an_earlier_one_kept() {
        let plan = |keys: Vec<Option<&str>>| {
            let n = keys.len();
            let keys: Vec<Option<String>> = keys.into_iter().map(|k| k.map(String::from)).collect();
            let jobs: Vec<Job> = (0..n)
                .map(|i| Job {
                    label: i.to_string(),
                    cfg: Config::default(),
                })
                .collect();
            let mut p = plan_keyed(&jobs, &keys, 100);
            p.job_bytes = vec![10; n];
            p.image_bytes = vec![10; n];
            p
        };
        // Runs a batch on one worker through `led`; returns each start's task.
        fn run<D: Send + Sync + 'static>(
            plan: &Plan,
            led: &mut Ledger,
            d: fn() -> D,
        ) -> Vec<String> {
            let mut s: Sched<D> = Sched::new(plan);
            let mut v = Vec::new();
            while let Pick::Start(i, task) = s.take(plan, led) {
                let g = plan.group[i];
                v.push(
                    match task {
                        Task::Alone => "alone",
                        Task::Builder => {
                            s.published(plan, led, g, Some(Arc::new(d())));
                            "builder"
                        }
                        Task::Follow(_) => "follow",
                    }
                    .to_string(),
                );
                if plan.shared[i] {
                    s.copied(plan, led, g);
                }
                s.finished(plan, led, i);
            }
            v
        }
        let mut led = Ledger::new(1);
        let first = plan(vec![Some("a"), Some("a"), Some("b"), None]);
        assert_eq!(
            run(&first, &mut led, || 1u8),
            ["builder", "follow", "builder", "alone"]
        );
        // Both states kept, still charged, counted free by the admission rule.
        assert_eq!(
            (led.kept.len(), led.charged_bytes, led.admitted_bytes()),
            (2, 20, 0)
        );
        let second = plan(vec![Some("b"), Some("a"), Some("a"), Some("c")]);
        assert_eq!(
            run(&second, &mut led, || 1u8),
            ["follow", "follow", "follow", "builder"]
        );
        assert_eq!(led.kept.len(), 3);
        // Another type of state under the same key is built anew.
        assert_eq!(run(&plan(vec![Some("a")]), &mut led, || 1u16), ["builder"]);
    }

    /// Kept states are dropped, oldest first, when a job needs their memory, and only then.
    #[test]
    fn a_kept_state_is_dropped_when_a_job_needs_its_memory() {
        let mut led = Ledger::new(2);
        led.charged_bytes = 30;
        led.keep("x".into(), Arc::new(()), 10);
        led.keep("y".into(), Arc::new(()), 10);
        led.keep("z".into(), Arc::new(()), 10);
        assert_eq!(led.admitted_bytes(), 0);
        led.evict(30);
        assert_eq!(led.kept.len(), 3);
        led.charged_bytes += 15;
        led.evict(30);
        let left: Vec<&str> = led.kept.iter().map(|k| k.key.as_str()).collect();
        assert_eq!(left, ["z"]);
        assert_eq!((led.charged_bytes, led.kept_bytes), (25, 10));
        // Keeping a key again (its charge carried over from its batch's image) replaces the
        // older state and drops the older charge.
        led.charged_bytes += 10;
        led.keep("z".into(), Arc::new(()), 10);
        assert_eq!((led.kept.len(), led.charged_bytes), (1, 25));
    }

    /// Batches run one after another on one progress start from the devices earlier batches
    /// prefilled (every job of the second batch follows, none builds), with the results,
    /// byte for byte, of points that prefill their own.
    #[test]
    fn kept_prefills_give_the_results_of_separate_ones() {
        let mk = |protocol: &str, aborts: f64| Job {
            label: format!("{protocol} {aborts}"),
            cfg: small_aged(protocol, aborts, 5, 150, false),
        };
        let say = |_: &str| {};
        let p = Progress::new(2, &say);
        let json = |r: Vec<Result<RunMetrics, String>>| -> Vec<String> {
            r.into_iter()
                .map(|r| world::deterministic_json(&r.unwrap()))
                .collect()
        };
        let first = run_all(vec![mk("lighttx", 0.0), mk("scc", 0.1)], &p);
        let tasks = |p: &Progress| -> Vec<&'static str> {
            let mut t: Vec<_> = p.take_timings().iter().map(|t| t.task).collect();
            t.sort();
            t
        };
        assert_eq!(tasks(&p), ["builder", "builder"]);
        let second = json(run_all(
            vec![mk("scc", 0.3), mk("lighttx", 0.2), mk("lighttx", 0.4)],
            &p,
        ));
        assert_eq!(tasks(&p), ["follow", "follow", "follow"]);
        let alone = Progress::new(1, &say);
        let direct = json(run_all_sharing(
            vec![mk("scc", 0.3), mk("lighttx", 0.2), mk("lighttx", 0.4)],
            &alone,
            false,
        ));
        assert_eq!(second, direct);
        assert_eq!(
            json(first),
            json(run_all_sharing(
                vec![mk("lighttx", 0.0), mk("scc", 0.1)],
                &alone,
                false
            ))
        );
    }

    /// Points that share a prefilled device (same device, seed and prefill; different
    /// workloads) give the same JSON, byte for byte, as points that prefill their own, and
    /// the groups may interleave on the worker threads in any order.
    #[test]
    fn shared_prefills_give_the_results_of_separate_ones() {
        let mk = |protocol: &str, aborts: f64, seed: u64| {
            let cfg = small_aged(protocol, aborts, seed, 200, false);
            Job {
                label: format!("{protocol} {aborts} {seed}"),
                cfg,
            }
        };
        let jobs = || {
            vec![
                mk("lighttx", 0.0, 1),
                mk("scc", 0.0, 1),
                mk("lighttx", 0.2, 1),
                mk("none", 0.0, 1),
                mk("scc", 0.3, 1),
                mk("lighttx", 0.4, 1),
                mk("lighttx", 0.4, 2),
                // Differs from the lighttx group only in its ageing: must not share.
                {
                    let mut j = mk("lighttx", 0.2, 1);
                    j.cfg.workload.age = 0.25;
                    j
                },
            ]
        };
        let say = |_: &str| {};
        let json = |jobs_n: usize, share: bool| {
            let p = Progress::new(jobs_n, &say);
            run_all_sharing(jobs(), &p, share)
                .into_iter()
                .map(|r| world::deterministic_json(&r.unwrap()))
                .collect::<Vec<_>>()
        };
        let separate = json(1, false);
        assert_eq!(separate, json(2, true));
        assert_eq!(separate, json(3, true));
        assert_eq!(separate, json(1, true));
    }
}

/// Runs every job with `f` making one point of a job's configuration (e.g. a host run on an
/// aged device), `progress.jobs` at a time within the memory budget (each job charged
/// `job_bytes`), without prefill sharing (the caller owns the device); results in input
/// order, failures as `Err("label: message")`.
pub fn run_each<T: Send>(
    jobs: Vec<Job>,
    progress: &Progress,
    f: impl Fn(&Config) -> Result<T, String> + Sync,
) -> Vec<Result<T, String>> {
    run_each_shared(
        jobs,
        progress,
        |_| None,
        |_| Ok(()),
        |_| Some(()),
        |c: &Config, ()| f(c),
    )
}

/// `run_each` for points that start from a state they build themselves (e.g. a device aged
/// outside `world`): jobs whose `key` is the same `Some` share one `start` (built by the
/// first of them to run, copied with `copy` for each other, the last taking the original),
/// as `run_all` shares prefills (module docs, with the same admission rule: a shared state
/// is charged `image_bytes`). `f` runs a point from its own state. A key must name
/// everything the state depends on: sharing gives the same results as building separately
/// only if equal keys build equal states (the caller's test). If the first job's `start`
/// fails, the others of its group build their own, so each error is its own.
pub fn run_each_shared<T: Send, D: Send + Sync + 'static>(
    jobs: Vec<Job>,
    progress: &Progress,
    key: impl Fn(&Config) -> Option<String>,
    start: impl Fn(&Config) -> Result<D, String> + Sync,
    copy: impl Fn(&D) -> Option<D> + Sync,
    f: impl Fn(&Config, D) -> Result<T, String> + Sync,
) -> Vec<Result<T, String>> {
    let n = jobs.len();
    if progress.counting {
        return jobs
            .iter()
            .map(|j| Err(format!("{}: {COUNTING}", j.label)))
            .collect();
    }
    if let Some(remote) = progress.remote {
        return remote.refuse(&jobs).into_iter().map(Err).collect();
    }
    progress
        .configs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(jobs.iter().map(|j| (j.label.clone(), j.cfg.to_toml())));
    let threads = progress.jobs.clamp(1, n.max(1));
    // Share a state only where its image and a job on every worker fit in the budget
    // together: otherwise the admission rule would leave workers idle while the image lives,
    // and building apart keeps them busy (a 32 GiB Flag Commit device under a 3 GiB
    // budget: 1.1 GiB image + 2 jobs > 3 GiB ran one job at a time; `shares_within`). A
    // job that does not fit so may still take the state itself as its group's last user
    // (`last_takers`: full-scale Flag Commit's points that measure recovery).
    let (keys, last) = last_takers(&jobs, threads, progress.mem_budget_bytes, key);
    let plan = plan_keyed_last(&jobs, &keys, &last, progress.mem_budget_bytes);
    let sched: Mutex<Sched<D>> = Mutex::new(Sched::new(&plan));
    let gate = &progress.gate;
    let results: Mutex<Vec<Option<Result<T, String>>>> = Mutex::new((0..n).map(|_| None).collect());
    let take = || gate.next(&sched, &plan);
    // A job's own copy of its group's state (the last holder takes the state itself), then
    // the image's charge is freed if it was the last to need it.
    let own_copy = |g: usize, shared: Arc<D>| -> Result<D, String> {
        let own = match Arc::try_unwrap(shared) {
            Ok(d) => Ok(d),
            Err(shared) => {
                copy(&shared).ok_or_else(|| "a shared device could not be copied".to_string())
            }
        };
        release_freed_memory();
        gate.update(&sched, |s, led| s.copied(&plan, led, g));
        own
    };
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                while let Some((i, task)) = take() {
                    let job = &jobs[i];
                    let g = plan.group[i];
                    let meter = Meter::new();
                    let kind = match task {
                        Task::Alone => "alone",
                        Task::Builder => "builder",
                        Task::Follow(_) if plan.last[i] => "last",
                        Task::Follow(_) => "follow",
                    };
                    let mut setup_cpu_s = None;
                    mem_log(progress, &job.label, &format!("start {kind}"));
                    let r = match task {
                        Task::Alone => start(&job.cfg).and_then(|d| {
                            if keys[i].is_some() {
                                setup_cpu_s = Some(meter.cpu_s());
                            }
                            f(&job.cfg, d)
                        }),
                        Task::Follow(shared) => {
                            own_copy(g, shared).and_then(|own| f(&job.cfg, own))
                        }
                        Task::Builder => match start(&job.cfg) {
                            Ok(d) => {
                                setup_cpu_s = Some(meter.cpu_s());
                                mem_log(progress, &job.label, "built");
                                let d = Arc::new(d);
                                gate.update(&sched, |s, led| {
                                    s.published(&plan, led, g, Some(Arc::clone(&d)))
                                });
                                own_copy(g, d).and_then(|own| f(&job.cfg, own))
                            }
                            Err(e) => {
                                gate.update(&sched, |s, led| s.published(&plan, led, g, None));
                                Err(e)
                            }
                        },
                    }
                    .map_err(|e| format!("{}: {e}", job.label));
                    release_freed_memory();
                    gate.update(&sched, |s, led| s.finished(&plan, led, i));
                    mem_log(progress, &job.label, "end");
                    progress.finished(
                        meter.done(&job.label, kind, setup_cpu_s, plan.cost[i]),
                        r.is_err(),
                    );
                    if let Ok(mut v) = results.lock() {
                        v[i] = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("run did not complete".into())))
        .collect()
}
