//! `World`: one device, one workload, one event queue, one seed.
//!
//! The loop is a discrete-event simulation over two kinds of events: a client waking up
//! (it asks its driver for the next step) and a request completing (its ack). The device
//! applies each command's state changes when it is issued and returns the instant it
//! completes; the world schedules the completion then. Equal-time events run in the order
//! they were scheduled, so a run is a pure function of (Config, Seed).

use crate::config::{Config, TraceFormat, WorkloadKind};
use crate::hostlog::HostEvent;
use crate::metrics::{EraseStats, RecoveryMetrics, RunMetrics, DRAM_SAMPLE_EVERY, WALL_CLOCK_KEYS};
use media::{Nand, NandCounters};
use serde::Serialize;
use sim::{EventQueue, Histogram, Lpn, Rng, SimTime, TxId};
use ssd::{Device, FtlStats, ReadOutcome, SsdError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use workload::txn::{Timed, TxCmd, TxStream};
use workload::{Driver, Op, Step};

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    #[error("{0}")]
    Config(String),
    #[error("workload: {0}")]
    Workload(String),
    /// The device refused a command (misuse, an unsupported request, out of space).
    #[error("at {at}, {request}: {error}")]
    Device {
        at: SimTime,
        request: String,
        error: SsdError,
    },
    #[error("{0}")]
    Io(String),
}

impl From<crate::config::ConfigError> for WorldError {
    fn from(e: crate::config::ConfigError) -> Self {
        WorldError::Config(e.to_string())
    }
}

/// How to run, beyond the configuration.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Keep the host log and the NAND operation log (for the crash checker).
    pub record: bool,
    /// Write the device image through to this file (needs `nand.data_mode = "full"`).
    pub image: Option<PathBuf>,
    /// Append every acked change to this file as it is acked: "lpn tag" for a plain write
    /// and for each page of a committed transaction, "lpn -" for a trim. Each record is one
    /// unbuffered `write` made before the next command is issued, so a killed process
    /// loses no record of an ack it reported (`recover --verify-acks` reads it).
    pub ack_log: Option<PathBuf>,
    /// Write every command the run issues, as a `txn` trace, to this file.
    pub record_trace: Option<PathBuf>,
}

/// Builds the device a configuration describes, in memory or file-backed.
pub fn build_device(cfg: &Config, image: Option<&Path>) -> Result<Device, WorldError> {
    cfg.validate()?;
    let dcfg = cfg.device();
    let cfg_err = |e: SsdError| WorldError::Config(format!("config: {e}"));
    let params = dcfg.image_params().map_err(cfg_err)?;
    let nand = match image {
        None => Nand::new(params, cfg.nand.timing.clone()).map_err(|e| cfg_err(e.into()))?,
        Some(path) => {
            let label = serde_json::to_string(cfg).map_err(|e| WorldError::Io(e.to_string()))?;
            Nand::create_file(path, params, cfg.nand.timing.clone(), &label)
                .map_err(|e| WorldError::Io(format!("{}: {e}", path.display())))?
        }
    };
    Device::create(&dcfg, nand).map_err(cfg_err)
}

/// Reads the configuration stored in a file image's header.
/// A PCM strategy's tier image (`media::tier_file`) keeps it in its header too.
pub fn config_of_image(path: &Path) -> Result<Config, WorldError> {
    let label = if media::tier_file::is_tier_image(path) {
        media::tier_file::peek_label(path)
            .map_err(|e| WorldError::Io(format!("{}: {e}", path.display())))?
    } else {
        Nand::peek_file(path)
            .map_err(|e| WorldError::Io(format!("{}: {e}", path.display())))?
            .1
    };
    serde_json::from_str(&label).map_err(|e| {
        WorldError::Io(format!(
            "{}: the image's stored configuration is unreadable: {e}",
            path.display()
        ))
    })
}

