//! Transactional command streams: what a host that uses device transactions issues.
//!
//! A stream is a list of timed commands (BEGIN, W, R, TRIM, COMMIT, ABORT, BARRIER), from a
//! generator or a `txn` trace. It runs as follows:
//!
//! - BARRIER lines cut the stream into *segments*; a segment starts only when every command of
//!   the previous one has completed (a rendezvous of all clients).
//! - Within a segment, each transaction's commands form a *chain* issued one after another,
//!   each after the previous one's ack; a command outside any transaction is a chain of one.
//! - Up to `concurrency` chains run at once, started in stream order; a chain does not start
//!   before its first command's time (times scaled by `time_scale`; 0 means at once).
//! - Times count from the start of measurement (`Driver::set_origin`, the end of the
//!   prefill), not from t = 0: a timed stream replayed after a prefill starts on schedule
//!   instead of late, as a burst.
//!
//! The generators express isolation levels (LightTx §4.2) through this structure:
//! - *strict*: one transaction per segment (a barrier after every commit or abort);
//! - *no-page-conflict*: segments of `concurrency` transactions with pairwise disjoint pages;
//! - *serializable*: no barriers; concurrent transactions may write the same pages, and
//!   commit order is the serialization order.

use crate::address::{AddressKind, Addresses};
use crate::{werr, Driver, Op, Step, WorkloadError};
use serde::{Deserialize, Serialize};
use sim::{Lpn, Rng, SimTime, TxId};
use std::collections::{BTreeMap, BTreeSet};

/// One command of a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxCmd {
    Begin {
        tx: TxId,
    },
    /// A write of `pages` pages from `lpn`, inside `tx` or (None) a plain write.
    Write {
        tx: Option<TxId>,
        lpn: Lpn,
        pages: u32,
    },
    Read {
        lpn: Lpn,
        pages: u32,
    },
    Trim {
        lpn: Lpn,
        pages: u32,
    },
    /// COMMIT; `write`: the transaction's last page, written with the COMMIT (the host had
    /// it buffered at commit, Flag Commit §3.3; `ssd::Device::commit_write`).
    Commit {
        tx: TxId,
        write: Option<Lpn>,
    },
    Abort {
        tx: TxId,
    },
    Barrier,
}

impl TxCmd {
    pub fn tx(&self) -> Option<TxId> {
        match self {
            TxCmd::Begin { tx } | TxCmd::Commit { tx, .. } | TxCmd::Abort { tx } => Some(*tx),
            TxCmd::Write { tx, .. } => *tx,
            _ => None,
        }
    }

    fn op(&self) -> Option<Op> {
        Some(match *self {
            TxCmd::Begin { tx } => Op::Begin { tx },
            TxCmd::Write {
                tx: Some(tx),
                lpn,
                pages,
            } => Op::TxWrite { tx, lpn, pages },
            TxCmd::Write {
                tx: None,
                lpn,
                pages,
            } => Op::Write { lpn, pages },
            TxCmd::Read { lpn, pages } => Op::Read { lpn, pages },
            TxCmd::Trim { lpn, pages } => Op::Trim { lpn, pages },
            TxCmd::Commit { tx, write } => Op::Commit { tx, write },
            TxCmd::Abort { tx } => Op::Abort { tx },
            TxCmd::Barrier => return None,
        })
    }
}

/// A command with the instant (ns) before which it is not issued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timed {
    pub time_ns: u64,
    pub cmd: TxCmd,
}

type Chain = Vec<(SimTime, Op)>;

#[derive(Clone, Debug, Default)]
struct ClientRun {
    chain: Option<usize>,
    pos: usize,
    seg: usize,
}

/// Runs a command stream (see the module docs).
pub struct TxStream {
    segments: Vec<Vec<Chain>>,
    seg: usize,
    next_chain: usize,
    clients: Vec<ClientRun>,
    describe: String,
    pub commands: usize,
    /// Where time 0 of the stream falls (the start of measurement).
    origin: SimTime,
    /// Whether any command carries a time (an open loop); closed loops have no arrivals.
    timed: bool,
    /// Per client: the arrival of the chain whose first command `step` just returned.
    arrival: Vec<Option<SimTime>>,
}

