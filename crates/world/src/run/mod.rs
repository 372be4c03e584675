//! `World`: one device, one workload, one event queue, one seed.
//!
//! The loop is a discrete-event simulation over two kinds of events: a client waking up
//! (it asks its driver for the next step) and a request completing (its ack). The device
//! applies each command's state changes when it is issued and returns the instant it
//! completes; the world schedules the completion then. Equal-time events run in the order
//! they were scheduled, so a run is a pure function of (Config, Seed).
//!
//! By role: `setup` builds the device, the driver and the world; `prefill` writes and ages
//! the device before measuring (and keeps a prefilled device for runs that share it);
//! `event_loop` runs the clients and their requests; `measure` keeps the baselines and
//! makes the metrics; `recovery` ends a run and times a recovery from a power cut. This
//! file holds the types they share and the entry points (`run`, `run_prefilled`).

mod event_loop;
mod measure;
mod prefill;
mod recovery;
mod setup;

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

pub use prefill::{prefill, prefill_key, Prefilled};
use recovery::finish;
pub use setup::{build_device, build_driver, config_of_image};

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