/// Builds the workload driver a configuration describes.
pub fn build_driver(
    cfg: &Config,
    logical_pages: u32,
    rng: &Rng,
) -> Result<Box<dyn Driver>, WorldError> {
    let w = &cfg.workload;
    let werr = |e: workload::WorkloadError| WorldError::Workload(e.what);
    match w.kind {
        WorkloadKind::Synthetic => Ok(Box::new(
            workload::synthetic::Synthetic::new(
                w.synthetic.clone(),
                logical_pages,
                rng.fork("workload"),
            )
            .map_err(werr)?,
        )),
        WorkloadKind::Txn => {
            let t = &w.txn;
            let stream = workload::txn::generate(t, logical_pages, &mut rng.fork("workload"))
                .map_err(werr)?;
            let conc = if t.isolation == workload::txn::Isolation::Strict {
                1
            } else {
                t.concurrency
            };
            let desc = format!(
                "txn: {} transactions of {}-{} pages ({}), {} at once, {} isolation, {:.0}% aborts, {} addresses",
                t.transactions,
                t.size_min,
                t.size_max,
                t.size_dist.name(),
                conc,
                t.isolation.name(),
                t.abort_ratio * 100.0,
                t.address.name()
            );
            Ok(Box::new(
                TxStream::new(&stream, conc, 1.0, logical_pages, desc).map_err(werr)?,
            ))
        }
        WorkloadKind::Seqwriter => {
            let s = &w.seqwriter;
            let stream = workload::txn::generate_seq_writer(s, logical_pages).map_err(werr)?;
            let desc = format!(
                "sequential writer: {} pages, a commit every {} pages",
                s.pages, s.sync_pages
            );
            Ok(Box::new(
                TxStream::new(&stream, 1, 1.0, logical_pages, desc).map_err(werr)?,
            ))
        }
        WorkloadKind::Host => Err(WorldError::Config(
            "workload.kind = \"host\" runs through world::host_run (commitlab run --host S)".into(),
        )),
        WorkloadKind::Trace => {
            let path = &w.trace.path;
            let block = match w.trace.format {
                TraceFormat::Disksim => workload::blocktrace::BlockFormat::Disksim,
                TraceFormat::Blkreplay => workload::blocktrace::BlockFormat::Blkreplay,
                TraceFormat::Msr => workload::blocktrace::BlockFormat::Msr,
                TraceFormat::Spc => workload::blocktrace::BlockFormat::Spc,
                TraceFormat::Txn => {
                    // Transactional traces are held whole: TxStream splits them into
                    // segments and chains up front (docs/TRACES.md).
                    let input = workload::blocktrace::open(path).map_err(werr)?;
                    let (cmds, lines) =
                        workload::txtrace::parse_lines(path, input).map_err(werr)?;
                    let desc = format!("txn trace {path}: {} commands", cmds.len());
                    let s = TxStream::with_lines(
                        &cmds,
                        Some(&lines),
                        w.trace.concurrency,
                        w.trace.time_scale,
                        logical_pages,
                        desc,
                    )
                    .map_err(|e| WorldError::Workload(format!("{path}: {}", e.what)))?;
                    return Ok(Box::new(s));
                }
                TraceFormat::Pages => {
                    // A page-access trace becomes a transactional command stream
                    // (`PageTrace::to_txn_commands`), held whole as a txn trace is.
                    let t = workload::pagetrace::read(path).map_err(werr)?;
                    // The barriers of the weakest isolation level the protocol supports
                    // (LightTx §4.2): a recorded DBMS ran its transactions concurrently.
                    let info = ssd::protocol::lookup(&cfg.protocol.name)
                        .map_err(|e| WorldError::Config(e.to_string()))?;
                    let aborted = t.txns.iter().filter(|x| x.aborted).count();
                    if aborted > 0 && !info.atomic {
                        return Err(WorldError::Config(format!(
                            "protocol {} has no atomicity and cannot abort the {aborted} aborted transactions of {path}; choose another protocol",
                            info.name
                        )));
                    }
                    use ssd::protocol::Isolation as Dev;
                    use workload::txn::Isolation;
                    let isolation = match info.isolation.iter().max() {
                        Some(Dev::Serializable) => Isolation::Serializable,
                        Some(Dev::NoPageConflict) => Isolation::NoPageConflict,
                        _ => Isolation::Strict,
                    };
                    let cmds = t
                        .to_txn_commands(cfg.nand.page_bytes, logical_pages, isolation)
                        .map_err(|e| WorldError::Workload(format!("{path}: {}", e.what)))?;
                    let desc = format!(
                        "page-access trace {path}: {} transactions, {} commands, barriers for {} isolation",
                        t.txns.len(),
                        cmds.len(),
                        match isolation {
                            Isolation::Serializable => "serializable",
                            Isolation::NoPageConflict => "no-page-conflict",
                            Isolation::Strict => "strict",
                        }
                    );
                    let s = TxStream::new(
                        &cmds,
                        w.trace.concurrency,
                        w.trace.time_scale,
                        logical_pages,
                        desc,
                    )
                    .map_err(|e| WorldError::Workload(format!("{path}: {}", e.what)))?;
                    return Ok(Box::new(s));
                }
            };
            // Block traces are streamed, read once and validated as they are replayed
            // (workload::disksim), so memory does not grow with the trace.
            Ok(Box::new(
                workload::blocktrace::replay(
                    path,
                    block,
                    cfg.nand.page_bytes,
                    logical_pages,
                    w.trace.time_scale,
                    w.trace.fold,
                )
                .map_err(werr)?,
            ))
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    Wake(u32),
    Complete {
        client: u32,
        blocking: bool,
        issued: SimTime,
        /// The arrival of the request this completes, when it has one and is a plain request.
        arrival: Option<SimTime>,
        kind: u8,
        tx: TxId,
    },
}

const K_READ: u8 = 0;
const K_WRITE: u8 = 1;
const K_OTHER: u8 = 2;
const K_COMMIT: u8 = 3;
const K_ABORT: u8 = 4;
const NO_TX: TxId = TxId(u64::MAX);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClientState {
    Running,
    AtBarrier,
    Done,
}

/// How far a run is, for a progress display (`commitlab run`'s bar). Reported every
/// `PROGRESS_EVERY` requests; the simulation never reads it back, so a run with and without
/// a progress callback is the same run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Prefill and ageing writes issued of their total.
    Prefill { done: u64, total: u64 },
    /// Requests issued in the measured part, of the workload's total when it knows it.
    Measure { done: u64, total: Option<u64> },
}

const PROGRESS_EVERY: u64 = 1024;

/// What a run leaves behind.
pub struct RunOutput {
    pub metrics: RunMetrics,
    pub device: Device,
    /// The host log, when recording.
    pub host_log: Vec<HostEvent>,
    /// The medium as it was when the operation log started (when recording).
    pub base_image: Option<media::NandImage>,
}

pub struct World {
    pub cfg: Config,
    pub device: Device,
    driver: Box<dyn Driver>,
    queue: EventQueue<Ev>,
    clients: Vec<ClientState>,
    outstanding: u64,
    barrier_waiters: Vec<u32>,
    next_tag: u64,
    requests: u64,
    lat_all: Histogram,
    lat_read: Histogram,
    lat_write: Histogram,
    lat_tx: Histogram,
    lat_commit: Histogram,
    lat_queue: Histogram,
    lat_response: Histogram,
    tx_begin: BTreeMap<TxId, SimTime>,
    /// Arrival of each open transaction that has one (for its response time).
    tx_arrival: BTreeMap<TxId, SimTime>,
    /// Largest sampled DRAM per structure, and of the protocol's tables in total.
    dram_peak: BTreeMap<&'static str, u64>,
    protocol_dram_peak: u64,
    /// Whether the measured part has started (the prefill and ageing are over).
    measuring: bool,
    committed: u64,
    aborted: u64,
    trace_out: Option<std::io::BufWriter<std::fs::File>>,
    record: bool,
    host_log: Vec<HostEvent>,
    tx_inst: BTreeMap<TxId, u64>,
    next_inst: u64,
    ack_log: Option<std::fs::File>,
    /// With an ack log: the pages each active transaction wrote, logged at its commit.
    ack_tx_pages: BTreeMap<TxId, Vec<(Lpn, u64)>>,
    now: SimTime,
    base_image: Option<media::NandImage>,
    base_nand: NandCounters,
    base_ftl: FtlStats,
    start: SimTime,
    measured_from_request: u64,
    /// Wall-clock and CPU stamps when measuring started.
    pub wall_start: std::time::Instant,
    pub cpu_start_ns: u64,
    progress: Option<Box<dyn FnMut(Progress)>>,
    prefill_total: u64,
}

impl World {
    pub fn new(cfg: &Config, opts: &RunOptions) -> Result<World, WorldError> {
        let device = build_device(cfg, opts.image.as_deref())?;
        World::with_device(cfg, opts, device)
    }

    /// A world that continues from a prefilled device instead of building and prefilling
    /// its own (see `Prefilled`): `run_measured` then runs exactly what `run` would have
    /// run after its prefill. `prefilled` must come from a configuration with the same
    /// `prefill_key`; the options must not record anything (the prefill's writes are not
    /// in this world's logs).
    pub fn from_prefilled(
        cfg: &Config,
        opts: &RunOptions,
        prefilled: Prefilled,
    ) -> Result<World, WorldError> {
        cfg.validate()?;
        if opts.record
            || opts.image.is_some()
            || opts.ack_log.is_some()
            || opts.record_trace.is_some()
        {
            return Err(WorldError::Config(
                "a run from a shared prefilled device cannot record, write an image, an ack log or a trace".into(),
            ));
        }
        if prefill_key(cfg) != prefilled.key {
            return Err(WorldError::Config(
                "the prefilled device was made for a different device, seed or prefill".into(),
            ));
        }
        let mut w = World::with_device(cfg, opts, prefilled.device)?;
        w.next_tag = prefilled.next_tag;
        w.prefill_total = prefilled.writes;
        w.begin_measuring(prefilled.now);
        Ok(w)
    }

    fn with_device(
        cfg: &Config,
        opts: &RunOptions,
        mut device: Device,
    ) -> Result<World, WorldError> {
        let mut base_image = None;
        if opts.record {
            base_image = Some(device.core.nand.image().clone());
            device.core.nand.enable_log();
        }
        let rng = Rng::new(cfg.seed);
        let driver = build_driver(cfg, device.logical_pages(), &rng)?;
        let ack_log = match &opts.ack_log {
            Some(p) => Some(
                std::fs::File::create(p)
                    .map_err(|e| WorldError::Io(format!("{}: {e}", p.display())))?,
            ),
            None => None,
        };
        let clients = vec![ClientState::Running; driver.clients() as usize];
        let trace_out = match &opts.record_trace {
            Some(p) => {
                let f = std::fs::File::create(p)
                    .map_err(|e| WorldError::Io(format!("{}: {e}", p.display())))?;
                let mut w = std::io::BufWriter::new(f);
                use std::io::Write;
                writeln!(w, "{}", workload::txtrace::HEADER)
                    .map_err(|e| WorldError::Io(e.to_string()))?;
                Some(w)
            }
            None => None,
        };
        Ok(World {
            cfg: cfg.clone(),
            device,
            driver,
            queue: EventQueue::new(),
            clients,
            outstanding: 0,
            barrier_waiters: Vec::new(),
            next_tag: 1,
            requests: 0,
            lat_all: Histogram::new(),
            lat_read: Histogram::new(),
            lat_write: Histogram::new(),
            lat_tx: Histogram::new(),
            lat_commit: Histogram::new(),
            lat_queue: Histogram::new(),
            lat_response: Histogram::new(),
            tx_begin: BTreeMap::new(),
            tx_arrival: BTreeMap::new(),
            dram_peak: BTreeMap::new(),
            protocol_dram_peak: 0,
            measuring: false,
            committed: 0,
            aborted: 0,
            trace_out,
            record: opts.record,
            host_log: Vec::new(),
            tx_inst: BTreeMap::new(),
            next_inst: 1,
            ack_log,
            ack_tx_pages: BTreeMap::new(),
            now: SimTime::ZERO,
            base_image,
            base_nand: NandCounters::default(),
            base_ftl: FtlStats::default(),
            start: SimTime::ZERO,
            measured_from_request: 0,
            wall_start: std::time::Instant::now(),
            cpu_start_ns: crate::bench::cpu_time_ns(),
            progress: None,
            prefill_total: 0,
        })
    }

    /// Reports progress to `f` while running (see `Progress`).
    pub fn set_progress(&mut self, f: Box<dyn FnMut(Progress)>) {
        self.progress = Some(f);
    }

    fn report_progress(&mut self) {
        let p = if self.measuring {
            Progress::Measure {
                done: self.requests - self.measured_from_request,
                total: self.driver.total_requests(),
            }
        } else {
            Progress::Prefill {
                done: self.requests,
                total: self.prefill_total,
            }
        };
        if let Some(f) = self.progress.as_mut() {
            f(p);
        }
    }

    fn dev_err(&self, at: SimTime, op: &Op, error: SsdError) -> WorldError {
        WorldError::Device {
            at,
            request: format!("request {} ({op})", self.requests),
            error,
        }
    }

    /// Writes the first `prefill` fraction of the logical space sequentially, ages the
    /// device if configured, then starts measuring from the instant the device is idle
    /// again. Both phases issue their writes as a closed loop with two writes in flight per
    /// parallel unit: enough to keep every unit busy, and simulated time advances, so
    /// protocol state keyed by time (SCC's and BPCC's pending commit acks) is forgotten as
    /// it passes instead of piling up for millions of pages issued at one instant.
    pub fn prefill(&mut self) -> Result<(), WorldError> {
        let pages = (f64::from(self.device.logical_pages()) * self.cfg.workload.prefill) as u32;
        let mut loop_ = ClosedLoop::new(2 * self.device.core.geo.pus() as usize);
        self.prefill_total = u64::from(pages);
        for lpn in 0..pages {
            self.closed_loop_write(&mut loop_, lpn)?;
        }
        let writes = (f64::from(pages) * self.cfg.workload.age) as u64;
        self.prefill_total = u64::from(pages) + if pages > 0 { writes } else { 0 };
        if writes > 0 && pages > 0 {
            // Ageing (`workload.age`): random single-page overwrites of the prefilled pages.
            let mut rng = Rng::new(self.cfg.seed).fork("age");
            for _ in 0..writes {
                let lpn = rng.below(u64::from(pages)) as u32;
                self.closed_loop_write(&mut loop_, lpn)?;
            }
        }
        let now = self.device.barrier(SimTime::ZERO);
        self.begin_measuring(now);
        Ok(())
    }

    /// What follows the prefill, from the instant `now` the device is idle again.
    fn begin_measuring(&mut self, now: SimTime) {
        self.now = now;
        self.requests = 0;
        self.start_measuring(self.now);
        // Arrival times count from here, not from t = 0: otherwise every request
        // of a timed workload is already late and an open loop degenerates into a burst.
        self.driver.set_origin(self.now);
    }

    /// A copy of the device as the prefill left it, for other runs to start from
    /// (`from_prefilled`). Call right after `prefill` (before anything is measured); `None`
    /// for a file-backed device.
    pub fn prefilled(&self) -> Option<Prefilled> {
        Some(Prefilled {
            key: prefill_key(&self.cfg),
            device: self.device.try_clone()?,
            now: self.now,
            next_tag: self.next_tag,
            writes: self.prefill_total,
        })
    }

    fn closed_loop_write(&mut self, l: &mut ClosedLoop, lpn: u32) -> Result<(), WorldError> {
        if l.in_flight.len() >= l.depth {
            if let Some(t) = l.in_flight.pop_front() {
                l.now = l.now.max(t);
            }
        }
        let op = Op::Write {
            lpn: Lpn(lpn),
            pages: 1,
        };
        let (ack, _) = self.submit(&op, l.now)?;
        l.in_flight.push_back(ack);
        Ok(())
    }

    /// Resets the baselines: metrics cover what happens from `now` on.
    fn start_measuring(&mut self, now: SimTime) {
        self.start = now;
        self.base_nand = self.device.core.nand.counters();
        self.base_ftl = self.device.core.stats;
        self.measured_from_request = self.requests;
        self.lat_all = Histogram::new();
        self.lat_read = Histogram::new();
        self.lat_write = Histogram::new();
        self.lat_tx = Histogram::new();
        self.lat_commit = Histogram::new();
        self.lat_queue = Histogram::new();
        self.lat_response = Histogram::new();
        self.dram_peak.clear();
        self.protocol_dram_peak = 0;
        self.measuring = true;
        self.sample_dram();
        self.committed = 0;
        self.aborted = 0;
        self.wall_start = std::time::Instant::now();
        self.cpu_start_ns = crate::bench::cpu_time_ns();
    }

    fn record_cmd(&mut self, now: SimTime, cmd: TxCmd) -> Result<(), WorldError> {
        if let Some(w) = self.trace_out.as_mut() {
            workload::txtrace::write_line(
                w,
                &Timed {
                    time_ns: now.as_ns(),
                    cmd,
                },
            )
            .map_err(|e| WorldError::Io(e.to_string()))?;
        }
        Ok(())
    }

    /// Issues one request; returns (ack time, kind).
    fn submit(&mut self, op: &Op, now: SimTime) -> Result<(SimTime, u8), WorldError> {
        if self.trace_out.is_some() {
            let cmd = match *op {
                Op::Read { lpn, pages } => TxCmd::Read { lpn, pages },
                // A recording has no sub-page writes: it records the whole pages.
                Op::Write { lpn, pages } | Op::PartialWrite { lpn, pages, .. } => TxCmd::Write {
                    tx: None,
                    lpn,
                    pages,
                },
                Op::Trim { lpn, pages } => TxCmd::Trim { lpn, pages },
                Op::Begin { tx } => TxCmd::Begin { tx },
                Op::TxWrite { tx, lpn, pages } => TxCmd::Write {
                    tx: Some(tx),
                    lpn,
                    pages,
                },
                Op::Commit { tx, write } => TxCmd::Commit { tx, write },
                Op::Abort { tx } => TxCmd::Abort { tx },
            };
            self.record_cmd(now, cmd)?;
        }
        let d = &mut self.device;
        let mut ack_lines = String::new();
        let r: Result<(SimTime, u8), SsdError> = (|| {
            Ok(match *op {
                Op::Read { lpn, pages } => {
                    let mut end = now;
                    for p in 0..pages {
                        let (_, t) = d.read(Lpn(lpn.0 + p), now)?;
                        end = end.max(t);
                    }
                    (end, K_READ)
                }
                Op::Write { lpn, pages } | Op::PartialWrite { lpn, pages, .. } => {
                    // Sub-page or unaligned block-trace writes: read-modify-write of the
                    // partly covered first and last pages, in the device.
                    let (head, tail) = match *op {
                        Op::PartialWrite {
                            head_partial,
                            tail_partial,
                            ..
                        } => (head_partial, tail_partial),
                        _ => (false, false),
                    };
                    let mut end = now;
                    for p in 0..pages {
                        let tag = self.next_tag;
                        self.next_tag += 1;
                        let l = Lpn(lpn.0 + p);
                        let partial = (p == 0 && head) || (p + 1 == pages && tail);
                        let t = if partial {
                            d.write_partial(l, tag, now)?
                        } else {
                            d.write_plain(l, tag, now)?
                        };
                        end = end.max(t);
                        if self.record {
                            self.host_log.push(HostEvent::Plain {
                                lpn: l,
                                tag,
                                issue: now,
                                ack: t,
                            });
                        }
                        if self.ack_log.is_some() {
                            ack_lines.push_str(&format!("{} {tag}\n", l.0));
                        }
                    }
                    (end, K_WRITE)
                }
                Op::Trim { lpn, pages } => {
                    let mut end = now;
                    for p in 0..pages {
                        let l = Lpn(lpn.0 + p);
                        let t = d.trim(l, now)?;
                        end = end.max(t);
                        if self.ack_log.is_some() {
                            ack_lines.push_str(&format!("{} -\n", l.0));
                        }
                        if self.record {
                            self.host_log.push(HostEvent::Trim {
                                lpn: l,
                                issue: now,
                                ack: t,
                            });
                        }
                    }
                    (end, K_OTHER)
                }
                Op::Begin { tx } => {
                    let t = d.begin(tx, now)?;
                    self.tx_inst.insert(tx, self.next_inst);
                    self.next_inst += 1;
                    self.tx_begin.insert(tx, now);
                    (t, K_OTHER)
                }
                Op::TxWrite { tx, lpn, pages } => {
                    let mut end = now;
                    for p in 0..pages {
                        let tag = self.next_tag;
                        self.next_tag += 1;
                        let l = Lpn(lpn.0 + p);
                        let t = d.write(tx, l, tag, now)?;
                        end = end.max(t);
                        if self.ack_log.is_some() {
                            self.ack_tx_pages.entry(tx).or_default().push((l, tag));
                        }
                        if self.record {
                            let inst = self.tx_inst.get(&tx).copied().unwrap_or(0);
                            self.host_log.push(HostEvent::TxWrite {
                                inst,
                                lpn: l,
                                tag,
                                issue: now,
                            });
                        }
                    }
                    (end, K_WRITE)
                }
                Op::Commit { tx, write } => {
                    let t = match write {
                        None => d.commit(tx, now)?,
                        Some(l) => {
                            let tag = self.next_tag;
                            self.next_tag += 1;
                            if self.ack_log.is_some() {
                                self.ack_tx_pages.entry(tx).or_default().push((l, tag));
                            }
                            if self.record {
                                let inst = self.tx_inst.get(&tx).copied().unwrap_or(0);
                                self.host_log.push(HostEvent::TxWrite {
                                    inst,
                                    lpn: l,
                                    tag,
                                    issue: now,
                                });
                            }
                            d.commit_write(tx, l, tag, now)?
                        }
                    };
                    if let Some(pages) = self.ack_tx_pages.remove(&tx) {
                        for (l, tag) in pages {
                            ack_lines.push_str(&format!("{} {tag}\n", l.0));
                        }
                    }
                    if self.record {
                        let inst = self.tx_inst.get(&tx).copied().unwrap_or(0);
                        self.host_log.push(HostEvent::Commit {
                            inst,
                            issue: now,
                            ack: t,
                        });
                    }
                    (t, K_COMMIT)
                }
                Op::Abort { tx } => {
                    let t = d.abort(tx, now)?;
                    self.ack_tx_pages.remove(&tx);
                    if self.record {
                        let inst = self.tx_inst.get(&tx).copied().unwrap_or(0);
                        self.host_log.push(HostEvent::Abort {
                            inst,
                            issue: now,
                            ack: t,
                        });
                    }
                    (t, K_ABORT)
                }
            })
        })();
        if let Some(f) = self.ack_log.as_mut() {
            if !ack_lines.is_empty() {
                use std::io::Write;
                f.write_all(ack_lines.as_bytes())
                    .map_err(|e| WorldError::Io(format!("ack log: {e}")))?;
            }
        }
        self.requests += 1;
        if self.progress.is_some() && self.requests.is_multiple_of(PROGRESS_EVERY) {
            self.report_progress();
        }
        // Only while measuring: peaks reset when measurement starts, and some protocols'
        // sizes take time proportional to their tables to compute.
        if self.measuring && self.requests.is_multiple_of(DRAM_SAMPLE_EVERY) {
            self.sample_dram();
        }
        let every = self.cfg.run.check_invariants_every;
        if every > 0 && self.requests.is_multiple_of(every) {
            self.device.check_invariants().map_err(|e| {
                WorldError::Config(format!(
                    "invariant broken after request {}: {e}",
                    self.requests
                ))
            })?;
        }
        r.map_err(|e| self.dev_err(now, op, e))
    }

    /// A barrier releases when nothing is outstanding and every client has reached it (or is
    /// done): a rendezvous, so a client sleeping before its next command still holds it.
    fn maybe_release_barrier(&mut self, now: SimTime) -> Result<(), WorldError> {
        if self.barrier_waiters.is_empty()
            || self.outstanding > 0
            || self.clients.contains(&ClientState::Running)
        {
            return Ok(());
        }
        self.record_cmd(now, TxCmd::Barrier)?;
        for c in std::mem::take(&mut self.barrier_waiters) {
            self.clients[c as usize] = ClientState::Running;
            self.queue.push(now, Ev::Wake(c));
        }
        Ok(())
    }

    fn on_wake(&mut self, c: u32, now: SimTime) -> Result<(), WorldError> {
        if self.clients[c as usize] != ClientState::Running {
            return Ok(());
        }
        if self.cfg.workload.warmup_requests > 0
            && self.requests == self.cfg.workload.warmup_requests
            && self.measured_from_request == 0
        {
            self.start_measuring(now);
        }
        match self.driver.step(c, now) {
            Step::Issue(op) => {
                let tx = op_tx(&op);
                let arrival = self.note_arrival(c, &op, now);
                let (ack, kind) = self.submit(&op, now)?;
                if let Some(l) = self.driver.hint_next() {
                    if l.0 < self.device.logical_pages() {
                        self.device.core.prefetch_mapping(l);
                    }
                }
                self.outstanding += 1;
                self.queue.push(
                    ack,
                    Ev::Complete {
                        client: c,
                        blocking: true,
                        issued: now,
                        arrival,
                        kind,
                        tx,
                    },
                );
            }
            Step::IssueThen(op, next) => {
                let tx = op_tx(&op);
                let arrival = self.note_arrival(c, &op, now);
                let (ack, kind) = self.submit(&op, now)?;
                self.outstanding += 1;
                self.queue.push(
                    ack,
                    Ev::Complete {
                        client: c,
                        blocking: false,
                        issued: now,
                        arrival,
                        kind,
                        tx,
                    },
                );
                self.queue.push(next.max(now), Ev::Wake(c));
            }
            Step::Sleep(t) => self.queue.push(t.max(now), Ev::Wake(c)),
            Step::Barrier => {
                self.clients[c as usize] = ClientState::AtBarrier;
                self.barrier_waiters.push(c);
                self.maybe_release_barrier(now)?;
            }
            Step::Done => {
                self.clients[c as usize] = ClientState::Done;
                self.maybe_release_barrier(now)?;
            }
        }
        Ok(())
    }

    /// Folds the device's current DRAM use into the peaks.
    fn sample_dram(&mut self) {
        for (k, v) in self.device.dram_bytes() {
            let e = self.dram_peak.entry(k).or_insert(0);
            *e = (*e).max(v);
        }
        self.protocol_dram_peak = self
            .protocol_dram_peak
            .max(self.device.protocol_dram_bytes());
    }

    /// Records the queueing delay of a unit of work that starts with `op` (a plain request or
    /// a BEGIN) and has an arrival time; returns the arrival to carry to a plain request's
    /// completion (a transaction's is kept until its COMMIT or ABORT completes).
    fn note_arrival(&mut self, c: u32, op: &Op, now: SimTime) -> Option<SimTime> {
        let a = self.driver.arrival(c)?;
        self.lat_queue.record(now.since(a));
        match *op {
            Op::Begin { tx } => {
                self.tx_arrival.insert(tx, a);
                None
            }
            _ => Some(a),
        }
    }

    /// Prefills (and ages) the device, then runs the workload to completion.
    pub fn run(&mut self) -> Result<(), WorldError> {
        self.prefill()?;
        self.run_measured()
    }

    /// Runs the workload to completion on a device already prefilled (by `prefill`, or
    /// given to `from_prefilled`).
    pub fn run_measured(&mut self) -> Result<(), WorldError> {
        for c in 0..self.clients.len() as u32 {
            self.queue.push(self.now, Ev::Wake(c));
        }
        while let Some((t, ev)) = self.queue.pop() {
            self.now = t;
            match ev {
                Ev::Wake(c) => self.on_wake(c, t)?,
                Ev::Complete {
                    client,
                    blocking,
                    issued,
                    arrival,
                    kind,
                    tx,
                } => {
                    self.outstanding -= 1;
                    let lat = t.since(issued);
                    self.lat_all.record(lat);
                    if let Some(a) = arrival {
                        self.lat_response.record(t.since(a));
                    }
                    if matches!(kind, K_COMMIT | K_ABORT) {
                        if let Some(a) = self.tx_arrival.remove(&tx) {
                            self.lat_response.record(t.since(a));
                        }
                    }
                    match kind {
                        K_READ => self.lat_read.record(lat),
                        K_WRITE => self.lat_write.record(lat),
                        K_COMMIT => {
                            self.lat_commit.record(lat);
                            self.committed += 1;
                            if let Some(b) = self.tx_begin.remove(&tx) {
                                self.lat_tx.record(t.since(b));
                            }
                        }
                        K_ABORT => {
                            self.aborted += 1;
                            self.tx_begin.remove(&tx);
                        }
                        _ => {}
                    }
                    if blocking {
                        self.queue.push(t, Ev::Wake(client));
                    }
                    self.maybe_release_barrier(t)?;
                }
            }
        }
        if let Some(e) = self.driver.take_error() {
            return Err(WorldError::Workload(e.what));
        }
        if let Some(w) = self.trace_out.as_mut() {
            use std::io::Write;
            w.flush().map_err(|e| WorldError::Io(e.to_string()))?;
        }
        if let Some(c) = self
            .clients
            .iter()
            .position(|c| *c == ClientState::AtBarrier)
        {
            return Err(WorldError::Workload(format!(
                "client {c} is stuck at a barrier when the run ends"
            )));
        }
        Ok(())
    }

    /// The metrics of the measured part of the run (after the prefill).
    pub fn metrics(&mut self, wall_s: f64) -> RunMetrics {
        self.sample_dram();
        let d = &self.device;
        let n = d.core.nand.counters();
        let b = self.base_nand;
        let s = d.core.stats;
        let f = &self.base_ftl;
        let host_writes = s.host_writes - f.host_writes;
        let programs = n.programs - b.programs;
        let sim_ns = self.now.since(self.start);
        let ops = (n.reads + n.oob_reads + n.programs + n.partial_programs + n.erases)
            - (b.reads + b.oob_reads + b.programs + b.partial_programs + b.erases);
        let meta: Vec<u32> = d
            .core
            .nand
            .image()
            .erase_counts()
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                !matches!(
                    d.core.block(media::BlockId(*i as u32)).state,
                    ssd::core::BlockState::Meta
                )
            })
            .map(|(_, e)| *e)
            .collect();
        let dram: BTreeMap<String, u64> = d
            .dram_bytes()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        RunMetrics {
            protocol: self.cfg.protocol.name.clone(),
            seed: self.cfg.seed,
            workload: self.driver.describe(),
            logical_pages: d.logical_pages(),
            host_requests: self.requests - self.measured_from_request,
            host_reads: s.host_reads - f.host_reads,
            host_writes,
            host_trims: s.host_trims - f.host_trims,
            nand_reads: (n.reads + n.oob_reads) - (b.reads + b.oob_reads),
            nand_oob_reads: n.oob_reads - b.oob_reads,
            nand_programs: programs,
            nand_partial_programs: n.partial_programs - b.partial_programs,
            nand_erases: n.erases - b.erases,
            gc_page_migrations: s.gc_page_migrations - f.gc_page_migrations,
            gc_erases: s.gc_erases - f.gc_erases,
            gc_time_ns: s.gc_busy_ns - f.gc_busy_ns,
            write_amplification: if host_writes == 0 {
                0.0
            } else {
                programs as f64 / host_writes as f64
            },
            sim_time_ns: sim_ns,
            requests_per_s: if sim_ns == 0 {
                0.0
            } else {
                self.lat_all.count() as f64 / (sim_ns as f64 / 1e9)
            },
            latency_ns: self.lat_all.percentiles(),
            read_latency_ns: self.lat_read.percentiles(),
            write_latency_ns: self.lat_write.percentiles(),
            queue_delay_ns: self.lat_queue.percentiles(),
            response_time_ns: self.lat_response.percentiles(),
            txs_committed: self.committed,
            txs_aborted: self.aborted,
            tx_throughput_per_s: if sim_ns == 0 {
                0.0
            } else {
                self.committed as f64 / (sim_ns as f64 / 1e9)
            },
            tx_completed_per_s: if sim_ns == 0 {
                0.0
            } else {
                (self.committed + self.aborted) as f64 / (sim_ns as f64 / 1e9)
            },
            tx_time_ns: self.lat_tx.percentiles(),
            commit_latency_ns: self.lat_commit.percentiles(),
            commit_record_writes: s.commit_record_writes - f.commit_record_writes,
            commit_record_share: share(s.commit_record_writes - f.commit_record_writes, programs),
            map_persist_writes: s.map_persist_writes - f.map_persist_writes,
            map_persist_share: share(s.map_persist_writes - f.map_persist_writes, programs),
            map_persist_per_host_write: share(
                s.map_persist_writes - f.map_persist_writes,
                host_writes,
            ),
            space_overhead: {
                let counters = d.protocol_counters();
                let live = counters
                    .iter()
                    .find(|(k, _)| *k == "live_record_pages")
                    .map_or(0, |x| x.1);
                share(live, d.core.mapped_pages())
            },
            erase_count: EraseStats::of(&meta),
            ftl: diff_stats(&s, f),
            protocol_counters: d
                .protocol_counters()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            dram_bytes_total: dram.values().sum(),
            dram_bytes: dram,
            dram_bytes_peak: self
                .dram_peak
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            protocol_dram_bytes: d.protocol_dram_bytes(),
            protocol_dram_bytes_peak: self.protocol_dram_peak,
            recovery: None,
            recovery_wall_time_s: 0.0,
            wall_time_s: wall_s,
            sim_ops_per_wall_s: if wall_s > 0.0 {
                ops as f64 / wall_s
            } else {
                0.0
            },
        }
    }

    pub fn host_log(&self) -> &[HostEvent] {
        &self.host_log
    }

    pub fn into_output(self, metrics: RunMetrics) -> RunOutput {
        RunOutput {
            metrics,
            device: self.device,
            host_log: self.host_log,
            base_image: self.base_image,
        }
    }
}