impl TxStream {
    /// Splits `stream` into segments and chains. Checks that it is well formed: every
    /// transaction begins before it writes and ends once, a barrier does not fall inside a
    /// transaction, and addresses fit in `logical_pages`.
    pub fn new(
        stream: &[Timed],
        concurrency: u32,
        time_scale: f64,
        logical_pages: u32,
        describe: String,
    ) -> Result<TxStream, WorkloadError> {
        TxStream::with_lines(
            stream,
            None,
            concurrency,
            time_scale,
            logical_pages,
            describe,
        )
    }

    /// `new`, for a stream read from a file: `lines[i]` is the file's line of command `i`
    /// (`txtrace::parse_lines`), and an error names that line (`line 7: ...`) instead of the
    /// command's number.
    pub fn with_lines(
        stream: &[Timed],
        lines: Option<&[usize]>,
        concurrency: u32,
        time_scale: f64,
        logical_pages: u32,
        describe: String,
    ) -> Result<TxStream, WorkloadError> {
        if concurrency == 0 {
            return Err(werr("concurrency must be at least 1"));
        }
        if time_scale.is_nan() || time_scale <= 0.0 || !time_scale.is_finite() {
            return Err(werr(format!(
                "time_scale must be positive, got {time_scale}"
            )));
        }
        let mut segments: Vec<Vec<Chain>> = vec![Vec::new()];
        let mut open: BTreeMap<TxId, usize> = BTreeMap::new();
        let mut ended: BTreeSet<TxId> = BTreeSet::new();
        // Per TxId that ended in the current segment: the chain it ran on.
        let mut last_chain: BTreeMap<TxId, usize> = BTreeMap::new();
        for (i, t) in stream.iter().enumerate() {
            let n = match lines.and_then(|l| l.get(i)) {
                Some(line) => format!("line {line}"),
                None => format!("command {}", i + 1),
            };
            let at = SimTime((t.time_ns as f64 * time_scale).round() as u64);
            match &t.cmd {
                TxCmd::Write { lpn, pages, .. }
                | TxCmd::Read { lpn, pages }
                | TxCmd::Trim { lpn, pages }
                    if *pages == 0
                        || u64::from(lpn.0) + u64::from(*pages) > u64::from(logical_pages) =>
                {
                    return Err(werr(format!(
                        "{n}: pages {}..{} are beyond the device's {logical_pages} logical pages",
                        lpn.0,
                        u64::from(lpn.0) + u64::from(*pages)
                    )));
                }
                TxCmd::Commit {
                    write: Some(lpn), ..
                } if lpn.0 >= logical_pages => {
                    return Err(werr(format!(
                        "{n}: page {} is beyond the device's {logical_pages} logical pages",
                        lpn.0
                    )));
                }
                _ => {}
            }
            match &t.cmd {
                TxCmd::Barrier => {
                    if let Some(tx) = open.keys().next() {
                        return Err(werr(format!(
                            "{n}: BARRIER inside {tx}, which has not ended"
                        )));
                    }
                    segments.push(Vec::new());
                    last_chain.clear();
                    continue;
                }
                TxCmd::Begin { tx } => {
                    if open.contains_key(tx) {
                        return Err(werr(format!("{n}: BEGIN of {tx}, which is already open")));
                    }
                    ended.remove(tx);
                    let seg = segments.last_mut().expect("at least one segment");
                    // A TxId reused after its COMMIT/ABORT (the trace format allows it) names
                    // a new transaction that may start only once the old one ended: it runs
                    // on the old one's chain, after its last ack.
                    match last_chain.get(tx) {
                        Some(&c) => {
                            seg[c].push((at, Op::Begin { tx: *tx }));
                            open.insert(*tx, c);
                        }
                        None => {
                            seg.push(vec![(at, Op::Begin { tx: *tx })]);
                            open.insert(*tx, seg.len() - 1);
                        }
                    }
                    continue;
                }
                _ => {}
            }
            let op = t.cmd.op().expect("not a barrier");
            match t.cmd.tx() {
                Some(tx) => {
                    let Some(&c) = open.get(&tx) else {
                        let why = if ended.contains(&tx) {
                            "after it ended"
                        } else {
                            "before its BEGIN"
                        };
                        return Err(werr(format!("{n}: {} of {tx} {why}", op.kind())));
                    };
                    segments.last_mut().expect("segment")[c].push((at, op));
                    if matches!(t.cmd, TxCmd::Commit { .. } | TxCmd::Abort { .. }) {
                        open.remove(&tx);
                        ended.insert(tx);
                        last_chain.insert(tx, c);
                    }
                }
                None => segments.last_mut().expect("segment").push(vec![(at, op)]),
            }
        }
        if let Some(tx) = open.keys().next() {
            return Err(werr(format!(
                "the stream ends with {tx} still open (no COMMIT or ABORT)"
            )));
        }
        segments.retain(|s| !s.is_empty());
        Ok(TxStream {
            origin: SimTime::ZERO,
            timed: stream.iter().any(|t| t.time_ns > 0),
            arrival: vec![None; concurrency as usize],
            commands: stream.len(),
            segments,
            seg: 0,
            next_chain: 0,
            clients: vec![ClientRun::default(); concurrency as usize],
            describe,
        })
    }
}

