//! Workloads: what hosts ask of the device.
//!
//! A workload is a `Driver`: a state machine with one or more clients that, asked for its
//! next `Step` at a simulated instant, issues a request, sleeps, waits for a barrier, or is
//! done. It does no I/O and knows nothing of the device; the world runs it against one.
//! Closed loops (a fixed queue depth of clients, each waiting for its previous request) and
//! open loops (arrivals at generated or traced instants, regardless of completions) are both
//! drivers.

pub mod address;
pub mod blocktrace;
pub mod btree;
pub mod db;
pub mod disksim;
pub mod pagetrace;
pub mod records;
pub mod synthetic;
pub mod tatp;
pub mod tpcb;
pub mod tpcc;
pub mod txn;
pub mod txtrace;

/// The latest arrival time a trace may give (about 146 years): simulated time saturates
/// rather than wraps, so later times would silently report zero latencies.
pub const MAX_TRACE_TIME_NS: u64 = 1 << 62;

use sim::{Lpn, SimTime, TxId};

/// One host request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Read {
        lpn: Lpn,
        pages: u32,
    },
    /// A plain write of `pages` consecutive pages (each page a one-page transaction).
    Write {
        lpn: Lpn,
        pages: u32,
    },
    /// A plain write of `pages` consecutive pages whose first and/or last page it covers
    /// only in part (a block-trace request smaller than a page or not page-aligned): the
    /// device reads the old page and merges it before programming (read-modify-write,
    /// `ssd::Device::write_partial`). Whole pages in between are written as `Write` does.
    PartialWrite {
        lpn: Lpn,
        pages: u32,
        head_partial: bool,
        tail_partial: bool,
    },
    Trim {
        lpn: Lpn,
        pages: u32,
    },
    Begin {
        tx: TxId,
    },
    TxWrite {
        tx: TxId,
        lpn: Lpn,
        pages: u32,
    },
    /// COMMIT; `write`: the transaction's last page, written with it (`TxCmd::Commit`).
    Commit {
        tx: TxId,
        write: Option<Lpn>,
    },
    Abort {
        tx: TxId,
    },
}

impl Op {
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Read { .. } => "read",
            Op::Write { .. } | Op::PartialWrite { .. } => "write",
            Op::Trim { .. } => "trim",
            Op::Begin { .. } => "begin",
            Op::TxWrite { .. } => "txwrite",
            Op::Commit { .. } => "commit",
            Op::Abort { .. } => "abort",
        }
    }
}

/// What a client does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Issue `op` now and wait for it to complete before the next step.
    Issue(Op),
    /// Issue `op` now and take the next step at `next` without waiting (open loop).
    IssueThen(Op, SimTime),
    /// Take the next step at this instant.
    Sleep(SimTime),
    /// Take the next step once every outstanding request of every client has completed.
    Barrier,
    Done,
}

/// A workload as a state machine over clients.
pub trait Driver {
    fn clients(&self) -> u32;
    fn step(&mut self, client: u32, now: SimTime) -> Step;
    /// A short description for reports.
    fn describe(&self) -> String;
    /// Measurement starts at `origin` (when the prefill has finished): the arrival times a
    /// workload gives (trace timestamps, generated open-loop schedules) count from it, so a
    /// timed workload is not already late when it starts. Called once, before the first
    /// `step`; the default ignores it (closed loops have no arrival times).
    fn set_origin(&mut self, _origin: SimTime) {}
    /// When the unit of work that the op `step` just returned to `client` begins arrived:
    /// `Some` for the first command of a plain request or of a transaction (its BEGIN) in a
    /// workload with arrival times, `None` otherwise. The world reports queueing delay
    /// (arrival to issue) and response time (arrival to the last ack) from it.
    fn arrival(&self, _client: u32) -> Option<SimTime> {
        None
    }
    /// The logical page the next request will probably touch, if known (a prefetch hint;
    /// it must not change what the driver does).
    fn hint_next(&self) -> Option<Lpn> {
        None
    }
    /// How many requests (host commands) the measured part will issue, when known in
    /// advance: the denominator of a progress bar (`commitlab run`). Never changes what
    /// the driver does.
    fn total_requests(&self) -> Option<u64> {
        None
    }
    /// An error met after the run started (a streamed trace that changed between its
    /// validation pass and its replay); the driver returned `Step::Done` when it met it.
    /// The world checks this when the run ends.
    fn take_error(&mut self) -> Option<WorkloadError> {
        None
    }
}

/// A workload error: a malformed trace line or an impossible parameter.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what}")]
pub struct WorkloadError {
    pub what: String,
}

pub fn werr(what: impl Into<String>) -> WorkloadError {
    WorkloadError { what: what.into() }
}

/// A request in words, for error messages (`ABORT of tx 8`, `WRITE of 2 pages at lpn 92`).
impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pages = |n: u32| {
            if n == 1 {
                "1 page".to_string()
            } else {
                format!("{n} pages")
            }
        };
        match *self {
            Op::Read { lpn, pages: n } => write!(f, "READ of {} at {lpn}", pages(n)),
            Op::Write { lpn, pages: n } => write!(f, "WRITE of {} at {lpn}", pages(n)),
            Op::PartialWrite { lpn, pages: n, .. } => {
                write!(f, "sub-page WRITE of {} at {lpn}", pages(n))
            }
            Op::Trim { lpn, pages: n } => write!(f, "TRIM of {} at {lpn}", pages(n)),
            Op::Begin { tx } => write!(f, "BEGIN of {tx}"),
            Op::TxWrite { tx, lpn, pages: n } => {
                write!(f, "WRITE of {} at {lpn} in {tx}", pages(n))
            }
            Op::Commit { tx, write: None } => write!(f, "COMMIT of {tx}"),
            Op::Commit { tx, write: Some(l) } => write!(f, "COMMIT of {tx} with its last page {l}"),
            Op::Abort { tx } => write!(f, "ABORT of {tx}"),
        }
    }
}