/// The prefill's and ageing's closed loop: at most `depth` writes in flight; the next write
/// is issued when the oldest completes.
struct ClosedLoop {
    depth: usize,
    in_flight: std::collections::VecDeque<SimTime>,
    now: SimTime,
}

impl ClosedLoop {
    fn new(depth: usize) -> ClosedLoop {
        ClosedLoop {
            depth: depth.max(1),
            in_flight: std::collections::VecDeque::new(),
            now: SimTime::ZERO,
        }
    }
}

fn op_tx(op: &Op) -> TxId {
    match *op {
        Op::Begin { tx } | Op::TxWrite { tx, .. } | Op::Commit { tx, .. } | Op::Abort { tx } => tx,
        _ => NO_TX,
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

fn diff_stats(a: &FtlStats, b: &FtlStats) -> FtlStats {
    // Every field is a counter; subtract field by field through the serialized form so a new
    // counter can never be forgotten here.
    let av = serde_json::to_value(a).unwrap_or_default();
    let bv = serde_json::to_value(b).unwrap_or_default();
    let mut out = serde_json::Map::new();
    if let (Some(am), Some(bm)) = (av.as_object(), bv.as_object()) {
        for (k, v) in am {
            let x = v
                .as_u64()
                .unwrap_or(0)
                .saturating_sub(bm.get(k).and_then(|y| y.as_u64()).unwrap_or(0));
            out.insert(k.clone(), x.into());
        }
    }
    serde_json::from_value(serde_json::Value::Object(out)).unwrap_or(*a)
}

/// A device as its prefill and ageing left it (`World::prefill`), with the little world
/// state the measured part continues from: the simulated instant the device was idle again,
/// the next write tag and the prefill's size (progress only). Cloning it copies the whole
/// device (hundreds of MiB at 32 GiB): `reproduce` prefills once per distinct
/// `prefill_key` and gives each point its own copy (`run_prefilled`).
pub struct Prefilled {
    key: String,
    device: Device,
    now: SimTime,
    next_tag: u64,
    writes: u64,
}

impl Prefilled {
    /// An independent copy (`None` cannot happen for a device `prefill` made: it is in
    /// memory).
    pub fn try_clone(&self) -> Option<Prefilled> {
        Some(Prefilled {
            key: self.key.clone(),
            device: self.device.try_clone()?,
            now: self.now,
            next_tag: self.next_tag,
            writes: self.writes,
        })
    }

    /// The `prefill_key` of the configuration it was made from.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// Everything the state after the prefill depends on: the device (NAND, FTL, protocol
/// configuration), the seed (ageing draws its addresses from it), the prefill and ageing
/// fractions, and the invariant checking interval (a broken invariant fails the prefill).
/// Not the workload that runs afterwards, nor recovery measurement: two configurations with
/// the same key reach the same device state, so they may share one prefill. As JSON text,
/// so it is a total order for maps and equal exactly when the configurations are.
pub fn prefill_key(cfg: &Config) -> String {
    #[derive(Serialize)]
    struct Key {
        device: ssd::DeviceConfig,
        seed: u64,
        prefill: f64,
        age: f64,
        check_invariants_every: u64,
    }
    serde_json::to_string(&Key {
        device: cfg.device(),
        seed: cfg.seed,
        prefill: cfg.workload.prefill,
        age: cfg.workload.age,
        check_invariants_every: cfg.run.check_invariants_every,
    })
    .unwrap_or_default()
}

/// Runs a configuration to completion and reports its metrics (and, if configured, the cost
/// of recovering from a power cut at the end).
pub fn run(cfg: &Config, opts: &RunOptions) -> Result<RunOutput, WorldError> {
    run_with_progress(cfg, opts, None)
}

/// `run`, reporting progress to `progress` (a display only: the results are the same).
pub fn run_with_progress(
    cfg: &Config,
    opts: &RunOptions,
    progress: Option<Box<dyn FnMut(Progress)>>,
) -> Result<RunOutput, WorldError> {
    let wall = std::time::Instant::now();
    let mut w = World::new(cfg, opts)?;
    if let Some(f) = progress {
        w.set_progress(f);
    }
    w.run()?;
    finish(w, cfg, opts, wall)
}

/// Runs `cfg` from a copy of a prefilled device (`prefill`) instead of prefilling its own:
/// the same output as `run(cfg, &RunOptions::default())`, byte for byte, for any
/// configuration with the same `prefill_key` as the one `prefilled` was made from.
pub fn run_prefilled(cfg: &Config, prefilled: Prefilled) -> Result<RunOutput, WorldError> {
    let wall = std::time::Instant::now();
    let opts = RunOptions::default();
    let mut w = World::from_prefilled(cfg, &opts, prefilled)?;
    w.run_measured()?;
    finish(w, cfg, &opts, wall)
}

/// Builds `cfg`'s device and prefills (and ages) it as `run` would, for runs that share it
/// (`run_prefilled`). Fails as `run` would fail during its setup or prefill.
pub fn prefill(cfg: &Config) -> Result<Prefilled, WorldError> {
    let mut w = World::new(cfg, &RunOptions::default())?;
    w.prefill()?;
    // The world's own device, moved out rather than copied: nothing runs on it afterwards.
    Ok(Prefilled {
        key: prefill_key(&w.cfg),
        now: w.now,
        next_tag: w.next_tag,
        writes: w.prefill_total,
        device: w.device,
    })
}

/// The end of a run: invariants, metrics, and the recovery measurement.
fn finish(
    mut w: World,
    cfg: &Config,
    opts: &RunOptions,
    wall: std::time::Instant,
) -> Result<RunOutput, WorldError> {
    w.report_progress();
    #[cfg(debug_assertions)]
    w.device
        .check_invariants()
        .map_err(|e| WorldError::Config(format!("invariant broken at end of run: {e}")))?;
    let mut m = w.metrics(wall.elapsed().as_secs_f64());
    if cfg.run.measure_recovery && opts.image.is_none() {
        let t = std::time::Instant::now();
        let image = w.device.core.nand.image().clone();
        let nand = Nand::from_image(image, cfg.nand.timing.clone());
        let (_, rep) =
            Device::recover_with(&cfg.device(), nand, cfg.run.recovery_reads).map_err(|e| {
                WorldError::Device {
                    at: w.now,
                    request: "recovery after the run".into(),
                    error: e,
                }
            })?;
        m.recovery = Some(RecoveryMetrics {
            pages_read: rep.pages_read,
            scanned_pages: rep.scanned_pages,
            time_ns: rep.time_ns,
            had_checkpoint: rep.had_checkpoint,
        });
        m.recovery_wall_time_s = t.elapsed().as_secs_f64();
    }
    Ok(w.into_output(m))
}

/// Reads every logical page of `device` (for tests and `recover --verify`).
pub fn read_all(device: &mut Device, at: SimTime) -> Result<Vec<ReadOutcome>, SsdError> {
    (0..device.logical_pages())
        .map(|l| device.read(Lpn(l), at).map(|(o, _)| o))
        .collect()
}

/// A metrics record as JSON with the wall-clock keys removed (for determinism checks).
pub fn deterministic_json<T: Serialize>(m: &T) -> String {
    let mut v = serde_json::to_value(m).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        for k in WALL_CLOCK_KEYS {
            o.remove(k);
        }
    }
    serde_json::to_string_pretty(&v).unwrap_or_default()
}