impl Driver for TxStream {
    fn clients(&self) -> u32 {
        self.clients.len() as u32
    }

    fn set_origin(&mut self, origin: SimTime) {
        self.origin = origin;
    }

    fn arrival(&self, client: u32) -> Option<SimTime> {
        self.arrival.get(client as usize).copied().flatten()
    }

    fn step(&mut self, client: u32, now: SimTime) -> Step {
        let c = client as usize;
        self.arrival[c] = None;
        loop {
            if self.clients[c].seg < self.seg {
                // Released from the barrier into the current segment.
                self.clients[c].seg = self.seg;
            }
            if let Some(ch) = self.clients[c].chain {
                let pos = self.clients[c].pos;
                if let Some((t, op)) = self.segments[self.seg]
                    .get(ch)
                    .and_then(|chain| chain.get(pos))
                {
                    let at = self.origin + t.as_ns();
                    if at > now {
                        return Step::Sleep(at);
                    }
                    if pos == 0 && self.timed {
                        self.arrival[c] = Some(at);
                    }
                    self.clients[c].pos += 1;
                    return Step::Issue(op.clone());
                }
                self.clients[c].chain = None;
            }
            let Some(segment) = self.segments.get(self.seg) else {
                return Step::Done;
            };
            if self.next_chain < segment.len() {
                self.clients[c].chain = Some(self.next_chain);
                self.clients[c].pos = 0;
                self.next_chain += 1;
                continue;
            }
            // Nothing left to start in this segment: rendezvous, then move on. The first
            // client past the barrier advances the segment; the world releases the barrier
            // only when every client has reached it, so every chain of it has finished.
            if self.clients[c].seg == self.seg && self.seg + 1 < self.segments.len() {
                self.clients[c].seg = self.seg + 1;
                return Step::Barrier;
            }
            if self.clients[c].seg > self.seg {
                self.seg += 1;
                self.next_chain = 0;
                continue;
            }
            return Step::Done;
        }
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn total_requests(&self) -> Option<u64> {
        // Commands, barriers included (a barrier is not a request, so a bar may stop just
        // short of its end; it is only a progress estimate).
        Some(self.commands as u64)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    Strict,
    NoPageConflict,
    Serializable,
}

impl Isolation {
    /// The name the configuration uses (`workload.txn.isolation`).
    pub fn name(self) -> &'static str {
        match self {
            Isolation::Strict => "strict",
            Isolation::NoPageConflict => "no-page-conflict",
            Isolation::Serializable => "serializable",
        }
    }
}

impl SizeDist {
    /// The name the configuration uses (`workload.txn.size_dist`).
    pub fn name(self) -> &'static str {
        match self {
            SizeDist::Fixed => "fixed",
            SizeDist::Uniform => "uniform",
            SizeDist::Exponential => "exponential",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SizeDist {
    /// Every transaction has `size_max` pages.
    Fixed,
    /// Uniform in `[size_min, size_max]`.
    Uniform,
    /// Exponential with mean `size_mean`, clamped to `[size_min, size_max]`.
    Exponential,
}

/// The synthetic transaction generator of TxFlash §5: count, size distribution,
/// inter-arrival time, concurrency, abort percentage; plus an address distribution and an
/// isolation level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TxnConfig {
    pub transactions: u64,
    pub size_dist: SizeDist,
    pub size_min: u32,
    pub size_max: u32,
    pub size_mean: f64,
    /// Fraction of transactions that end in ABORT.
    pub abort_ratio: f64,
    /// Transactions run at once (clients).
    pub concurrency: u32,
    pub isolation: Isolation,
    /// Open loop when > 0: mean time between transaction starts (exponential).
    pub interarrival_ns: u64,
    pub address: AddressKind,
    pub span: f64,
    pub hot_fraction: f64,
    pub hot_access: f64,
    pub zipf_theta: f64,
    /// Fraction of commands that are plain single-page writes between transactions.
    pub plain_write_ratio: f64,
    /// Fraction of committing transactions whose last page is sent with the COMMIT
    /// (`TxCmd::Commit::write`) instead of as a WRITE before it. Spread evenly over the
    /// committing transactions (no random draw, so the rest of the stream is unchanged).
    #[serde(default)]
    pub commit_write_ratio: f64,
}

impl Default for TxnConfig {
    fn default() -> Self {
        TxnConfig {
            transactions: 2_000,
            size_dist: SizeDist::Uniform,
            size_min: 1,
            size_max: 16,
            size_mean: 8.0,
            abort_ratio: 0.0,
            concurrency: 4,
            isolation: Isolation::NoPageConflict,
            interarrival_ns: 0,
            address: AddressKind::Uniform,
            span: 1.0,
            hot_fraction: 0.2,
            hot_access: 0.8,
            zipf_theta: 0.99,
            plain_write_ratio: 0.0,
            commit_write_ratio: 0.0,
        }
    }
}

impl TxnConfig {
    pub fn validate(&self) -> Result<(), WorkloadError> {
        let k = |s: &str| format!("workload.txn.{s}");
        if self.size_min == 0 || self.size_max < self.size_min {
            return Err(werr(format!(
                "{} must be >= 1 and <= size_max",
                k("size_min")
            )));
        }
        if !(0.0..=1.0).contains(&self.abort_ratio) {
            return Err(werr(format!(
                "{} must be in [0, 1], got {}",
                k("abort_ratio"),
                self.abort_ratio
            )));
        }
        if !(0.0..1.0).contains(&self.plain_write_ratio) {
            return Err(werr(format!(
                "{} must be in [0, 1), got {}",
                k("plain_write_ratio"),
                self.plain_write_ratio
            )));
        }
        if !(0.0..=1.0).contains(&self.commit_write_ratio) {
            return Err(werr(format!(
                "{} must be in [0, 1], got {}",
                k("commit_write_ratio"),
                self.commit_write_ratio
            )));
        }
        if self.concurrency == 0 {
            return Err(werr(format!("{} must be at least 1", k("concurrency"))));
        }
        if !(self.span > 0.0 && self.span <= 1.0) {
            return Err(werr(format!(
                "{} must be in (0, 1], got {}",
                k("span"),
                self.span
            )));
        }
        if self.size_dist == SizeDist::Exponential && self.size_mean.is_nan()
            || self.size_mean <= 0.0
        {
            return Err(werr(format!("{} must be positive", k("size_mean"))));
        }
        Ok(())
    }
}

/// Generates the command stream a `TxnConfig` describes.
pub fn generate(
    cfg: &TxnConfig,
    logical_pages: u32,
    rng: &mut Rng,
) -> Result<Vec<Timed>, WorkloadError> {
    cfg.validate()?;
    let span = ((f64::from(logical_pages) * cfg.span) as u64).max(1);
    if u64::from(cfg.size_max) > span {
        return Err(werr(format!(
            "workload.txn.size_max ({}) exceeds the {span} pages addressed",
            cfg.size_max
        )));
    }
    if cfg.isolation == Isolation::NoPageConflict
        && u64::from(cfg.size_max) * u64::from(cfg.concurrency) > span / 2
    {
        // The message used to say the transactions "do not fit", but
        // the rule is that they may fill at most half the pages addressed.
        return Err(werr(format!(
            "workload.txn: no-page-conflict isolation needs concurrency x size_max ({} x {} = {} pages) to be at most half of the {span} pages addressed ({}); lower workload.txn.concurrency or size_max, or raise workload.txn.span",
            cfg.concurrency,
            cfg.size_max,
            u64::from(cfg.size_max) * u64::from(cfg.concurrency),
            span / 2
        )));
    }
    let mut addr = Addresses::new(
        cfg.address,
        span,
        cfg.hot_fraction,
        cfg.hot_access,
        cfg.zipf_theta,
    )?;
    let mut out = Vec::new();
    let mut start_ns = 0u64;
    let mut in_segment: BTreeSet<u32> = BTreeSet::new();
    let mut seg_count = 0u32;
    let mut commits = 0u64;
    let seg_size = match cfg.isolation {
        Isolation::Strict => 1,
        Isolation::NoPageConflict => cfg.concurrency,
        Isolation::Serializable => u32::MAX,
    };
    for i in 0..cfg.transactions {
        if cfg.plain_write_ratio > 0.0 && rng.chance(cfg.plain_write_ratio) {
            let mut lpn = addr.next(rng, 1) as u32;
            // A plain write is a one-page transaction: under no-page-conflict it must not
            // touch a page that a transaction of this segment (possibly still active) wrote.
            if cfg.isolation == Isolation::NoPageConflict {
                let mut tries = 0;
                while in_segment.contains(&lpn) {
                    tries += 1;
                    lpn = if tries < 64 {
                        addr.next(rng, 1) as u32
                    } else {
                        (lpn + 1) % span as u32
                    };
                }
            }
            out.push(Timed {
                time_ns: start_ns,
                cmd: TxCmd::Write {
                    tx: None,
                    lpn: Lpn(lpn),
                    pages: 1,
                },
            });
        }
        let size = match cfg.size_dist {
            SizeDist::Fixed => cfg.size_max,
            SizeDist::Uniform => {
                rng.range_inclusive(u64::from(cfg.size_min), u64::from(cfg.size_max)) as u32
            }
            SizeDist::Exponential => {
                (rng.exp_u64(cfg.size_mean) as u32).clamp(cfg.size_min, cfg.size_max)
            }
        };
        // Distinct pages within a transaction; disjoint from the segment's under NPC.
        let mut pages: Vec<u32> = Vec::with_capacity(size as usize);
        let mut tries = 0;
        while pages.len() < size as usize {
            let p = addr.next(rng, 1) as u32;
            tries += 1;
            let clash = pages.contains(&p)
                || (cfg.isolation == Isolation::NoPageConflict && in_segment.contains(&p));
            if !clash {
                pages.push(p);
            } else if tries > 64 * size as usize + 1024 {
                // A skewed distribution may not offer enough free pages: take the next free
                // page in address order instead of looping.
                let mut q = p;
                while pages.contains(&q) || in_segment.contains(&q) {
                    q = (q + 1) % span as u32;
                }
                pages.push(q);
            }
        }
        let tx = TxId(i + 1);
        out.push(Timed {
            time_ns: start_ns,
            cmd: TxCmd::Begin { tx },
        });
        for p in &pages {
            out.push(Timed {
                time_ns: start_ns,
                cmd: TxCmd::Write {
                    tx: Some(tx),
                    lpn: Lpn(*p),
                    pages: 1,
                },
            });
        }
        let end = if rng.chance(cfg.abort_ratio) {
            TxCmd::Abort { tx }
        } else {
            // Every 1/ratio-th committing transaction sends its last page with COMMIT.
            let r = cfg.commit_write_ratio;
            let fused =
                (((commits + 1) as f64 * r).floor() as u64) > ((commits as f64 * r).floor() as u64);
            commits += 1;
            let write = if fused {
                out.pop();
                pages.last().map(|p| Lpn(*p))
            } else {
                None
            };
            TxCmd::Commit { tx, write }
        };
        out.push(Timed {
            time_ns: start_ns,
            cmd: end,
        });
        if cfg.isolation == Isolation::NoPageConflict {
            in_segment.extend(pages.iter().copied());
        }
        seg_count += 1;
        if seg_count >= seg_size && i + 1 < cfg.transactions {
            out.push(Timed {
                time_ns: start_ns,
                cmd: TxCmd::Barrier,
            });
            seg_count = 0;
            in_segment.clear();
        }
        if cfg.interarrival_ns > 0 {
            start_ns += rng.exp_u64(cfg.interarrival_ns as f64).max(1);
        }
    }
    Ok(out)
}

/// The sequential writer of TxFlash Fig. 6: writes `pages` pages in address order, committing
/// every `sync_pages` pages (the sync interval sets the transaction size), one at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SeqWriterConfig {
    pub pages: u64,
    pub sync_pages: u32,
}

impl Default for SeqWriterConfig {
    fn default() -> Self {
        SeqWriterConfig {
            pages: 20_000,
            sync_pages: 16,
        }
    }
}

pub fn generate_seq_writer(
    cfg: &SeqWriterConfig,
    logical_pages: u32,
) -> Result<Vec<Timed>, WorkloadError> {
    if cfg.sync_pages == 0 || cfg.sync_pages > logical_pages {
        return Err(werr(format!(
            "workload.seqwriter.sync_pages must be in 1..={logical_pages}, got {}",
            cfg.sync_pages
        )));
    }
    let mut out = Vec::new();
    let mut next = 0u32;
    let mut written = 0u64;
    let mut tx = 0u64;
    while written < cfg.pages {
        tx += 1;
        let id = TxId(tx);
        out.push(Timed {
            time_ns: 0,
            cmd: TxCmd::Begin { tx: id },
        });
        let n = u64::from(cfg.sync_pages).min(cfg.pages - written) as u32;
        for _ in 0..n {
            if next >= logical_pages {
                next = 0;
            }
            out.push(Timed {
                time_ns: 0,
                cmd: TxCmd::Write {
                    tx: Some(id),
                    lpn: Lpn(next),
                    pages: 1,
                },
            });
            next += 1;
        }
        written += u64::from(n);
        out.push(Timed {
            time_ns: 0,
            cmd: TxCmd::Commit {
                tx: id,
                write: None,
            },
        });
        if written < cfg.pages {
            out.push(Timed {
                time_ns: 0,
                cmd: TxCmd::Barrier,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::needless_range_loop)]
    fn drive(s: &mut TxStream) -> Vec<(u32, Op)> {
        // A toy world: every request completes at once; barriers release when every client
        // is at one (or done).
        let n = s.clients() as usize;
        let mut issued = Vec::new();
        let mut state = vec![0u8; n]; // 0 running, 1 at barrier, 2 done
        let now = SimTime::ZERO;
        for _ in 0..100_000 {
            if state.iter().all(|x| *x == 2) {
                return issued;
            }
            let mut progressed = false;
            for c in 0..n {
                if state[c] != 0 {
                    continue;
                }
                match s.step(c as u32, now) {
                    Step::Issue(op) => {
                        issued.push((c as u32, op));
                        progressed = true;
                    }
                    Step::Barrier => state[c] = 1,
                    Step::Done => state[c] = 2,
                    Step::Sleep(_) | Step::IssueThen(..) => panic!("unexpected"),
                }
            }
            if !progressed && state.iter().all(|x| *x != 0) {
                for x in state.iter_mut() {
                    if *x == 1 {
                        *x = 0;
                    }
                }
            }
        }
        panic!("did not finish");
    }

    #[test]
    fn strict_streams_run_one_transaction_at_a_time() {
        let cfg = TxnConfig {
            transactions: 20,
            isolation: Isolation::Strict,
            concurrency: 4,
            ..Default::default()
        };
        let stream = generate(&cfg, 1000, &mut Rng::new(1)).unwrap();
        assert_eq!(
            stream.iter().filter(|t| t.cmd == TxCmd::Barrier).count(),
            19
        );
        let mut s = TxStream::new(&stream, 4, 1.0, 1000, String::new()).unwrap();
        let ops = drive(&mut s);
        // Between a BEGIN and its COMMIT no other transaction's command appears.
        let mut open: Option<TxId> = None;
        for (_, op) in &ops {
            match op {
                Op::Begin { tx } => {
                    assert!(open.is_none());
                    open = Some(*tx)
                }
                Op::TxWrite { tx, .. } => assert_eq!(open, Some(*tx)),
                Op::Commit { tx, .. } | Op::Abort { tx } => {
                    assert_eq!(open, Some(*tx));
                    open = None
                }
                _ => {}
            }
        }
        assert_eq!(
            ops.iter()
                .filter(|(_, o)| matches!(o, Op::Begin { .. }))
                .count(),
            20
        );
    }

    #[test]
    fn npc_segments_have_disjoint_pages_and_run_concurrently() {
        let cfg = TxnConfig {
            transactions: 40,
            isolation: Isolation::NoPageConflict,
            concurrency: 4,
            ..Default::default()
        };
        let stream = generate(&cfg, 2000, &mut Rng::new(2)).unwrap();
        let mut seg_pages: BTreeMap<u32, TxId> = BTreeMap::new();
        for t in &stream {
            match t.cmd {
                TxCmd::Barrier => seg_pages.clear(),
                TxCmd::Write {
                    tx: Some(tx), lpn, ..
                } => {
                    if let Some(other) = seg_pages.insert(lpn.0, tx) {
                        assert_eq!(
                            other, tx,
                            "page {} written by two transactions of a segment",
                            lpn.0
                        );
                    }
                }
                _ => {}
            }
        }
        let mut s = TxStream::new(&stream, 4, 1.0, 2000, String::new()).unwrap();
        let ops = drive(&mut s);
        let clients: BTreeSet<u32> = ops.iter().map(|(c, _)| *c).collect();
        assert_eq!(clients.len(), 4, "four clients shared the work");
    }

    #[test]
    fn npc_plain_writes_avoid_the_pages_of_their_segment() {
        // A plain write is a one-page transaction; under no-page-conflict it may run while a
        // transaction of its segment that wrote the same page is still active.
        let cfg = TxnConfig {
            transactions: 400,
            isolation: Isolation::NoPageConflict,
            concurrency: 4,
            size_max: 8,
            plain_write_ratio: 0.5,
            ..Default::default()
        };
        let stream = generate(&cfg, 100, &mut Rng::new(3)).unwrap();
        let mut seg_pages: BTreeSet<u32> = BTreeSet::new();
        let mut plain = 0;
        for t in &stream {
            match t.cmd {
                TxCmd::Barrier => seg_pages.clear(),
                TxCmd::Write {
                    tx: Some(_), lpn, ..
                } => {
                    seg_pages.insert(lpn.0);
                }
                TxCmd::Write { tx: None, lpn, .. } => {
                    plain += 1;
                    assert!(!seg_pages.contains(&lpn.0), "plain write of page {}", lpn.0);
                }
                _ => {}
            }
        }
        assert!(plain > 100);
    }

    #[test]
    fn malformed_streams_are_rejected() {
        let b = |tx| Timed {
            time_ns: 0,
            cmd: TxCmd::Begin { tx: TxId(tx) },
        };
        let w = |tx| Timed {
            time_ns: 0,
            cmd: TxCmd::Write {
                tx: Some(TxId(tx)),
                lpn: Lpn(1),
                pages: 1,
            },
        };
        let c = |tx| Timed {
            time_ns: 0,
            cmd: TxCmd::Commit {
                tx: TxId(tx),
                write: None,
            },
        };
        let bar = Timed {
            time_ns: 0,
            cmd: TxCmd::Barrier,
        };
        let cases: Vec<(Vec<Timed>, &str)> = vec![
            (vec![w(1)], "before its BEGIN"),
            (vec![b(1), c(1), w(1)], "after it ended"),
            (vec![b(1), b(1)], "already open"),
            (vec![b(1), bar.clone(), c(1)], "BARRIER inside"),
            (vec![b(1), w(1)], "still open"),
            (
                vec![Timed {
                    time_ns: 0,
                    cmd: TxCmd::Write {
                        tx: None,
                        lpn: Lpn(99),
                        pages: 2,
                    },
                }],
                "beyond",
            ),
        ];
        for (s, want) in cases {
            let e = TxStream::new(&s, 2, 1.0, 100, String::new()).err().unwrap();
            assert!(e.what.contains(want), "{}: wanted {want}", e.what);
        }
    }

    #[test]
    fn seq_writer_commits_every_sync_interval() {
        let s = generate_seq_writer(
            &SeqWriterConfig {
                pages: 10,
                sync_pages: 4,
            },
            100,
        )
        .unwrap();
        let commits = s
            .iter()
            .filter(|t| matches!(t.cmd, TxCmd::Commit { .. }))
            .count();
        assert_eq!(commits, 3);
        let writes: Vec<u32> = s
            .iter()
            .filter_map(|t| match t.cmd {
                TxCmd::Write { lpn, .. } => Some(lpn.0),
                _ => None,
            })
            .collect();
        assert_eq!(writes, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn aborts_follow_the_ratio_and_generation_is_deterministic() {
        let cfg = TxnConfig {
            transactions: 2000,
            abort_ratio: 0.25,
            isolation: Isolation::Serializable,
            ..Default::default()
        };
        let a = generate(&cfg, 5000, &mut Rng::new(9)).unwrap();
        let b = generate(&cfg, 5000, &mut Rng::new(9)).unwrap();
        assert_eq!(a, b);
        let aborts = a
            .iter()
            .filter(|t| matches!(t.cmd, TxCmd::Abort { .. }))
            .count();
        assert!((400..600).contains(&aborts), "{aborts}");
        assert!(!a.iter().any(|t| t.cmd == TxCmd::Barrier));
    }
}
