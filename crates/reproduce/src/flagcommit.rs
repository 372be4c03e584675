//! Flag Commit (On et al., IEEE TKDE 2012) §5: CFC and AFC against SCC and BPCC (§5.2), and
//! CFC_ex / AFC_ex against WAL (§5.3), on the host engine running TPC-C.
//!
//! - Figs. 12 and 13: throughput, execution time, GC overhead and recovery of the four
//!   device protocols under `device-tx` (force, page-level locking, §5.2) at δ = 5 %.
//! - Fig. 14: the same four under δ = 1–50 %.
//! - Fig. 15: CFC_ex / AFC_ex under max_c = 2, 3, 4 (restart ratio and throughput).
//! - Figs. 16 and 17: CFC_ex, AFC_ex and WAL against the basic CFC / AFC.
//! - Fig. 18: CFC_ex, AFC_ex and WAL on short (λ ≤ 10 pages written) and long (λ > 10)
//!   transactions only (`host.tpcc.max_pages_written` / `min_pages_written`).
//! - Fig. 19: CFC_ex, AFC_ex and WAL with 256–4,096 buffer frames.
//! - Table 3: controller memory of the four device protocols.
//!
//! The PostgreSQL trace (`examples/traces/pg-tpcc.trace.gz`, §5.1's workload) drives a
//! second series of Figs. 12, 13, 14 and 16 as claims of their own (`flagcommit-pg-…`,
//! `pg_trace`); Fig. 14's δ sweep cannot be driven by a recording and says so.
//!
//! Device preparation (`Prep`). §5.2's points (`device-tx`) run as §5.1 describes: the
//! database's pages are on the device (`host::external::load_data_area`: every part holds
//! its loaded tag, which reads and recovers as the page as loaded), the rest of the logical
//! space holds cold data, the database's own pages are overwritten at random until the
//! free pool has reached the GC threshold (`age_loaded`), and a warm-up of 1/8 of the
//! point's transactions (§5.1: 30 minutes before 4 hours) fills the buffer pool and ages
//! the device with the workload's own writes before the measured window (`window`).
//! §5.3's points (CFC_ex, AFC_ex, WAL over the plain FTL) are prepared the same way, on one
//! device they share: the same loaded data area (CFC_ex / AFC_ex read it as version slot 0
//! holding each page as loaded), the rest of CFC_ex's extent unmapped and the cold data
//! beyond it (`own_extent`). The older preparation (`Prep::Aged`: cold data beyond the most
//! logical space any strategy may use, overwritten at random, the database unmapped and
//! every transaction measured from a cold pool) runs §5.2's four protocols at δ = 5 % and
//! CFC_ex, AFC_ex and WAL at the defaults as the ablation of the new one (`old_run`).
//!
//! Ablations (`explain`): each claim that disagrees with the paper and whose suspected cause
//! has a run here carries an explanation whose class is computed from that run by the one
//! rule of `crate::cause` (`Test::candidate`, `cause::attach`): the cause's class (`setup`,
//! `model`) only if changing exactly that cause brings the claim into agreement (by the
//! claim's own verdict rule) or closes more than half of its distance to the paper, otherwise
//! a `finding` that names the refuted cause. The runs: CFC with every commit flag a separate
//! partial program (`protocol.cfc_flag_reprogram`); the device protocols, CFC_ex, AFC_ex
//! and WAL on the old preparation (`Prep::Aged`: the device's preparation, matched in the
//! claims' runs, so a `finding`; Figs. 12, 13a, 16 and 17); AFC and CFC
//! recovering on an empty device (`Prep::Fresh`: the cold data); at quick scale, the buffer
//! at Table 2's share of the database (`Share`: Fig. 14's δ ends, Fig. 18's short
//! transactions, Fig. 19's buffer ends), and CFC_ex, AFC_ex, WAL, CFC and AFC at the plan's
//! and the paper's 20 warehouses and the device protocols on a larger device (Table 3), all
//! on one empty device; CFC_ex and AFC_ex without merge reads (Fig. 15). At full scale the
//! claims' own runs have Table 2's warehouses, capacity and buffer share, so those causes
//! are `finding`s by the rule (`matched`).
//!
//! What it does not do: tune anything toward the paper; run the paper's 4-hour traces (it
//! runs a stated number of transactions per point).

use crate::cause::{self, Suspect};
use crate::csvfile::{csv_of, Fixed};
use crate::remote::{self, PointTask};
use crate::runner::{run_each, run_each_shared, Job, Progress};
use crate::{pct, CauseClass, Claim, Output, Scale, Verdict, MAGNITUDE_HIGH, MAGNITUDE_LOW};
use host::HostMetrics;
use report::svg::{bar_chart, line_chart, Chart, Series};
use serde::Serialize;
use sim::SimTime;
use world::{Config, ConfigSource};

const PAPER: &str = "flagcommit";
/// §5.2's device protocols under `device-tx`, in the order of the figures.
const DEVICE: [&str; 4] = ["cfc", "afc", "bpcc", "scc"];
/// The extended protocols and WAL of §5.3 (host strategies over the plain FTL).
const EXTENDED: [&str; 3] = ["cfc-ex", "afc-ex", "wal"];
/// Bytes of each flash page's record area (CFC_ex / AFC_ex's commit flags).
const APPEND_BYTES: u32 = 8;
/// Table 2's default abort ratio δ.
const DELTA: f64 = 0.05;
/// Table 2's buffer pool.
const FRAMES: u32 = 512;
/// Table 2's TPC-C scale.
const PAPER_WAREHOUSES: u32 = 20;
/// Fig. 18's split: short transactions write at most this many pages, long ones more.
const SHORT_PAGES: u32 = 10;
/// §5.3.1: max_c is 3 in the rest of the evaluation.
const MAX_C: u32 = 3;
/// The largest max_c swept (Fig. 15; NOP 2 over 4 flash pages per DB page allows no more)
/// and the ablation's max_c.
const MAX_C_LARGE: u32 = 4;
/// Version slots per DB page of CFC_ex/AFC_ex at the largest max_c
/// (`strategy::flagcommit_ex::versions_for`): they use the most logical space of all
/// strategies, so the cold data starts after theirs.
const FC_VERSIONS: u64 = host::strategy::flagcommit_ex::versions_for(MAX_C_LARGE) as u64;

/// How §5.2's runs are set up (shared by the Fig. 12-14 claims).
const DEVICE_TX_NOTE: &str = "Setup: `device-tx` runs SCC and BPCC with §5.1's rule (every page of an in-progress transaction may be stolen but its last shadow page, so an aborted transaction that stole pages leaves uncommitted intentions on flash, which SCC erases and BPCC keeps, §5.2; a stolen page updated again before commit makes the engine reopen the device transaction and write its pages again, docs/HOST.md). CFC and AFC may steal; under force at commit CFC programs the transaction's last page with its TRUE flag once the other pages are durable (§3.3) and AFC reprograms its first page's flag once every page is durable (the CSV's `commit_ms_mean` and `nand_partial_programs`). The workload is the engine's own TPC-C (the `flagcommit-pg-…` claims repeat the figure on a recorded PostgreSQL trace); the device holds the database, aged by its own pages, and only the window after a warm-up is measured (notes, Device). A cause of a disagreement is stated only in the claim's explanation, with the ablation run that tested it.";

/// The paper's Fig. 12a gains, one claim each on the engine's TPC-C and on the PostgreSQL
/// trace: (claim id after the paper's prefix, faster, its strategy, slower, its strategy,
/// the gain).
const FIG12A: [(&str, &str, &str, &str, &str, f64); 4] = [
    ("fig12-afc-vs-bpcc", "AFC", "afc", "BPCC", "bpcc", 0.35),
    ("fig12-afc-vs-scc", "AFC", "afc", "SCC", "scc", 1.10),
    ("fig12-cfc-vs-bpcc", "CFC", "cfc", "BPCC", "bpcc", 0.24),
    ("fig12-cfc-vs-scc", "CFC", "cfc", "SCC", "scc", 0.94),
];

/// Fig. 13a's lower bounds on the GC share: (claim id, protocol, its strategy, the bound).
const FIG13A_GC_SHARE: [(&str, &str, &str, f64); 2] = [
    ("fig13a-gc-share-bpcc", "BPCC", "bpcc", 0.35),
    ("fig13a-gc-share-scc", "SCC", "scc", 0.55),
];

/// Fig. 13a's GC time of AFC against the others: (claim id, other, its strategy, the change).
const FIG13A_AFC_GC: [(&str, &str, &str, f64); 3] = [
    ("fig13a-afc-gc-vs-cfc", "CFC", "cfc", -0.13),
    ("fig13a-afc-gc-vs-bpcc", "BPCC", "bpcc", -0.34),
    ("fig13a-afc-gc-vs-scc", "SCC", "scc", -0.58),
];

/// Fig. 16a's throughput gains of the extended protocols, as `FIG12A`.
const FIG16A: [(&str, &str, &str, &str, &str, f64); 4] = [
    ("fig16-cfcex-vs-cfc", "CFC_ex", "cfc-ex", "CFC", "cfc", 0.64),
    ("fig16-afcex-vs-afc", "AFC_ex", "afc-ex", "AFC", "afc", 0.53),
    ("fig16-cfcex-vs-wal", "CFC_ex", "cfc-ex", "WAL", "wal", 0.49),
    ("fig16-afcex-vs-wal", "AFC_ex", "afc-ex", "WAL", "wal", 0.51),
];

/// The sizes one reproduction runs at.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub blocks_per_plane: u32,
    pub warehouses: u32,
    pub clients: u32,
    pub transactions: u64,
    /// Device pages of the log area (WAL, CFC_ex, AFC_ex): room for the whole run's log,
    /// so no run depends on truncation (see docs/REPRODUCTION-RULES.md, "Flag Commit").
    pub log_pages: u32,
    /// TPC-C cardinalities below the spec's (only the test's tiny plan shrinks them).
    pub customers_per_district: Option<u32>,
    pub items: Option<u32>,
    /// Fig. 14's δ values (Table 2's 5 % is run in any case).
    pub deltas: Vec<f64>,
    /// Fig. 15's max_c values (3 is run in any case).
    pub max_cs: Vec<u32>,
    /// Fig. 19's buffer sizes (512 is run in any case).
    pub frames: Vec<u32>,
    /// The warehouses of the ablation that runs CFC_ex, AFC_ex and WAL at the paper's
    /// database scale beside the plan's (`None` when the plan already runs the paper's 20).
    pub ablation_warehouses: Option<u32>,
    /// Transactions of the PostgreSQL trace each point of the trace series replays (0: no
    /// trace series), and its device's blocks per plane (`None`: `blocks_per_plane`).
    pub trace_transactions: u64,
    pub trace_blocks_per_plane: Option<u32>,
    /// The slot-reuse ablation (`host.fc_reuse_slots_first`) for AFC_ex's long transactions
    /// and CFC_ex's smallest and largest buffer besides CFC_ex's long transactions (false:
    /// CFC_ex's long transactions only, the full plan's budget).
    pub reuse_all: bool,
}

impl Plan {
    fn of(scale: Scale) -> Plan {
        match scale {
            // 2 GiB device (32 planes × 512 blocks of 64 × 2 KiB pages), 4 warehouses: the
            // quick budget allows neither the 32 GiB device nor 20 warehouses (whose CFC_ex
            // version slots alone need 6 GiB of logical space) for every point.
            Scale::Quick => Plan {
                blocks_per_plane: 512,
                warehouses: 4,
                clients: 50,
                transactions: 8_000,
                log_pages: 32_768,
                customers_per_district: None,
                items: None,
                deltas: vec![0.01, 0.10, 0.15, 0.20, 0.30, 0.50],
                max_cs: vec![2, 4],
                frames: vec![256, 4096],
                ablation_warehouses: Some(PAPER_WAREHOUSES),
                // Half the trace's 4,000 transactions on a 1 GiB device (the trace's
                // database is 14,652 DB pages; CFC_ex's extent over it fits).
                trace_transactions: 2_000,
                trace_blocks_per_plane: Some(256),
                reuse_all: true,
            },
            // Table 2: 32 GiB, 20 warehouses, 50 clients.
            Scale::Full => Plan {
                blocks_per_plane: 8192,
                warehouses: 20,
                clients: 50,
                transactions: 100_000,
                log_pages: 262_144,
                customers_per_district: None,
                items: None,
                deltas: vec![0.01, 0.10, 0.15, 0.20, 0.30, 0.40, 0.50],
                // max_c 5 would need 2 flag programs per part, over NOP 2.
                max_cs: vec![1, 2, 4],
                frames: vec![256, 1024, 2048, 4096],
                ablation_warehouses: None,
                trace_transactions: 4_000,
                trace_blocks_per_plane: None,
                reuse_all: false,
            },
        }
    }

    fn deltas(&self) -> Vec<f64> {
        let mut d = self.deltas.clone();
        d.push(DELTA);
        d.sort_by(f64::total_cmp);
        d.dedup();
        d
    }

    fn max_cs(&self) -> Vec<u32> {
        let mut v = self.max_cs.clone();
        v.push(MAX_C);
        v.sort();
        v.dedup();
        v
    }

    fn frames(&self) -> Vec<u32> {
        let mut v = self.frames.clone();
        v.push(FRAMES);
        v.sort();
        v.dedup();
        v
    }
}

/// The Flag Commit device (Table 2 through the `flagcommit` preset) with TPC-C on the host.
fn base(plan: &Plan) -> Result<Config, String> {
    let mut c = Config::load(&ConfigSource {
        preset: Some("flagcommit".into()),
        file: None,
        sets: vec![
            "nand.data_mode=\"tag\"".into(),
            format!("nand.blocks_per_plane={}", plan.blocks_per_plane),
            // CFC_ex / AFC_ex program their commit flags into each flash page's record
            // area: one byte per part covers max_c ≤ 4 over 4 parts (NOP 2 allows one flag
            // program per part after the page program). Set for every point alike.
            format!("nand.append_bytes={APPEND_BYTES}"),
        ],
    })
    .map_err(|e| e.to_string())?;
    c.workload.kind = world::WorkloadKind::Host;
    let h = &mut c.host;
    h.workload = "tpcc".into();
    h.clients = plan.clients;
    h.transactions = plan.transactions;
    h.buffer_frames = FRAMES;
    h.max_c = MAX_C;
    h.log_pages = plan.log_pages;
    h.tpcc.warehouses = plan.warehouses;
    h.tpcc.delta_abort = DELTA;
    // Insert regions sized for this run, not the default million transactions.
    h.tpcc.max_txns = plan.transactions;
    if let Some(n) = plan.customers_per_district {
        h.tpcc.customers_per_district = n;
    }
    if let Some(n) = plan.items {
        h.tpcc.items = n;
    }
    Ok(c)
}

fn point(b: &Config, strategy: &str, protocol: &str) -> Config {
    let mut c = b.clone();
    c.host.strategy = strategy.into();
    c.protocol.name = protocol.into();
    c
}

/// A device strategy point (`device-tx` over `protocol`) or an extended one (over `none`).
fn strat(b: &Config, name: &str) -> Config {
    if DEVICE.contains(&name) {
        point(b, "device-tx", name)
    } else {
        point(b, name, "none")
    }
}

/// What one point measured (serialized for the remote engine, `remote::PointTask`, with
/// the histogram: `host::metrics::with_histogram`).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Res {
    #[serde(with = "host::metrics::with_histogram")]
    pub m: HostMetrics,
    /// Controller DRAM at the end of the run: everything, and the protocol's own tables.
    pub dram_bytes: u64,
    pub protocol_dram_bytes: u64,
    /// Simulated time the ageing took (before the run's own clock starts), and the GC
    /// erases it caused (the free pool reached the GC threshold).
    pub aged_ns: u64,
    pub aged_gc_erases: u64,
    /// Transactions committed in the warm-up before the measured window (0: no warm-up).
    pub warmup_committed: u64,
    /// CFC's and AFC's flag programs during the whole run, warm-up included (the FTL's
    /// counters).
    pub flags: FlagCounts,
    /// The FTL's GC page copies and GC erases during the whole run, warm-up included.
    #[serde(default)]
    pub gc: GcCounts,
}

/// The FTL's GC work (`ssd::stats`): valid pages copied out of victims, victims erased.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct GcCounts {
    pub copies: u64,
    pub erases: u64,
}

impl GcCounts {
    /// Valid pages copied per victim erased (0 without erases).
    fn copies_per_erase(&self) -> f64 {
        if self.erases == 0 {
            0.0
        } else {
            self.copies as f64 / self.erases as f64
        }
    }
}

/// The FTL's flag counters (`ssd::stats`): commit flags set by a partial program, commit
/// flags carried by the last page's own program (§3.3), flags moved or added by GC.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct FlagCounts {
    pub commit: u64,
    pub in_page: u64,
    pub gc: u64,
}

impl Res {
    fn tput(&self) -> f64 {
        self.m.throughput_per_s
    }
    fn restart_ratio(&self) -> f64 {
        self.m.txns_restarted as f64 / (self.m.txns_committed.max(1)) as f64
    }
    fn gc_per_commit_ns(&self) -> f64 {
        self.m.gc_time_ns as f64 / (self.m.txns_committed.max(1)) as f64
    }
}

/// How the claim an ablation tests is judged on its quantity: the paper's number (as
/// `Verdict::value` judges it) or a statement that holds above a bound. The explanation's
/// class comes from the one rule (`crate::cause`): this gives it the distance
/// (`cause::Target`) and the claim's own verdict on the ablation ("into agreement").
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Rule {
    /// A number the paper gives (a relative change, a quantity).
    Value(f64),
    /// A statement that holds when the quantity exceeds this (a bound, an ordering stated as
    /// a difference or ratio against its neutral point).
    Above(f64),
}

impl Rule {
    fn target(self) -> cause::Target {
        match self {
            Rule::Value(p) => cause::Target::Near(p),
            Rule::Above(b) => cause::Target::AtLeast(b),
        }
    }

    /// The claim's own verdict rule applied to a value of its quantity.
    fn verdict(self, m: f64) -> Verdict {
        match self {
            Rule::Value(p) => Verdict::value(p, m),
            Rule::Above(b) => Verdict::qualitative(m > b),
        }
    }
}

/// One suspected cause of a claim's disagreement and its ablation: the claim's quantity at
/// its own run (the pair's first run, when the ablation is a pair of its own on another
/// device) and at the ablation's, with further values the ablation measured.
pub(crate) struct Test<'a> {
    /// The class the cause has if the numbers support it (`Setup` or `Model`).
    pub class: CauseClass,
    /// The suspected cause, as a sentence: which part of the setting, or which mechanism.
    pub cause: &'a str,
    /// The ablation's run label and what it changes against the claim's run.
    pub run: &'a str,
    pub changes: &'a str,
    pub rule: Rule,
    pub base: f64,
    pub ablated: f64,
    /// The quantity in the claim's terms ("CFC vs BPCC −25.8 %").
    pub show: &'a dyn Fn(f64) -> String,
    /// Further values the ablation measured (computed from its results), or empty.
    pub detail: String,
}

impl Test<'_> {
    /// The candidate the one rule judges (`cause::explain`): a `cause::Suspect` whose
    /// ablation is judged by the claim's own verdict rule, with the detail in its measured
    /// text.
    pub(crate) fn candidate(&self) -> cause::Candidate {
        let mut c = Suspect {
            class: self.class,
            cause: self.cause,
            run: self.run,
            changes: self.changes,
            target: self.rule.target(),
            base: self.base,
            ablated: self.ablated,
            show: self.show,
        }
        .candidate();
        if self.base.is_finite() && self.ablated.is_finite() {
            c.probe.ablated_verdict = Some(self.rule.verdict(self.ablated));
        }
        if !self.detail.is_empty() {
            c.measured = format!("{}; {}", c.measured, self.detail);
        }
        c
    }
}

/// A cause whose setting the claim's own run already has (full scale: Table 2's 20
/// warehouses, 32 GB, 512 frames against that database): the one rule makes the
/// disagreement a `finding`, its evidence the claim's own run (`run`) and what it measured.
pub(crate) fn matched(cause: &str, run: &str, measured: String) -> cause::Candidate {
    cause::Candidate {
        cause: cause::Cause {
            class: CauseClass::Setup,
            what: cause.to_string(),
            run: run.to_string(),
            changes: "nothing: the claim's own run has the paper's setting for this cause".into(),
            matched_in_base: true,
        },
        probe: cause::Probe {
            target: cause::Target::Near(0.0),
            base: f64::NAN,
            ablated: f64::NAN,
            ablated_verdict: None,
        },
        measured,
    }
}

/// Device pages the host may use at most, for every strategy: CFC_ex's version slots, its
/// master and the log (`flagcommit_ex::slots_base` and its `need`), which exceed WAL's and
/// `device-tx`'s extents.
fn host_extent(cfg: &Config, flash_page_bytes: u32) -> Result<u64, String> {
    let src = host::source::build(&cfg.host, cfg.seed).map_err(|e| e.to_string())?;
    let parts = host::engine::parts_for(&cfg.host, flash_page_bytes).map_err(|e| e.to_string())?;
    let layout = host::data::Layout::from_source(src.as_ref(), parts);
    Ok(host::engine::data_lpns(&layout) * FC_VERSIONS + 1 + u64::from(cfg.host.log_pages))
}

/// Ages `dev`: writes every logical page from `from` to the end once (cold data), then
/// overwrites random ones of them — as many as the device's physical pages not holding
/// cold data plus a quarter of the cold pages — so the free pool has reached the GC
/// threshold and victims hold a mix of valid and invalid pages. Writes go as a closed loop
/// of two per parallel unit (as `world`'s prefill). Deterministic in `seed`.
pub(crate) fn age(dev: &mut ssd::Device, from: u64, seed: u64) -> Result<(), String> {
    let n = u64::from(dev.logical_pages());
    if from >= n {
        return Err(format!(
            "the host needs {from} device pages, the device has {n} logical pages: no room for the aged cold data"
        ));
    }
    let cold = n - from;
    let phys = dev.core.geo.pages() as u64;
    let depth = 2 * dev.core.geo.pus() as usize;
    let mut in_flight = std::collections::VecDeque::with_capacity(depth);
    let mut now = SimTime::ZERO;
    let mut tag = 1u64 << 62;
    let mut write = |dev: &mut ssd::Device, lpn: u64| -> Result<(), String> {
        if in_flight.len() >= depth {
            if let Some(t) = in_flight.pop_front() {
                now = now.max(t);
            }
        }
        tag += 1;
        let ack = dev
            .write_plain(sim::Lpn(lpn as u32), tag, now)
            .map_err(|e| format!("ageing the device at lpn {lpn}: {e}"))?;
        in_flight.push_back(ack);
        Ok(())
    };
    for lpn in from..n {
        write(dev, lpn)?;
    }
    let mut rng = sim::Rng::new(seed).fork("flagcommit-age");
    for _ in 0..(phys.saturating_sub(cold) + cold / 4) {
        write(dev, from + rng.below(cold))?;
    }
    Ok(())
}

/// Ages a device that holds the loaded database in its first `db` logical pages
/// (`host::external::load_data_area`): writes the logical pages from `cold` (≥ `db`: the end
/// of what the point's strategy may write, `own_extent`) to the end once with cold data,
/// then overwrites random pages *of the database* with their loaded tags — as many as the
/// device's physical pages not holding data after the first pass plus a quarter of the
/// database's pages — so the free pool has reached the GC threshold, the invalid pages are
/// the database's own and victims hold a mix of valid and invalid pages. The pages between
/// `db` and `cold` (CFC_ex's master, log and version slots 1.., WAL's log) stay unmapped:
/// a strategy finds them as it would on a device it had just formatted. Deterministic in
/// `seed`; the same closed loop as `age`.
pub(crate) fn age_loaded(
    dev: &mut ssd::Device,
    db: u64,
    cold: u64,
    seed: u64,
) -> Result<(), String> {
    let n = u64::from(dev.logical_pages());
    if db == 0 || cold < db || cold >= n {
        return Err(format!(
            "the database needs {db} device pages and the strategy {cold}, the device has {n} logical pages: no room for the aged cold data"
        ));
    }
    let phys = dev.core.geo.pages() as u64;
    let depth = 2 * dev.core.geo.pus() as usize;
    let mut in_flight = std::collections::VecDeque::with_capacity(depth);
    let mut now = dev.barrier(SimTime::ZERO);
    let mut cold_tag = 1u64 << 62;
    let mut write = |dev: &mut ssd::Device, lpn: u64, tag: u64| -> Result<(), String> {
        if in_flight.len() >= depth {
            if let Some(t) = in_flight.pop_front() {
                now = now.max(t);
            }
        }
        let ack = dev
            .write_plain(sim::Lpn(lpn as u32), tag, now)
            .map_err(|e| format!("ageing the device at lpn {lpn}: {e}"))?;
        in_flight.push_back(ack);
        Ok(())
    };
    for lpn in cold..n {
        cold_tag += 1;
        write(dev, lpn, cold_tag)?;
    }
    let mut rng = sim::Rng::new(seed).fork("flagcommit-age-loaded");
    let data = db + (n - cold);
    for _ in 0..(phys.saturating_sub(data) + db / 4) {
        let lpn = rng.below(db);
        write(dev, lpn, host::external::loaded_tag(sim::Lpn(lpn as u32)))?;
    }
    Ok(())
}

/// Flag Commit §5.1: "a 30-minute TPC-C trace was used to warm up the SSD simulator and the
/// buffer pool, then a 4-hour TPC-C trace was used for the evaluation": the warm-up is this
/// fraction of a point's transactions, and only the rest is measured.
const WARMUP_DIVISOR: u64 = 8;

/// How a point's device is prepared before the engine starts.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Prep {
    /// §5.1's setting, the default of every point: the database's pages on the device
    /// (`host::external::load_data_area`; CFC_ex / AFC_ex read them as version slot 0
    /// holding the page as loaded), cold data over the logical space beyond what the point's
    /// strategy may write (`own_extent`), random overwrites of the database's own pages
    /// until GC runs (`age_loaded`), then a warm-up of the point's own workload
    /// (`WARMUP_DIVISOR`): the measured window starts with a warm buffer pool on a device
    /// aged by the database's own updates.
    Loaded,
    /// The preparation before the database was put on the device, kept as the ablation of
    /// `Loaded`: cold data from the end of the most any strategy may use (`host_extent`),
    /// then random overwrites of the cold data (`age`); the database unmapped, the buffer
    /// pool cold, every transaction measured.
    Aged,
    /// No ageing: an empty device.
    Fresh,
}

/// A point's own preparation: `Loaded` for `device-tx` (§5.2's runs) and for CFC_ex,
/// AFC_ex and WAL (§5.3's), `Aged` otherwise.
pub(crate) fn prep_of(cfg: &Config) -> Prep {
    if cfg.host.strategy == "device-tx" || EXTENDED.contains(&cfg.host.strategy.as_str()) {
        Prep::Loaded
    } else {
        Prep::Aged
    }
}

/// Device pages the point's database occupies (its data area, `engine::data_lpns`).
fn db_extent(cfg: &Config, flash_page_bytes: u32) -> Result<u64, String> {
    let src = host::source::build(&cfg.host, cfg.seed).map_err(|e| e.to_string())?;
    let parts = host::engine::parts_for(&cfg.host, flash_page_bytes).map_err(|e| e.to_string())?;
    let layout = host::data::Layout::from_source(src.as_ref(), parts);
    Ok(host::engine::data_lpns(&layout))
}

/// Device pages the point's own strategy writes at most when it runs under `device-tx`
/// (its data pages); other strategies keep `host_extent`.
fn own_extent(cfg: &Config, flash_page_bytes: u32) -> Result<u64, String> {
    if cfg.host.strategy != "device-tx" {
        return host_extent(cfg, flash_page_bytes);
    }
    db_extent(cfg, flash_page_bytes)
}

/// A point's aged device, before the host runs on it (`aged`), with what ageing took.
pub(crate) struct Aged {
    dev: ssd::Device,
    aged_ns: u64,
    aged_gc_erases: u64,
    /// Transactions run before the measured window (0: every transaction is measured).
    warmup: u64,
}

/// The configuration a point runs (every point is a host run).
fn host_cfg(cfg: &Config) -> Result<Config, String> {
    let mut cfg = cfg.clone();
    cfg.workload.kind = world::WorkloadKind::Host;
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// Everything the prepared device depends on: the device (NAND, FTL, protocol), the seed,
/// the preparation, where the cold data starts and (for `Loaded`) the database's extent and
/// the warm-up's length. Points with the same key start from the same device, so the runner
/// prepares it once and gives each a copy (`runner::run_each_shared`); `None` (an invalid
/// configuration) runs alone and reports its own error.
pub(crate) fn aged_key(cfg: &Config) -> Option<String> {
    aged_key_as(cfg, prep_of(cfg))
}

/// `aged_key` for a given preparation.
pub(crate) fn aged_key_as(cfg: &Config, prep: Prep) -> Option<String> {
    let cfg = host_cfg(cfg).ok()?;
    let page_bytes = cfg.device().image_params().ok()?.geometry.page_bytes;
    match prep {
        Prep::Aged => {
            let from = host_extent(&cfg, page_bytes).ok()?;
            serde_json::to_string(&(cfg.device(), cfg.seed, from)).ok()
        }
        // The loaded tags name LPNs only, so the database's extent is its content; the
        // cold data starts at the strategy's own extent (§5.3's points share one device,
        // CFC_ex's extent at the largest max_c).
        Prep::Loaded => serde_json::to_string(&(
            cfg.device(),
            cfg.seed,
            "loaded",
            db_extent(&cfg, page_bytes).ok()?,
            own_extent(&cfg, page_bytes).ok()?,
            cfg.host.transactions / WARMUP_DIVISOR,
        ))
        .ok(),
        Prep::Fresh => None,
    }
}

/// Builds a point's device and prepares it as its own preparation says (`prep_of`).
pub(crate) fn aged(cfg: &Config) -> Result<Aged, String> {
    aged_as(cfg, prep_of(cfg))
}

/// Builds a point's device and prepares it as `prep` says.
pub(crate) fn aged_as(cfg: &Config, prep: Prep) -> Result<Aged, String> {
    let cfg = host_cfg(cfg)?;
    let mut dev = world::build_device(&cfg, None).map_err(|e| e.to_string())?;
    let page_bytes = dev.core.geo.page_bytes;
    let mut warmup = 0;
    match prep {
        Prep::Aged => age(&mut dev, host_extent(&cfg, page_bytes)?, cfg.seed)?,
        Prep::Loaded => {
            let db = host::external::load_data_area(&cfg.host, cfg.seed, &mut dev)
                .map_err(|e| e.to_string())?;
            age_loaded(&mut dev, db, own_extent(&cfg, page_bytes)?, cfg.seed)?;
            warmup = cfg.host.transactions / WARMUP_DIVISOR;
        }
        Prep::Fresh => {}
    }
    let aged_ns = dev.barrier(SimTime::ZERO).as_ns();
    let aged_gc_erases = dev.core.stats.gc_erases;
    Ok(Aged {
        dev,
        aged_ns,
        aged_gc_erases,
        warmup,
    })
}

/// An independent copy of an aged device (`ssd::Device::try_clone`).
pub(crate) fn copy_aged(a: &Aged) -> Option<Aged> {
    Some(Aged {
        dev: a.dev.try_clone()?,
        aged_ns: a.aged_ns,
        aged_gc_erases: a.aged_gc_erases,
        warmup: a.warmup,
    })
}

/// One point: build the device, prepare it as its own preparation says, run the host
/// engine on it.
#[cfg(test)]
pub(crate) fn host_point(cfg: &Config) -> Result<Res, String> {
    prepared_point(cfg, prep_of(cfg))
}

/// One point on a device prepared as `prep` says.
pub(crate) fn prepared_point(cfg: &Config, prep: Prep) -> Result<Res, String> {
    run_aged(cfg, aged_as(cfg, prep)?)
}

/// The metrics of the window after a warm-up: `full` less `warm` (the run's metrics when
/// the warm-up's last transaction had been handed out, `engine::run_with_snapshot`).
/// Counters are differences, throughput is the window's commits over its simulated time,
/// the GC share the window's GC time over its array busy time, the mean execution and
/// commit times the window's (sums less the warm-up's); percentiles of the execution time
/// come from the window's histogram (`Histogram::since`); the commit-time percentiles
/// other than the mean, the net-bytes figures and recovery are the whole run's.
pub(crate) fn window(full: &HostMetrics, warm: &HostMetrics) -> HostMetrics {
    let mut m = full.clone();
    let d = |a: u64, b: u64| a.saturating_sub(b);
    m.txns_committed = d(full.txns_committed, warm.txns_committed);
    m.txns_aborted = d(full.txns_aborted, warm.txns_aborted);
    m.txns_restarted = d(full.txns_restarted, warm.txns_restarted);
    m.sim_time_ns = d(full.sim_time_ns, warm.sim_time_ns);
    m.throughput_per_s = if m.sim_time_ns == 0 {
        0.0
    } else {
        m.txns_committed as f64 / (m.sim_time_ns as f64 / 1e9)
    };
    let mean_since = |f: &sim::histogram::Percentiles, w: &sim::histogram::Percentiles| {
        let n = f.count.saturating_sub(w.count);
        if n == 0 {
            0.0
        } else {
            (f.mean * f.count as f64 - w.mean * w.count as f64) / n as f64
        }
    };
    m.txn_time_hist = full.txn_time_hist.since(&warm.txn_time_hist);
    m.txn_time_ns = m.txn_time_hist.percentiles();
    m.txn_time_ns.mean = mean_since(&full.txn_time_ns, &warm.txn_time_ns);
    m.commit_latency_ns.mean = mean_since(&full.commit_latency_ns, &warm.commit_latency_ns);
    m.commit_latency_ns.count = d(full.commit_latency_ns.count, warm.commit_latency_ns.count);
    m.lock_waits = d(full.lock_waits, warm.lock_waits);
    m.deadlocks = d(full.deadlocks, warm.deadlocks);
    let (f, w) = (&full.stats, &warm.stats);
    m.stats = host::metrics::HostStats {
        committed: d(f.committed, w.committed),
        aborted: d(f.aborted, w.aborted),
        restarted: d(f.restarted, w.restarted),
        lock_waits: d(f.lock_waits, w.lock_waits),
        deadlocks: d(f.deadlocks, w.deadlocks),
        wait_die_deaths: d(f.wait_die_deaths, w.wait_die_deaths),
        buffer_full_restarts: d(f.buffer_full_restarts, w.buffer_full_restarts),
        buffer_full_waits: d(f.buffer_full_waits, w.buffer_full_waits),
        buffer_hits: d(f.buffer_hits, w.buffer_hits),
        buffer_misses: d(f.buffer_misses, w.buffer_misses),
        page_reads: d(f.page_reads, w.page_reads),
        page_writes: d(f.page_writes, w.page_writes),
        log_bytes: d(f.log_bytes, w.log_bytes),
        log_records: d(f.log_records, w.log_records),
        log_page_writes: d(f.log_page_writes, w.log_page_writes),
        log_page_reads: d(f.log_page_reads, w.log_page_reads),
        log_forces: d(f.log_forces, w.log_forces),
        checkpoints: d(f.checkpoints, w.checkpoints),
    };
    let accesses = m.stats.buffer_hits + m.stats.buffer_misses;
    m.buffer_hit_ratio = if accesses == 0 {
        0.0
    } else {
        m.stats.buffer_hits as f64 / accesses as f64
    };
    m.log_bytes = d(full.log_bytes, warm.log_bytes);
    m.log_pages = d(full.log_pages, warm.log_pages);
    m.nand_reads = d(full.nand_reads, warm.nand_reads);
    m.nand_programs = d(full.nand_programs, warm.nand_programs);
    m.nand_partial_programs = d(full.nand_partial_programs, warm.nand_partial_programs);
    m.nand_erases = d(full.nand_erases, warm.nand_erases);
    m.gc_time_ns = d(full.gc_time_ns, warm.gc_time_ns);
    m.array_busy_ns = d(full.array_busy_ns, warm.array_busy_ns);
    m.gc_share = if m.array_busy_ns == 0 {
        0.0
    } else {
        m.gc_time_ns as f64 / m.array_busy_ns as f64
    };
    for (k, v) in m.strategy_counters.iter_mut() {
        *v = v.saturating_sub(warm.strategy_counters.get(k).copied().unwrap_or(0));
    }
    m
}

/// One point from its aged device: run the host engine on it (after its warm-up, if the
/// preparation has one, measuring the window after it: `window`).
pub(crate) fn run_aged(cfg: &Config, a: Aged) -> Result<Res, String> {
    let cfg = host_cfg(cfg)?;
    let Aged {
        dev,
        aged_ns,
        aged_gc_erases,
        warmup,
    } = a;
    let before = dev.core.stats;
    let (run, warm) = if warmup > 0 {
        let (run, warm) =
            host::engine::run_with_snapshot(&cfg.host, &cfg.device(), dev, cfg.seed, warmup)
                .map_err(|e| e.to_string())?;
        let warm = warm.ok_or("internal: the run ended before its warm-up did")?;
        (run, Some(warm))
    } else {
        let run = host::engine::run_traced(&cfg.host, &cfg.device(), dev, cfg.seed, false, false)
            .map_err(|e| e.to_string())?;
        (run, None)
    };
    let d = &run.core.device;
    let st = &d.core.stats;
    Ok(Res {
        flags: FlagCounts {
            commit: st
                .commit_flag_programs
                .saturating_sub(before.commit_flag_programs),
            in_page: st
                .commit_flags_in_page
                .saturating_sub(before.commit_flags_in_page),
            gc: st.gc_flag_programs.saturating_sub(before.gc_flag_programs),
        },
        gc: GcCounts {
            copies: st
                .gc_page_migrations
                .saturating_sub(before.gc_page_migrations),
            erases: st.gc_erases.saturating_sub(before.gc_erases),
        },
        dram_bytes: d.dram_bytes().iter().map(|(_, b)| b).sum(),
        protocol_dram_bytes: d.protocol_dram_bytes(),
        aged_ns,
        aged_gc_erases,
        warmup_committed: warm.as_ref().map_or(0, |w| w.txns_committed),
        m: match &warm {
            Some(w) => window(&run.metrics, w),
            None => run.metrics,
        },
    })
}

pub fn run(scale: Scale, progress: &Progress) -> Result<Output, String> {
    run_plan(&Plan::of(scale), progress)
}

type Results = Vec<Result<Res, String>>;

fn get(r: &Results, i: usize) -> Result<&Res, String> {
    r[i].as_ref().map_err(|e| e.clone())
}

/// Where each point sits in the batch's results.
struct Pts<'a> {
    r: &'a Results,
    deltas: &'a [f64],
    max_cs: &'a [u32],
    other_frames: &'a [u32],
    i_fig15: usize,
    i_wal: usize,
    i_fig19: usize,
    i_fig18: usize,
    i_fig15_ablation: usize,
}

impl<'a> Pts<'a> {
    /// Device protocol `p` under `device-tx` at δ = `d`.
    fn dev(&self, d: f64, p: &str) -> Result<&'a Res, String> {
        let di = self
            .deltas
            .iter()
            .position(|&x| x == d)
            .ok_or("no such δ")?;
        let pi = DEVICE
            .iter()
            .position(|&x| x == p)
            .ok_or("no such protocol")?;
        get(self.r, di * DEVICE.len() + pi)
    }

    /// `cfc-ex` or `afc-ex` at max_c = `mc` (defaults otherwise).
    fn ext(&self, mc: u32, s: &str) -> Result<&'a Res, String> {
        let mi = self
            .max_cs
            .iter()
            .position(|&x| x == mc)
            .ok_or("no such max_c")?;
        get(self.r, self.i_fig15 + mi * 2 + usize::from(s == "afc-ex"))
    }

    /// An extended strategy or WAL with `f` buffer frames (defaults otherwise).
    fn frames(&self, f: u32, s: &str) -> Result<&'a Res, String> {
        if f == FRAMES {
            return match s {
                "wal" => get(self.r, self.i_wal),
                _ => self.ext(MAX_C, s),
            };
        }
        let fi = self
            .other_frames
            .iter()
            .position(|&x| x == f)
            .ok_or("no such buffer size")?;
        let si = EXTENDED
            .iter()
            .position(|&x| x == s)
            .ok_or("no such strategy")?;
        get(self.r, self.i_fig19 + fi * EXTENDED.len() + si)
    }

    /// An extended strategy or WAL on short (λ ≤ 10) or long transactions only.
    fn size(&self, long: bool, s: &str) -> Result<&'a Res, String> {
        let si = EXTENDED
            .iter()
            .position(|&x| x == s)
            .ok_or("no such strategy")?;
        get(
            self.r,
            self.i_fig18 + usize::from(long) * EXTENDED.len() + si,
        )
    }
}

fn claim(id: &str, claim: String, paper: &str, measured: String, v: Verdict, note: &str) -> Claim {
    Claim::of(PAPER, id, claim, paper, measured, v, note)
}

fn chart(title: &str, x: &str, y: &str, log_x: bool) -> Chart {
    Chart {
        title: title.into(),
        x_label: x.into(),
        y_label: y.into(),
        log_x,
        y_from_zero: true,
    }
}

pub(crate) fn run_plan(plan: &Plan, progress: &Progress) -> Result<Output, String> {
    let b = base(plan)?;
    let deltas = plan.deltas();
    let max_cs = plan.max_cs();
    let frames = plan.frames();
    // One batch of every point: the δ sweep (its 5 % runs measure recovery too), the max_c
    // sweep of the extended protocols, WAL at the defaults, and the buffer sweep.
    let mut jobs = Vec::new();
    for &d in &deltas {
        for p in DEVICE {
            let mut c = strat(&b, p);
            c.host.tpcc.delta_abort = d;
            c.host.measure_recovery = d == DELTA;
            jobs.push(Job {
                label: format!("flagcommit {p} δ={:.0}%", d * 100.0),
                cfg: c,
            });
        }
    }
    let i_fig15 = jobs.len();
    for &mc in &max_cs {
        for s in ["cfc-ex", "afc-ex"] {
            let mut c = strat(&b, s);
            c.host.max_c = mc;
            jobs.push(Job {
                label: format!("flagcommit {s} max_c={mc}"),
                cfg: c,
            });
        }
    }
    let i_wal = jobs.len();
    jobs.push(Job {
        label: "flagcommit wal".into(),
        cfg: strat(&b, "wal"),
    });
    let i_fig19 = jobs.len();
    let other_frames: Vec<u32> = frames.iter().copied().filter(|&f| f != FRAMES).collect();
    for &f in &other_frames {
        for s in EXTENDED {
            let mut c = strat(&b, s);
            c.host.buffer_frames = f;
            jobs.push(Job {
                label: format!("flagcommit {s} {f} frames"),
                cfg: c,
            });
        }
    }
    let i_fig18 = jobs.len();
    for long in [false, true] {
        for s in EXTENDED {
            let mut c = strat(&b, s);
            if long {
                c.host.tpcc.min_pages_written = SHORT_PAGES + 1;
            } else {
                c.host.tpcc.max_pages_written = SHORT_PAGES;
            }
            jobs.push(Job {
                label: format!(
                    "flagcommit {s} {} txns",
                    if long { "long" } else { "short" }
                ),
                cfg: c,
            });
        }
    }
    // Fig. 15's ablation (§5.3.1's second cause of the drop beyond max_c = 3): CFC_ex at the
    // largest max_c without merge reads (`host.fc_no_merge_reads`), against the same point
    // with them and WAL.
    let i_fig15_ablation = jobs.len();
    for s in ["cfc-ex", "afc-ex"] {
        let mut c = strat(&b, s);
        c.host.max_c = MAX_C_LARGE;
        c.host.fc_no_merge_reads = true;
        jobs.push(Job {
            label: no_merge_run(s),
            cfg: c,
        });
    }
    // Out-of-date versions left mapped (Fig. 18b's long transactions, Fig. 19b): CFC_ex (and
    // in quick AFC_ex) on long transactions, and in quick CFC_ex at the smallest and largest
    // buffer, with a new version taking its page's oldest reclaimable slot before a free one
    // (`host.fc_reuse_slots_first`), on the claims' aged device.
    let i_reuse = jobs.len();
    for (s, what) in reuse_points(plan) {
        let mut c = strat(&b, s);
        match what {
            ReusePoint::Long => c.host.tpcc.min_pages_written = SHORT_PAGES + 1,
            ReusePoint::Frames(f) => c.host.buffer_frames = frames_at(&frames, f),
        }
        c.host.fc_reuse_slots_first = true;
        jobs.push(Job {
            label: reuse_run(s, what, &frames),
            cfg: c,
        });
    }
    // Ablations of the suspected causes of the disagreements (`explain`), each changing one
    // thing against the runs of the claims it explains. CFC with its commit flag always a
    // separate partial program (§3.3's saving off), on the same aged device as CFC's own run.
    let i_flag_ablation = jobs.len();
    {
        let mut c = strat(&b, "cfc");
        c.protocol.cfc_flag_reprogram = true;
        jobs.push(Job {
            label: FLAG_RUN.into(),
            cfg: c,
        });
    }
    // The buffer's share of the database (Figs. 14, 18 and 19): Table 2's 512 frames against
    // its 20-warehouse database, here the same share of the plan's smaller database
    // (`Share`). Fig. 14's δ ends for the four device protocols (and CFC at the largest δ
    // not above 20 %), Fig. 18's short transactions and Fig. 19's buffer ends for CFC_ex and
    // AFC_ex, each with its buffer scaled to that share, on the claims' aged devices (the
    // ageing does not depend on the buffer, so these points share it).
    let share = match plan.ablation_warehouses {
        Some(w) => Some(Share::of(&b, plan.warehouses, w)?),
        None => None,
    };
    let (d_lo, d_hi, d_mid) = fig14_deltas(&deltas);
    let (f_lo, f_hi) = (frames[0], frames[frames.len() - 1]);
    let i_share = jobs.len();
    if let Some(sh) = &share {
        for d in [d_lo, d_hi] {
            for p in DEVICE {
                let mut c = strat(&b, p);
                c.host.tpcc.delta_abort = d;
                c.host.buffer_frames = sh.frames(FRAMES);
                jobs.push(Job {
                    label: sh.run(&format!("flagcommit {p} δ={:.0}%", d * 100.0), FRAMES),
                    cfg: c,
                });
            }
        }
        {
            let mut c = strat(&b, "cfc");
            c.host.tpcc.delta_abort = d_mid;
            c.host.buffer_frames = sh.frames(FRAMES);
            jobs.push(Job {
                label: sh.run(&format!("flagcommit cfc δ={:.0}%", d_mid * 100.0), FRAMES),
                cfg: c,
            });
        }
        for s in EXTENDED {
            let mut c = strat(&b, s);
            c.host.tpcc.max_pages_written = SHORT_PAGES;
            c.host.buffer_frames = sh.frames(FRAMES);
            jobs.push(Job {
                label: sh.run(&format!("flagcommit {s} short txns"), FRAMES),
                cfg: c,
            });
        }
        for f in [f_lo, f_hi] {
            for s in ["cfc-ex", "afc-ex"] {
                let mut c = strat(&b, s);
                c.host.buffer_frames = sh.frames(f);
                jobs.push(Job {
                    label: sh.run(&format!("flagcommit {s}"), f),
                    cfg: c,
                });
            }
        }
    }
    // The old preparation (`Prep::Aged`): the four device protocols at δ = 5 %, then CFC_ex,
    // AFC_ex and WAL at the defaults (max_c = 3, 512 frames), with the database unmapped,
    // cold data beyond CFC_ex's extent, a cold buffer pool and no warm-up, against their own
    // runs on the loaded, aged, warmed-up device. They all start from one device.
    let old_jobs: Vec<Job> = DEVICE
        .iter()
        .chain(EXTENDED.iter())
        .map(|p| Job {
            label: old_run(p),
            cfg: strat(&b, p),
        })
        .collect();
    // Recovery without the cold data: AFC and CFC at δ = 5 % on an empty device, and the
    // database's scale: CFC_ex, AFC_ex and WAL at the plan's and the paper's warehouses on
    // one empty device large enough for both (`Prep::Fresh`).
    let mut fresh_jobs = Vec::new();
    for p in ["afc", "cfc"] {
        let mut c = strat(&b, p);
        c.host.measure_recovery = true;
        fresh_jobs.push(Job {
            label: fresh_run(p),
            cfg: c,
        });
    }
    let wh_ablation = match plan.ablation_warehouses {
        Some(w) => {
            let big = large_device(&b, w)?;
            for wh in [plan.warehouses, w] {
                for s in EXTENDED {
                    let mut c = strat(&big, s);
                    c.host.tpcc.warehouses = wh;
                    fresh_jobs.push(Job {
                        label: wh_run(s, wh, big.nand.blocks_per_plane),
                        cfg: c,
                    });
                }
            }
            // Table 3's device size: the four device protocols at δ = 5 % on the same
            // larger empty device.
            for p in DEVICE {
                fresh_jobs.push(Job {
                    label: mem_run(p, big.nand.blocks_per_plane),
                    cfg: strat(&big, p),
                });
            }
            // Figs. 15 and 16 at both scales on the same device: CFC_ex and AFC_ex at
            // max_c = 2 (max_c = 3 is above), and CFC and AFC at the paper's warehouses
            // (the plan's are the Table 3 runs just above).
            for wh in [plan.warehouses, w] {
                for s in ["cfc-ex", "afc-ex"] {
                    let mut c = strat(&big, s);
                    c.host.tpcc.warehouses = wh;
                    c.host.max_c = 2;
                    fresh_jobs.push(Job {
                        label: wh_run(&format!("{s} max_c=2"), wh, big.nand.blocks_per_plane),
                        cfg: c,
                    });
                }
            }
            for p in ["cfc", "afc"] {
                let mut c = strat(&big, p);
                c.host.tpcc.warehouses = w;
                fresh_jobs.push(Job {
                    label: wh_run(&format!("{p} δ=5%"), w, big.nand.blocks_per_plane),
                    cfg: c,
                });
            }
            Some((w, big.nand.blocks_per_plane))
        }
        None => None,
    };
    // The PostgreSQL trace (§5.1's workload): the device protocols under device-tx and
    // CFC_ex, AFC_ex and WAL, each on its own preparation (`prep_of`).
    let trace_jobs: Vec<Job> = if plan.trace_transactions > 0 {
        let tb = trace_base(plan, &b)?;
        DEVICE
            .iter()
            .chain(EXTENDED.iter())
            .map(|s| {
                let mut c = strat(&tb, s);
                c.host.measure_recovery = DEVICE.contains(s);
                Job {
                    label: trace_run(s),
                    cfg: c,
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    progress.plan(jobs.len() + old_jobs.len() + fresh_jobs.len() + trace_jobs.len());
    // Each call names its task (`remote::PointTask`), so the points also run on another
    // engine; the closures are the tasks' functions. A point of a shared group gives the
    // same result on a device of its own (`prepared_point`), which is what a remote task
    // builds.
    let own = |_: &Config| PointTask::FlagCommit;
    let prepared = |prep| move |_: &Config| PointTask::FlagCommitPrepared { prep };
    let r = remote::each(jobs, progress, own, |j| {
        run_each_shared(j, progress, aged_key, aged, copy_aged, run_aged)
    });
    let r_old = remote::each(old_jobs, progress, prepared(Prep::Aged), |j| {
        run_each_shared(
            j,
            progress,
            |c| aged_key_as(c, Prep::Aged),
            |c| aged_as(c, Prep::Aged),
            copy_aged,
            run_aged,
        )
    });
    let r_trace = remote::each(trace_jobs, progress, own, |j| {
        run_each_shared(j, progress, aged_key, aged, copy_aged, run_aged)
    });
    let r_fresh = remote::each(fresh_jobs, progress, prepared(Prep::Fresh), |j| {
        run_each(j, progress, |c| prepared_point(c, Prep::Fresh))
    });
    let x = Pts {
        r: &r,
        deltas: &deltas,
        max_cs: &max_cs,
        other_frames: &other_frames,
        i_fig15,
        i_wal,
        i_fig19,
        i_fig18,
        i_fig15_ablation,
    };
    let mut out = Output::default();
    let ab = Abl {
        flag: get(&r, i_flag_ablation)?,
        reuse: reuse_points(plan)
            .into_iter()
            .enumerate()
            .map(|(i, (s, w))| Ok((s, w, get(&r, i_reuse + i)?)))
            .collect::<Result<_, String>>()?,
        old: (0..DEVICE.len() + EXTENDED.len())
            .map(|i| get(&r_old, i))
            .collect::<Result<_, _>>()?,
        fresh_afc: get(&r_fresh, 0)?,
        fresh_cfc: get(&r_fresh, 1)?,
        wh: match wh_ablation {
            Some((w, bpp)) => Some(WhPair {
                warehouses: [plan.warehouses, w],
                blocks_per_plane: bpp,
                runs: (0..2 * EXTENDED.len())
                    .map(|i| get(&r_fresh, 2 + i))
                    .collect::<Result<_, _>>()?,
                memory: (0..DEVICE.len())
                    .map(|i| get(&r_fresh, 2 + 2 * EXTENDED.len() + i))
                    .collect::<Result<_, _>>()?,
                max_c2: (0..4)
                    .map(|i| get(&r_fresh, 2 + 2 * EXTENDED.len() + DEVICE.len() + i))
                    .collect::<Result<_, _>>()?,
                device_hi: (0..2)
                    .map(|i| get(&r_fresh, 6 + 2 * EXTENDED.len() + DEVICE.len() + i))
                    .collect::<Result<_, _>>()?,
            }),
            None => None,
        },
        share: match &share {
            Some(sh) => {
                let n = 2 * DEVICE.len() + 1 + EXTENDED.len() + 4;
                Some(ShareRuns {
                    share: sh.clone(),
                    deltas: [d_lo, d_hi, d_mid],
                    frames: [f_lo, f_hi],
                    runs: (0..n)
                        .map(|i| get(&r, i_share + i))
                        .collect::<Result<_, _>>()?,
                })
            }
            None => None,
        },
    };
    // A CSV of every point.
    #[derive(Serialize, Default)]
    struct PointRow {
        figure: String,
        strategy: String,
        protocol: String,
        delta_pct: Fixed<0>,
        max_c: u32,
        buffer_frames: u32,
        committed: u64,
        aborted: u64,
        restarted: u64,
        throughput_per_s: Fixed<2>,
        txn_time_ms_mean: Fixed<3>,
        commit_ms_mean: Fixed<3>,
        gc_share: Fixed<4>,
        gc_time_ms: Fixed<1>,
        gc_per_commit_ms: Fixed<3>,
        log_pages: u64,
        nand_programs: u64,
        nand_partial_programs: u64,
        nand_erases: u64,
        /// Empty where the point measured no recovery.
        recovery_ms: Option<Fixed<3>>,
        recovery_pages_read: Option<u64>,
        dram_bytes: u64,
        protocol_dram_bytes: u64,
        aged_ms: Fixed<1>,
        aged_gc_erases: u64,
    }
    let mut rows = Vec::new();
    let mut row = |fig: &str, c: &Res, d: f64, mc: u32, f: u32| {
        let m = &c.m;
        rows.push(PointRow {
            figure: fig.to_string(),
            strategy: m.strategy.clone(),
            protocol: m.protocol.clone(),
            delta_pct: Fixed(d * 100.0),
            max_c: mc,
            buffer_frames: f,
            committed: m.txns_committed,
            aborted: m.txns_aborted,
            restarted: m.txns_restarted,
            throughput_per_s: Fixed(m.throughput_per_s),
            txn_time_ms_mean: Fixed(m.txn_time_ns.mean / 1e6),
            commit_ms_mean: Fixed(m.commit_latency_ns.mean / 1e6),
            gc_share: Fixed(m.gc_share),
            gc_time_ms: Fixed(m.gc_time_ns as f64 / 1e6),
            gc_per_commit_ms: Fixed(c.gc_per_commit_ns() / 1e6),
            log_pages: m.log_pages,
            nand_programs: m.nand_programs,
            nand_partial_programs: m.nand_partial_programs,
            nand_erases: m.nand_erases,
            recovery_ms: m.recovery.map(|x| Fixed(x.time_ns as f64 / 1e6)),
            recovery_pages_read: m.recovery.map(|x| x.pages_read),
            dram_bytes: c.dram_bytes,
            protocol_dram_bytes: c.protocol_dram_bytes,
            aged_ms: Fixed(c.aged_ns as f64 / 1e6),
            aged_gc_erases: c.aged_gc_erases,
        });
    };
    for &d in &deltas {
        for p in DEVICE {
            row("12-14", x.dev(d, p)?, d, 0, FRAMES);
        }
    }
    for &mc in &max_cs {
        for s in ["cfc-ex", "afc-ex"] {
            row("15-16", x.ext(mc, s)?, DELTA, mc, FRAMES);
        }
    }
    row("16-17", get(&r, i_wal)?, DELTA, 0, FRAMES);
    for &f in &other_frames {
        for s in EXTENDED {
            row("19", x.frames(f, s)?, DELTA, MAX_C, f);
        }
    }
    for (long, fig) in [(false, "18-short"), (true, "18-long")] {
        for s in EXTENDED {
            row(fig, x.size(long, s)?, DELTA, MAX_C, FRAMES);
        }
    }
    // The slot-reuse ablation's points (`host.fc_reuse_slots_first`).
    for (_, what, r) in &ab.reuse {
        match what {
            ReusePoint::Long => row("18-long slots reused first", r, DELTA, MAX_C, FRAMES),
            ReusePoint::Frames(l) => {
                let f = frames_at(&frames, *l);
                row("19 slots reused first", r, DELTA, MAX_C, f)
            }
        }
    }
    out.csvs
        .push(("flagcommit_points.csv".into(), csv_of(&rows)?));

    fig12_13(&mut out, &x)?;
    fig14(&mut out, &deltas, &x)?;
    fig15(&mut out, &max_cs, &x)?;
    fig16_17(&mut out, &x)?;
    fig18(&mut out, &x)?;
    fig19(&mut out, &frames, &x)?;
    if !r_trace.is_empty() {
        let runs: Vec<&Res> = (0..r_trace.len())
            .map(|i| get(&r_trace, i))
            .collect::<Result<_, _>>()?;
        pg_trace(&mut out, plan, &runs)?;
    }
    explain(&mut out, plan, &b, &x, &ab)?;

    let g = b.nand.geometry();
    let aged = x.dev(DELTA, "cfc")?;
    out.notes.push(format!(
        "Device: the `flagcommit` preset (Table 2: 8 packages × 2 dies × 2 planes, 2 KiB pages, 64 pages per block, read 0.08 ms, program and partial program 0.2 ms, NOP 2, erase 1.5 ms, 10 % over-provisioning, GC at 5 % free, wear-aware victims) with {} blocks per plane: {:.2} GiB{}. Tag data mode. §5.2's points (device-tx over CFC, AFC, BPCC, SCC) start as §5.1 describes: the database's {} device pages are on the device (loaded before the run), the rest of the logical space holds cold data, and the database's own pages are overwritten at random until GC runs (the device's physical pages not holding data plus a quarter of the database's pages), then a warm-up of 1/{WARMUP_DIVISOR} of the point's transactions ({} committed in CFC's run at δ = 5 %; §5.1: 30 minutes of warm-up before 4 hours) fills the buffer pool and ages the device with the workload's own writes; only the window after it is measured (the preparation took {:.1} s of simulated time and is not counted). §5.3's points (CFC_ex, AFC_ex, WAL over the plain FTL) start the same way from one shared device: the same database on the device (CFC_ex / AFC_ex read each loaded page as its version slot 0 holding the page as loaded), the rest of the {} pages CFC_ex may use at the largest max_c ({FC_VERSIONS} version slots per DB page, its master and log) unmapped, cold data beyond them, the database's own pages overwritten at random until GC runs, and the same warm-up ({} committed in CFC_ex's run at max_c = {MAX_C}). The runs labelled `old preparation` (§5.2's points at δ = 5 %, CFC_ex, AFC_ex and WAL at the defaults) start instead with cold data beyond CFC_ex's extent overwritten at random, the database unmapped (a page's first read costs no flash read) and every transaction measured from a cold pool.",
        plan.blocks_per_plane,
        g.capacity_bytes() as f64 / f64::from(1u32 << 30),
        if plan.blocks_per_plane < 8192 { " (the paper's is 32 GB)" } else { "" },
        own_extent(&strat(&b, "cfc"), g.page_bytes)?,
        aged.warmup_committed,
        aged.aged_ns as f64 / 1e9,
        host_extent(&strat(&b, "cfc-ex"), g.page_bytes)?,
        x.ext(MAX_C, "cfc-ex")?.warmup_committed,
    ));
    out.notes.push(format!(
        "Workload: the host engine's TPC-C (45/43/4/4/4 mix, NURand, 1 % New-Order rollbacks) with {} warehouses{}, {} clients, δ = 5 % extra rollbacks unless swept, 8 KiB DB pages over 2 KiB flash pages, 50-byte log records, {FRAMES}-frame LRU buffer unless swept, wait-for-graph deadlock detection with the youngest as victim, {} transactions per point (the paper: a 30-minute warm-up and a 4-hour trace; here every point warms up on 1/{WARMUP_DIVISOR} of them, see Device). §5.2's runs are `device-tx` (force at commit through the device protocol, page-level locks, SCC/BPCC's last shadow page pinned in the buffer); §5.3's are `cfc-ex` / `afc-ex` (no-force, redo-only log, record-level locks, max_c = 3 unless swept) and `wal` (ARIES-style, steal / no-force, record-level locks) over the plain FTL; the log area is sized so no run needs truncating it ({} pages; docs/REPRODUCTION-RULES.md). The paper ran a trace of PostgreSQL's data accesses; the host engine generates the transactions itself, so locking and buffering happen in this engine, not PostgreSQL's. The `flagcommit-pg-…` claims replay a PostgreSQL 15 TPC-C trace instead (Figs. 12, 13, 14 and 16; their notes say how).",
        plan.warehouses,
        if plan.warehouses < 20 { " (the paper: 20)" } else { "" },
        plan.clients,
        plan.transactions,
        plan.log_pages,
    ));
    Ok(out)
}

/// The trace series: Figs. 12, 13 and 16 again on the PostgreSQL trace (`trace_run`
/// points, `DEVICE` then `EXTENDED` order), as claims of their own (`flagcommit-pg-…`);
/// Fig. 14's δ sweep has no trace counterpart and says so from the run.
fn pg_trace(out: &mut Output, plan: &Plan, runs: &[&Res]) -> Result<(), String> {
    let at = |s: &str| -> Result<&Res, String> {
        DEVICE
            .iter()
            .chain(EXTENDED.iter())
            .position(|&x| x == s)
            .and_then(|i| runs.get(i).copied())
            .ok_or_else(|| format!("no trace run of {s}"))
    };
    let (cfc, afc, bpcc, scc) = (at("cfc")?, at("afc")?, at("bpcc")?, at("scc")?);
    let (cx, ax, wal) = (at("cfc-ex")?, at("afc-ex")?, at("wal")?);
    let setup = format!(
        "Workload: PostgreSQL 15's TPC-C as recorded in `{TRACE}` (docs/TRACES.md: 1 warehouse, 10 clients, 4,000 transactions, its rollbacks PostgreSQL's own), the first {} transactions replayed by {} clients (the paper: DBT-2 on PostgreSQL 8.4, 20 warehouses, 50 clients); device {} blocks per plane. CFC, AFC, BPCC and SCC run under device-tx, CFC_ex, AFC_ex and WAL over the plain FTL, all on the loaded, aged device with a warm-up of 1/{WARMUP_DIVISOR} of the transactions ({} committed before the window in CFC's run). The trace's pages are page-locked, so record-level locking is page-level here.",
        plan.trace_transactions,
        plan.clients,
        plan.trace_blocks_per_plane.unwrap_or(plan.blocks_per_plane),
        cfc.warmup_committed,
    );
    for (sfx, who, ws, vs, vss, paper) in FIG12A {
        let (r, vr) = (at(ws)?, at(vss)?);
        let g = r.tput() / vr.tput() - 1.0;
        out.claims.push(claim(
            &format!("flagcommit-pg-{sfx}"),
            format!(
                "On the PostgreSQL trace: {who} outperforms {vs} by {:.0} % in transaction throughput (Fig. 12a)",
                paper * 100.0
            ),
            &pct(paper),
            format!("{} ({:.1} vs {:.1} tx/s)", pct(g), r.tput(), vr.tput()),
            Verdict::change(paper, g),
            &setup,
        ));
    }
    let gc_note = format!(
        "GC share is the GC's share of the flash arrays' busy time in the measured window: CFC {:.1} %, AFC {:.1} %, BPCC {:.1} %, SCC {:.1} %. {setup}",
        cfc.m.gc_share * 100.0,
        afc.m.gc_share * 100.0,
        bpcc.m.gc_share * 100.0,
        scc.m.gc_share * 100.0
    );
    for (sfx, who, ws, bound) in FIG13A_GC_SHARE {
        let r = at(ws)?;
        out.claims.push(claim(
            &format!("flagcommit-pg-{sfx}"),
            format!(
                "On the PostgreSQL trace: GC cost is over {:.0} % of total execution cost for {who} (Fig. 13a)",
                bound * 100.0
            ),
            &format!("> {:.0} %", bound * 100.0),
            format!("{:.1} %", r.m.gc_share * 100.0),
            Verdict::qualitative(r.m.gc_share > bound),
            &gc_note,
        ));
    }
    for (sfx, vs, vss, paper) in FIG13A_AFC_GC {
        let vr = at(vss)?;
        let g = afc.m.gc_time_ns as f64 / (vr.m.gc_time_ns.max(1)) as f64 - 1.0;
        out.claims.push(claim(
            &format!("flagcommit-pg-{sfx}"),
            format!(
                "On the PostgreSQL trace: AFC needs {:.0} % less GC time than {vs} (Fig. 13a)",
                -paper * 100.0
            ),
            &pct(paper),
            format!(
                "{} ({:.0} vs {:.0} ms)",
                pct(g),
                afc.m.gc_time_ns as f64 / 1e6,
                vr.m.gc_time_ns as f64 / 1e6
            ),
            Verdict::change(paper, g),
            &gc_note,
        ));
    }
    let rec = |r: &Res| r.m.recovery.map_or(f64::NAN, |x| x.time_ns as f64);
    let pages = |r: &Res| r.m.recovery.map_or(0, |x| x.pages_read);
    let (ra, rc, rb, rs) = (rec(afc), rec(cfc), rec(bpcc), rec(scc));
    let rec_note = format!(
        "Recovery after the run on the loaded device: the protocol's recovery, then device-tx reading the trace's database back (pages read: AFC {}, CFC {}, BPCC {}, SCC {}). \"Much longer\" is at least the magnitude band's factor 2, \"comparable\" within [0.5, 2]. {setup}",
        pages(afc),
        pages(cfc),
        pages(bpcc),
        pages(scc)
    );
    let ms = |x: f64| format!("{:.1} ms", x / 1e6);
    out.claims.push(claim(
        "flagcommit-pg-fig13b-afc-longest",
        "On the PostgreSQL trace: AFC has a much longer recovery time than CFC, BPCC and SCC (Fig. 13b)".into(),
        "AFC ≫ CFC, BPCC, SCC (no number)",
        format!("AFC {}, CFC {}, BPCC {}, SCC {}", ms(ra), ms(rc), ms(rb), ms(rs)),
        Verdict::qualitative(ra >= MAGNITUDE_HIGH * rc.max(rb).max(rs)),
        &rec_note,
    ));
    let comparable = |a: f64, b: f64| (MAGNITUDE_LOW..=MAGNITUDE_HIGH).contains(&(a / b));
    out.claims.push(claim(
        "flagcommit-pg-fig13b-cfc-comparable",
        "On the PostgreSQL trace: CFC achieves recovery comparable to BPCC and SCC (Fig. 13b)"
            .into(),
        "CFC ≈ BPCC ≈ SCC (no number)",
        format!("CFC ÷ BPCC {:.2}, CFC ÷ SCC {:.2}", rc / rb, rc / rs),
        Verdict::qualitative(comparable(rc, rb) && comparable(rc, rs)),
        &rec_note,
    ));
    let (committed, aborted): (u64, u64) = DEVICE
        .iter()
        .map(|p| at(p).map(|r| (r.m.txns_committed, r.m.txns_aborted)))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .fold((0, 0), |(c, a), (x, y)| (c + x, a + y));
    out.claims.push(claim(
        "flagcommit-pg-fig14",
        "On the PostgreSQL trace: the throughput of CFC, AFC, BPCC and SCC as the abort ratio δ goes from 1 to 50 % (Fig. 14)".into(),
        "a sweep over δ",
        format!(
            "not run: the trace's abort ratio is fixed by the recording ({aborted} rolled back of {} ended transactions over the four runs' windows, {:.2} %)",
            committed + aborted,
            aborted as f64 / (committed + aborted).max(1) as f64 * 100.0
        ),
        Verdict::not_modelled(),
        &format!("The trace holds the rollbacks PostgreSQL ran; the paper simulated extra rollback commands in its traces to sweep δ, which a replay of recorded page accesses cannot do without inventing which pages an extra rollback would have written. Fig. 14 is tested on the engine's TPC-C only. {setup}"),
    ));
    let note16 = format!(
        "{} {setup}",
        restarts_vs_wal(&[("CFC_ex", cx), ("AFC_ex", ax)], wal)
    );
    for (sfx, an, aw, bn, bw, paper) in FIG16A {
        let (a, bb) = (at(aw)?, at(bw)?);
        let g = a.tput() / bb.tput() - 1.0;
        out.claims.push(claim(
            &format!("flagcommit-pg-{sfx}"),
            format!(
                "On the PostgreSQL trace: {an} outperforms {bn} by {:.0} % in transaction throughput (Fig. 16a)",
                paper * 100.0
            ),
            &pct(paper),
            format!("{} ({:.1} vs {:.1} tx/s)", pct(g), a.tput(), bb.tput()),
            Verdict::change(paper, g),
            &note16,
        ));
    }
    Ok(())
}

/// Figs. 12 and 13 and Table 3: the device protocols at δ = 5 %.
fn fig12_13(out: &mut Output, x: &Pts) -> Result<(), String> {
    let at = |p: &str| x.dev(DELTA, p);
    let (cfc, afc, bpcc, scc) = (at("cfc")?, at("afc")?, at("bpcc")?, at("scc")?);
    let cats: Vec<String> = DEVICE.iter().map(|s| s.to_uppercase()).collect();
    let bars = |name: &str, f: &dyn Fn(&Res) -> f64| -> Result<Series, String> {
        Ok(Series {
            name: name.into(),
            points: DEVICE
                .iter()
                .enumerate()
                .map(|(i, p)| at(p).map(|r| (i as f64, f(r))))
                .collect::<Result<_, _>>()?,
        })
    };
    out.svgs.push((
        "flagcommit_fig12_throughput.svg".into(),
        bar_chart(
            &chart(
                "Flag Commit Fig. 12a: throughput",
                "protocol",
                "committed transactions / s",
                false,
            ),
            &cats,
            &[bars("throughput", &|r| r.tput())?],
        ),
    ));
    out.svgs.push((
        "flagcommit_fig13_gc.svg".into(),
        bar_chart(
            &chart(
                "Flag Commit Fig. 13a: GC share of flash busy time",
                "protocol",
                "GC share",
                false,
            ),
            &cats,
            &[bars("GC share", &|r| r.m.gc_share)?],
        ),
    ));
    out.svgs.push((
        "flagcommit_fig13_recovery.svg".into(),
        bar_chart(
            &chart(
                "Flag Commit Fig. 13b: recovery time",
                "protocol",
                "simulated recovery time (ms)",
                false,
            ),
            &cats,
            &[bars("recovery", &|r| {
                r.m.recovery.map_or(f64::NAN, |x| x.time_ns as f64 / 1e6)
            })?],
        ),
    ));
    let tnote = format!("Throughput is committed transactions per simulated second of the run on the aged device. {DEVICE_TX_NOTE}");
    let tnote = tnote.as_str();
    for (sfx, who, ws, vs, vss, paper) in FIG12A {
        let (r, vr) = (at(ws)?, at(vss)?);
        let g = r.tput() / vr.tput() - 1.0;
        out.claims.push(claim(
            &format!("flagcommit-{sfx}"),
            format!(
                "{who} outperforms {vs} by {:.0} % in transaction throughput (Fig. 12a)",
                paper * 100.0
            ),
            &pct(paper),
            format!("{} ({:.1} vs {:.1} tx/s)", pct(g), r.tput(), vr.tput()),
            Verdict::change(paper, g),
            tnote,
        ));
    }
    let t = |r: &Res| r.m.txn_time_ns.mean;
    out.claims.push(claim(
        "flagcommit-fig12b-exec-time",
        "Transaction execution time follows the same trend: AFC and CFC shorter than BPCC and SCC (Fig. 12b)".into(),
        "AFC, CFC < BPCC, SCC (no number)",
        format!(
            "mean ms: AFC {:.2}, CFC {:.2}, BPCC {:.2}, SCC {:.2}",
            t(afc) / 1e6,
            t(cfc) / 1e6,
            t(bpcc) / 1e6,
            t(scc) / 1e6
        ),
        Verdict::qualitative(t(afc).max(t(cfc)) < t(bpcc).min(t(scc))),
        &format!("Tested as stated on the mean execution time (first start to commit ack, restarts included). {DEVICE_TX_NOTE}"),
    ));
    let gc_note = format!("GC share is the GC's share of the flash arrays' busy time during the run (docs/METRICS.md); the paper's is GC cost over total execution cost. Both count erases and page migrations. {DEVICE_TX_NOTE}");
    let gc_note = gc_note.as_str();
    for (sfx, who, ws, bound) in FIG13A_GC_SHARE {
        let r = at(ws)?;
        out.claims.push(claim(
            &format!("flagcommit-{sfx}"),
            format!(
                "GC cost is over {:.0} % of total execution cost for {who} (Fig. 13a)",
                bound * 100.0
            ),
            &format!("> {:.0} %", bound * 100.0),
            format!("{:.1} %", r.m.gc_share * 100.0),
            Verdict::qualitative(r.m.gc_share > bound),
            &format!("Tested as stated (a bound). {gc_note}"),
        ));
    }
    for (sfx, vs, vss, paper) in FIG13A_AFC_GC {
        let vr = at(vss)?;
        let g = afc.m.gc_time_ns as f64 / (vr.m.gc_time_ns.max(1)) as f64 - 1.0;
        out.claims.push(claim(
            &format!("flagcommit-{sfx}"),
            format!(
                "AFC needs {:.0} % less GC time than {vs} (Fig. 13a)",
                -paper * 100.0
            ),
            &pct(paper),
            format!(
                "{} ({:.0} vs {:.0} ms over the same number of transactions)",
                pct(g),
                afc.m.gc_time_ns as f64 / 1e6,
                vr.m.gc_time_ns as f64 / 1e6
            ),
            Verdict::change(paper, g),
            gc_note,
        ));
    }
    let rec = |r: &Res| r.m.recovery.map_or(f64::NAN, |x| x.time_ns as f64);
    let (ra, rc, rb, rs) = (rec(afc), rec(cfc), rec(bpcc), rec(scc));
    let rec_note = format!("Recovery is simulated: a power cut at the end of the run, then the device protocol's own recovery on the loaded, aged device (scans and flag-chain reads, reads overlapped across planes) and the host's restart. \"Much longer\" is read as at least the magnitude band's factor 2; \"comparable\" as within it ([0.5, 2]). Every protocol's device recovery scans the device's blocks and AFC's flag-chain reads come on top of that scan. Measured: AFC's recovery is {:.2}× the longest of CFC's, BPCC's and SCC's.", ra / rc.max(rb).max(rs).max(1.0));
    let rec_note = rec_note.as_str();
    let ms = |x: f64| format!("{:.1} ms", x / 1e6);
    out.claims.push(claim(
        "flagcommit-fig13b-afc-longest",
        "AFC has a much longer recovery time than CFC, BPCC and SCC (Fig. 13b)".into(),
        "AFC ≫ CFC, BPCC, SCC (no number)",
        format!(
            "AFC {}, CFC {}, BPCC {}, SCC {}",
            ms(ra),
            ms(rc),
            ms(rb),
            ms(rs)
        ),
        Verdict::qualitative(ra >= MAGNITUDE_HIGH * rc.max(rb).max(rs)),
        rec_note,
    ));
    let comparable = |a: f64, b: f64| (MAGNITUDE_LOW..=MAGNITUDE_HIGH).contains(&(a / b));
    out.claims.push(claim(
        "flagcommit-fig13b-cfc-comparable",
        "CFC achieves recovery comparable to BPCC and SCC (Fig. 13b)".into(),
        "CFC ≈ BPCC ≈ SCC (no number)",
        format!("CFC ÷ BPCC {:.2}, CFC ÷ SCC {:.2}", rc / rb, rc / rs),
        Verdict::qualitative(comparable(rc, rb) && comparable(rc, rs)),
        rec_note,
    ));

    // Table 3.
    let mb = |r: &Res| r.dram_bytes as f64 / 1e6;
    #[derive(Serialize, Default)]
    struct MemoryRow {
        protocol: &'static str,
        dram_bytes: u64,
        protocol_dram_bytes: u64,
    }
    let mut rows = Vec::new();
    for p in DEVICE {
        let r = at(p)?;
        rows.push(MemoryRow {
            protocol: p,
            dram_bytes: r.dram_bytes,
            protocol_dram_bytes: r.protocol_dram_bytes,
        });
    }
    out.csvs
        .push(("flagcommit_table3_memory.csv".into(), csv_of(&rows)?));
    let mem_note = "Controller DRAM at the end of the run: the FTL's tables (mapping, reverse map, page flags, block table) plus the protocol's own; both scale with the device (the quick device is 16× smaller than the paper's 32 GB), so absolute figures compare only at full scale. The paper's CFC/AFC saving comes partly from chaining by physical address, which shrinks the direct map; this FTL keeps one mapping table for every protocol.";
    for (id, who, r, paper) in [
        ("flagcommit-table3-cfc-vs-bpcc", "BPCC", bpcc, 63.10 - 59.88),
        ("flagcommit-table3-cfc-vs-scc", "SCC", scc, 60.24 - 59.88),
    ] {
        let saved = mb(r) - mb(cfc).max(mb(afc));
        out.claims.push(claim(
            id,
            format!("CFC and AFC need {paper:.2} MB less memory than {who} (Table 3)"),
            &format!("{paper:.2} MB"),
            format!(
                "{saved:.3} MB (CFC {:.3}, AFC {:.3}, {who} {:.3} MB)",
                mb(cfc),
                mb(afc),
                mb(r)
            ),
            Verdict::value(paper, saved),
            mem_note,
        ));
    }
    out.claims.push(claim(
        "flagcommit-table3-cfc-total",
        "CFC needs 59.88 MB of memory for its data structures on the 32 GB device (Table 3)".into(),
        "59.88 MB",
        format!("{:.2} MB", mb(cfc)),
        Verdict::value(59.88, mb(cfc)),
        mem_note,
    ));
    for (id, name, r, paper) in [
        ("flagcommit-table3-afc-total", "AFC", afc, 59.88),
        ("flagcommit-table3-bpcc-total", "BPCC", bpcc, 63.10),
        ("flagcommit-table3-scc-total", "SCC", scc, 60.24),
    ] {
        out.claims.push(claim(
            id,
            format!("{name} needs {paper:.2} MB of memory for its data structures on the 32 GB device (Table 3)"),
            &format!("{paper:.2} MB"),
            format!("{:.2} MB", mb(r)),
            Verdict::value(paper, mb(r)),
            mem_note,
        ));
    }
    Ok(())
}

/// Fig. 14: the δ sweep.
fn fig14(out: &mut Output, deltas: &[f64], x: &Pts) -> Result<(), String> {
    let at = |d: f64, p: &str| x.dev(d, p);
    let series = |f: &dyn Fn(&Res) -> f64| -> Result<Vec<Series>, String> {
        DEVICE
            .iter()
            .map(|p| {
                Ok(Series {
                    name: p.to_uppercase(),
                    points: deltas
                        .iter()
                        .map(|&d| at(d, p).map(|r| (d * 100.0, f(r))))
                        .collect::<Result<_, String>>()?,
                })
            })
            .collect()
    };
    out.svgs.push((
        "flagcommit_fig14a_throughput.svg".into(),
        line_chart(
            &chart(
                "Flag Commit Fig. 14a: throughput vs δ",
                "abort ratio δ (%)",
                "committed transactions / s",
                false,
            ),
            &series(&|r| r.tput())?,
        ),
    ));
    out.svgs.push((
        "flagcommit_fig14b_gc.svg".into(),
        line_chart(
            &chart(
                "Flag Commit Fig. 14b: GC per committed transaction",
                "abort ratio δ (%)",
                "GC ms / committed transaction",
                false,
            ),
            &series(&|r| r.gc_per_commit_ns() / 1e6)?,
        ),
    ));
    let (lo, hi) = (deltas[0], deltas[deltas.len() - 1]);
    let t = |d: f64, p: &str| at(d, p).map(|r| r.tput());
    let gap = |d: f64, p: &str| -> Result<f64, String> { Ok(t(d, "cfc")? / t(d, p)? - 1.0) };
    let note = format!("Throughput gap = CFC's committed transactions per second ÷ the other's − 1 at the same δ. {DEVICE_TX_NOTE}");
    let note = note.as_str();
    for (vs, p, a, bb) in [("BPCC", "bpcc", 0.12, 0.47), ("SCC", "scc", 0.77, 1.53)] {
        for (d, paper, end) in [(lo, a, "low"), (hi, bb, "high")] {
            let g = gap(d, p)?;
            out.claims.push(claim(
                &format!("flagcommit-fig14-cfc-vs-{p}-{end}"),
                format!(
                    "CFC's throughput gap over {vs} is {:.0} % at δ = {:.0} % (Fig. 14a)",
                    paper * 100.0,
                    d * 100.0
                ),
                &pct(paper),
                pct(g),
                Verdict::change(paper, g),
                note,
            ));
        }
        let (g0, g1) = (gap(lo, p)?, gap(hi, p)?);
        out.claims.push(claim(
            &format!("flagcommit-fig14-cfc-vs-{p}-grows"),
            format!("CFC's improvement over {vs} grows as δ increases from 1 to 50 % (Fig. 14a)"),
            "grows (12 → 47 % / 77 → 153 %)",
            format!("{} → {}", pct(g0), pct(g1)),
            Verdict::qualitative(g1 > g0),
            "Tested as stated: the gap at the highest δ exceeds the gap at the lowest.",
        ));
    }
    // Where CFC first reaches AFC.
    let cross = deltas
        .iter()
        .copied()
        .map(|d| Ok((d, t(d, "cfc")? >= t(d, "afc")?)))
        .collect::<Result<Vec<_>, String>>()?;
    let first = cross.iter().find(|(_, c)| *c).map(|(d, _)| *d);
    let below_all = cross.iter().all(|(_, c)| *c);
    out.claims.push(claim(
        "flagcommit-fig14-crossing",
        "CFC outperforms AFC when δ is greater than 15 % (Fig. 14a)".into(),
        "crossing near δ = 15 %",
        match first {
            Some(d) if below_all => format!("CFC ≥ AFC already at the lowest δ ({:.0} %)", d * 100.0),
            Some(d) => format!("CFC first ≥ AFC at δ = {:.0} %", d * 100.0),
            None => "CFC below AFC at every δ".into(),
        },
        match first {
            Some(d) => Verdict::value(0.15, d),
            None => Verdict::qualitative(false),
        },
        &format!(
            "The crossing is the smallest swept δ ({}) at which CFC's throughput reaches AFC's; its magnitude compares that δ with 15 %, so it is only as fine as the sweep.",
            deltas.iter().map(|d| format!("{:.0} %", d * 100.0)).collect::<Vec<_>>().join(", ")
        ),
    ));
    let falls = |p: &str| -> Result<bool, String> { Ok(t(hi, p)? < t(lo, p)?) };
    out.claims.push(claim(
        "flagcommit-fig14-decreasing",
        "Throughput decreases with δ for AFC, BPCC and SCC (Fig. 14a)".into(),
        "decreases (no number)",
        format!(
            "δ {:.0} % → {:.0} %: AFC {}, BPCC {}, SCC {}",
            lo * 100.0,
            hi * 100.0,
            pct(t(hi, "afc")? / t(lo, "afc")? - 1.0),
            pct(t(hi, "bpcc")? / t(lo, "bpcc")? - 1.0),
            pct(t(hi, "scc")? / t(lo, "scc")? - 1.0)
        ),
        Verdict::qualitative(falls("afc")? && falls("bpcc")? && falls("scc")?),
        "Tested as stated: lower at the highest δ than at the lowest, for each of the three. The run has a fixed number of transactions, so fewer commit as δ grows.",
    ));
    let (_, _, mid) = fig14_deltas(deltas);
    let c_rise = t(mid, "cfc")? / t(lo, "cfc")? - 1.0;
    out.claims.push(claim(
        "flagcommit-fig14-cfc-rises",
        "CFC's throughput increases slightly when δ goes from 1 to 20 % (Fig. 14a)".into(),
        "slight increase (no number)",
        format!(
            "δ {:.0} % → {:.0} %: {}",
            lo * 100.0,
            mid * 100.0,
            pct(c_rise)
        ),
        Verdict::qualitative(c_rise > 0.0),
        "Tested as stated, between the lowest δ and the largest swept δ not above 20 %. The paper's rise comes from CFC saving flag programs for aborted transactions; in the engine an aborted device-tx transaction that stole no page does no device I/O under any protocol, so that saving is small here.",
    ));
    let gpc = |d: f64, p: &str| at(d, p).map(|r| r.gc_per_commit_ns());
    for (who, p, paper) in [("BPCC", "bpcc", 0.38), ("SCC", "scc", 0.72)] {
        let g = gpc(hi, p)? / gpc(lo, p)?.max(1.0) - 1.0;
        out.claims.push(claim(
            &format!("flagcommit-fig14b-gc-{p}"),
            format!(
                "{who}'s GC overhead per committed transaction rises by {:.0} % from δ = 1 to 50 % (Fig. 14b)",
                paper * 100.0
            ),
            &pct(paper),
            format!(
                "{} ({:.3} → {:.3} ms)",
                pct(g),
                gpc(lo, p)? / 1e6,
                gpc(hi, p)? / 1e6
            ),
            Verdict::change(paper, g),
            &format!("GC time of the run divided by its committed transactions. {DEVICE_TX_NOTE}"),
        ));
    }
    Ok(())
}

/// Fig. 15: max_c.
fn fig15(out: &mut Output, max_cs: &[u32], x: &Pts) -> Result<(), String> {
    let at = |m: u32, s: &str| x.ext(m, s);
    let series = |f: &dyn Fn(&Res) -> f64| -> Result<Vec<Series>, String> {
        ["cfc-ex", "afc-ex"]
            .iter()
            .map(|s| {
                Ok(Series {
                    name: s.to_uppercase().replace("-EX", "_ex"),
                    points: max_cs
                        .iter()
                        .map(|&m| at(m, s).map(|r| (f64::from(m), f(r))))
                        .collect::<Result<_, String>>()?,
                })
            })
            .collect()
    };
    out.svgs.push((
        "flagcommit_fig15a_throughput.svg".into(),
        line_chart(
            &chart(
                "Flag Commit Fig. 15a: throughput vs max_c",
                "max_c",
                "committed transactions / s",
                false,
            ),
            &series(&|r| r.tput())?,
        ),
    ));
    out.svgs.push((
        "flagcommit_fig15b_restarts.svg".into(),
        line_chart(
            &chart(
                "Flag Commit Fig. 15b: restart ratio vs max_c",
                "max_c",
                "restarts per committed transaction",
                false,
            ),
            &series(&|r| r.restart_ratio())?,
        ),
    ));
    if !max_cs.contains(&2) {
        return Err("the max_c sweep must include 2".into());
    }
    // The note states the restart counts measured in this run, so its reading holds at
    // every scale (at full scale restarts are a few dozen in 100,000 transactions).
    let mut counts = Vec::new();
    for s in ["cfc-ex", "afc-ex"] {
        let (a, b) = (at(2, s)?, at(3, s)?);
        counts.push(format!(
            "{s} {} → {} restarts for {} → {} commits",
            a.m.txns_restarted, b.m.txns_restarted, a.m.txns_committed, b.m.txns_committed
        ));
    }
    let note = format!("Restart ratio = engine restarts (deadlock victims, buffer-full restarts) ÷ committed transactions. max_c limits how many transactions update one DB page at a time (Algorithm 1); a transaction beyond it blocks, and blocking can close a deadlock cycle. Measured in this run (max_c 2 → 3): {}. Where restarts are under 1 % of commits (the full scale's 20 warehouses spread TPC-C's hot district and stock pages over more pages than the quick scale's 4), a change in the ratio is a few dozen events, and the throughput gain comes from transactions blocking less at max_c, not from fewer restarts.", counts.join("; "));
    let note = note.as_str();
    for s in ["cfc-ex", "afc-ex"] {
        let name = s.to_uppercase().replace("-EX", "_ex");
        let (a, b) = (at(2, s)?, at(3, s)?);
        let g = b.tput() / a.tput() - 1.0;
        out.claims.push(claim(
            &format!("flagcommit-fig15a-{s}"),
            format!("{name}'s throughput improves by 13 % when max_c goes from 2 to 3 (Fig. 15a)"),
            "+13.0%",
            format!("{} ({:.1} → {:.1} tx/s)", pct(g), a.tput(), b.tput()),
            Verdict::change(0.13, g),
            note,
        ));
        let (ra, rb) = (a.restart_ratio(), b.restart_ratio());
        let rg = if ra > 0.0 { rb / ra - 1.0 } else { f64::NAN };
        out.claims.push(claim(
            &format!("flagcommit-fig15b-{s}"),
            format!("{name}'s restart ratio falls by nearly 40 % when max_c goes from 2 to 3 (Fig. 15b)"),
            "-40.0%",
            if ra > 0.0 {
                format!("{} ({ra:.4} → {rb:.4})", pct(rg))
            } else {
                format!("no restarts at max_c = 2 ({ra:.4} → {rb:.4})")
            },
            Verdict::change(-0.40, if rg.is_finite() { rg } else { 0.0 }),
            note,
        ));
        if let Some(&m4) = max_cs.iter().find(|&&m| m > MAX_C) {
            let c = at(m4, s)?;
            out.claims.push(claim(
                &format!("flagcommit-fig15a-{s}-beyond-3"),
                format!("{name}'s throughput drops slightly when max_c exceeds 3 (Fig. 15a)"),
                "slight drop (no number)",
                format!("max_c 3 → {m4}: {}", pct(c.tput() / b.tput() - 1.0)),
                Verdict::qualitative(c.tput() < b.tput()),
                "Tested as stated: lower throughput at the next swept max_c above 3. The paper's drop comes from reading scattered versions and more flag programs at GC; here a page has max(3, max_c) version slots and a buffer miss reads every version holding a live committed record (§4.3's merge). The ablation claim `flagcommit-fig15-ablation-merge-reads` measures what the merge reads cost.",
            ));
        }
    }
    if max_cs.contains(&MAX_C_LARGE) {
        let with = at(MAX_C_LARGE, "cfc-ex")?;
        let without = get(x.r, x.i_fig15_ablation)?;
        let wal = get(x.r, x.i_wal)?;
        let merges = |r: &Res| {
            r.m.strategy_counters
                .get("fc_merge_reads")
                .copied()
                .unwrap_or(0)
        };
        out.claims.push(claim(
            "flagcommit-fig15-ablation-merge-reads",
            format!("Ablation of §5.3.1's second cause: reading a page's scattered versions costs CFC_ex throughput at max_c = {MAX_C_LARGE} (against WAL)"),
            "a cost (no number)",
            format!(
                "CFC_ex vs WAL: {} with merge reads ({} merged version reads), {} without ({:.1} vs {:.1} tx/s)",
                pct(with.tput() / wal.tput() - 1.0),
                merges(with),
                pct(without.tput() / wal.tput() - 1.0),
                with.tput(),
                without.tput()
            ),
            Verdict::qualitative(with.tput() <= without.tput()),
            "Two runs that differ only in `host.fc_no_merge_reads` (the ablation reads one version per buffer miss, and invalid records at the next write-back). Holds if the merge reads do not raise throughput.",
        ));
    }
    Ok(())
}

/// How often each run restarted against WAL's run, from the counts the runs measured (a
/// note states only what its own run shows): "restarts per commit: CFC_ex 5 / 1,000
/// (0.0050), …, WAL 11 / 1,000 (0.0110): CFC_ex and AFC_ex restart less often than WAL".
fn restarts_vs_wal(ext: &[(&str, &Res)], wal: &Res) -> String {
    restart_words(
        &ext.iter()
            .map(|(n, r)| (*n, r.m.txns_restarted, r.m.txns_committed))
            .collect::<Vec<_>>(),
        (wal.m.txns_restarted, wal.m.txns_committed),
    )
}

/// `restarts_vs_wal` on plain counts: (name, restarts, commits) of each run and WAL's.
fn restart_words(ext: &[(&str, u64, u64)], wal: (u64, u64)) -> String {
    let ratio = |r: u64, c: u64| r as f64 / c.max(1) as f64;
    let w = ratio(wal.0, wal.1);
    let mut counts: Vec<String> = ext
        .iter()
        .map(|(n, r, c)| format!("{n} {r} in {c} commits ({:.4})", ratio(*r, *c)))
        .collect();
    counts.push(format!("WAL {} in {} commits ({w:.4})", wal.0, wal.1));
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (n, r, c) in ext {
        let x = ratio(*r, *c);
        let word = if (x - w).abs() <= crate::SAME_WITHIN * w.max(x) {
            "as often as"
        } else if x > w {
            "more often than"
        } else {
            "less often than"
        };
        match groups.iter_mut().find(|(g, _)| *g == word) {
            Some((_, v)) => v.push(n),
            None => groups.push((word, vec![n])),
        }
    }
    let verdicts: Vec<String> = groups
        .iter()
        .map(|(word, names)| {
            format!(
                "{} {} {word} WAL",
                names.join(" and "),
                if names.len() > 1 {
                    "restart"
                } else {
                    "restarts"
                }
            )
        })
        .collect();
    format!(
        "Restarts per commit in this run: {}; {}",
        counts.join(", "),
        verdicts.join(", ")
    )
}

/// Figs. 16 and 17: extended protocols against basic ones and WAL, at the defaults.
fn fig16_17(out: &mut Output, x: &Pts) -> Result<(), String> {
    let dev = |p: &str| x.dev(DELTA, p);
    let ext = |s: &str| x.frames(FRAMES, s);
    let (cfc, afc) = (dev("cfc")?, dev("afc")?);
    let (cx, ax, wal) = (ext("cfc-ex")?, ext("afc-ex")?, ext("wal")?);
    let strat = |s: &str| if DEVICE.contains(&s) { dev(s) } else { ext(s) };
    let names = ["CFC", "AFC", "CFC_ex", "AFC_ex", "WAL"];
    let all = [cfc, afc, cx, ax, wal];
    let cats: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let bars = |name: &str, f: &dyn Fn(&Res) -> f64| Series {
        name: name.into(),
        points: all
            .iter()
            .enumerate()
            .map(|(i, r)| (i as f64, f(r)))
            .collect(),
    };
    out.svgs.push((
        "flagcommit_fig16_throughput.svg".into(),
        bar_chart(
            &chart(
                "Flag Commit Fig. 16a: throughput",
                "protocol",
                "committed transactions / s",
                false,
            ),
            &cats,
            &[bars("throughput", &|r| r.tput())],
        ),
    ));
    out.svgs.push((
        "flagcommit_fig17_gc.svg".into(),
        bar_chart(
            &chart(
                "Flag Commit Fig. 17: log pages and GC time",
                "protocol",
                "count / ms",
                false,
            ),
            &cats,
            &[
                bars("log pages", &|r| r.m.log_pages as f64),
                bars("GC time (ms)", &|r| r.m.gc_time_ns as f64 / 1e6),
            ],
        ),
    ));
    let note16 = format!("WAL here is steal / no-force with record-level locks, as CFC_ex / AFC_ex, and its rollback costs what the paper describes (each undone page fetched, undo records no longer buffered read back, a CLR per undo). CPU time is charged to no protocol, here as in the paper's simulator (§5.1: \"we ignored the CPU cost\"). {} (max_c admission blocks and can close deadlock cycles; each restart repeats its reads). CFC and AFC are the §5.2 runs (device-tx: force at commit, page-level locks); CFC_ex and AFC_ex run no-force with record-level locks and max_c = 3 over the plain FTL, their commit flags kept by the host strategy (docs/HOST.md: the device-side flags of §4 are not implemented, so the extended protocols' flags are partial programs the host issues into each flash page's record area).", restarts_vs_wal(&[("CFC_ex", cx), ("AFC_ex", ax)], wal));
    let note16 = note16.as_str();
    for (sfx, an, aw, bn, bw, paper) in FIG16A {
        let (a, bb) = (strat(aw)?, strat(bw)?);
        let g = a.tput() / bb.tput() - 1.0;
        out.claims.push(claim(
            &format!("flagcommit-{sfx}"),
            format!(
                "{an} outperforms {bn} by {:.0} % in transaction throughput (Fig. 16a)",
                paper * 100.0
            ),
            &pct(paper),
            format!("{} ({:.1} vs {:.1} tx/s)", pct(g), a.tput(), bb.tput()),
            Verdict::change(paper, g),
            note16,
        ));
    }
    for (id, a, an, bb, bn, paper) in [
        (
            "flagcommit-fig16b-cfcex-commit",
            cx,
            "CFC_ex",
            cfc,
            "CFC",
            -0.68,
        ),
        (
            "flagcommit-fig16b-afcex-commit",
            ax,
            "AFC_ex",
            afc,
            "AFC",
            -0.67,
        ),
    ] {
        let (x, y) = (a.m.commit_latency_ns.mean, bb.m.commit_latency_ns.mean);
        let g = x / y - 1.0;
        out.claims.push(claim(
            id,
            format!(
                "{an} improves commit response time over {bn} by {:.0} % (Fig. 16b)",
                -paper * 100.0
            ),
            &pct(paper),
            format!("{} ({:.3} vs {:.3} ms mean)", pct(g), x / 1e6, y / 1e6),
            Verdict::change(paper, g),
            note16,
        ));
    }
    let lp = |r: &Res| r.m.log_pages;
    out.claims.push(claim(
        "flagcommit-fig17a-log-pages",
        "WAL generates more log pages than CFC_ex and AFC_ex (Fig. 17a)".into(),
        "WAL > CFC_ex, AFC_ex (no number)",
        format!(
            "log pages: WAL {}, CFC_ex {}, AFC_ex {}",
            lp(wal),
            lp(cx),
            lp(ax)
        ),
        Verdict::qualitative(lp(wal) > lp(cx).max(lp(ax))),
        "Tested as stated, over the same number of transactions.",
    ));
    let gc = |r: &Res| r.m.gc_time_ns;
    out.claims.push(claim(
        "flagcommit-fig17b-gc",
        "WAL's GC overhead is much higher than CFC_ex's and AFC_ex's (Fig. 17b)".into(),
        "WAL > CFC_ex, AFC_ex (no number)",
        format!(
            "GC ms: WAL {:.0}, CFC_ex {:.0}, AFC_ex {:.0}",
            gc(wal) as f64 / 1e6,
            gc(cx) as f64 / 1e6,
            gc(ax) as f64 / 1e6
        ),
        Verdict::qualitative(gc(wal) > gc(cx).max(gc(ax))),
        &format!(
            "Tested as \"higher\" over the same number of transactions (the paper gives no number for \"much\"). Log pages against all flash programs: WAL {} of {} ({:.1} %), CFC_ex {} of {}, AFC_ex {} of {}; CFC_ex / AFC_ex write page versions into their version slots, and the engine's TPC-C dirties whole 8 KiB pages for every strategy alike.",
            lp(wal),
            wal.m.nand_programs,
            lp(wal) as f64 / wal.m.nand_programs.max(1) as f64 * 100.0,
            lp(cx),
            cx.m.nand_programs,
            lp(ax),
            ax.m.nand_programs
        ),
    ));
    Ok(())
}

/// Fig. 18: CFC_ex, AFC_ex and WAL on short (λ ≤ 10) and long (λ > 10) transactions.
fn fig18(out: &mut Output, x: &Pts) -> Result<(), String> {
    let cats: Vec<String> = ["CFC_ex", "AFC_ex", "WAL"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let series = |long: bool, f: &dyn Fn(&Res) -> f64| -> Result<Series, String> {
        Ok(Series {
            name: if long {
                "long (λ > 10)"
            } else {
                "short (λ ≤ 10)"
            }
            .into(),
            points: EXTENDED
                .iter()
                .enumerate()
                .map(|(i, s)| Ok((i as f64, f(x.size(long, s)?))))
                .collect::<Result<_, String>>()?,
        })
    };
    out.svgs.push((
        "flagcommit_fig18_throughput.svg".into(),
        bar_chart(
            &chart(
                "Flag Commit Fig. 18a: throughput by transaction size",
                "protocol",
                "committed transactions / s",
                false,
            ),
            &cats,
            &[series(false, &|r| r.tput())?, series(true, &|r| r.tput())?],
        ),
    ));
    out.svgs.push((
        "flagcommit_fig18_gc.svg".into(),
        bar_chart(
            &chart(
                "Flag Commit Fig. 18b: GC time per committed transaction",
                "protocol",
                "ms",
                false,
            ),
            &cats,
            &[
                series(false, &|r| r.gc_per_commit_ns() / 1e6)?,
                series(true, &|r| r.gc_per_commit_ns() / 1e6)?,
            ],
        ),
    ));
    let note = "The paper split its recorded PostgreSQL trace by λ, the pages a transaction writes; here the engine's TPC-C mix is drawn and only transactions of one class are run (`host.tpcc.max_pages_written` = 10 or `min_pages_written` = 11; λ counts the distinct DB pages of a transaction's updates, inserts and deletes, index pages included). Short ones are mostly Payment, Order-Status and Stock-Level (read-only, λ = 0), long ones mostly New-Order and Delivery. The paper's mechanism for the larger gain on short transactions is that their pages are more likely to be written back before commit, so CFC_ex / AFC_ex need no commit log record; here that depends on the 512-frame pool's residency. WAL's rollback I/O (the paper's other named cause) is charged; CPU is charged to no protocol, as in the paper (§5.1).";
    let mut gaps = [0.0; 2];
    for (long, id, paper) in [
        (false, "flagcommit-fig18-short", 0.64),
        (true, "flagcommit-fig18-long", 0.46),
    ] {
        let (cx, wal) = (x.size(long, "cfc-ex")?, x.size(long, "wal")?);
        let g = cx.tput() / wal.tput() - 1.0;
        gaps[usize::from(long)] = g;
        out.claims.push(claim(
            id,
            format!(
                "CFC_ex outperforms WAL by {:.0} % for {} transactions ({}) (Fig. 18a)",
                paper * 100.0,
                if long { "long" } else { "short" },
                if long { "λ > 10" } else { "λ ≤ 10" },
            ),
            &pct(paper),
            format!("{} ({:.1} vs {:.1} tx/s)", pct(g), cx.tput(), wal.tput()),
            Verdict::change(paper, g),
            note,
        ));
    }
    out.claims.push(claim(
        "flagcommit-fig18-short-gains-more",
        "The improvement of CFC_ex over WAL is higher with short transactions (Fig. 18a)".into(),
        "short > long (+64 % vs +46 %)",
        format!("short {} vs long {}", pct(gaps[0]), pct(gaps[1])),
        Verdict::qualitative(gaps[0] > gaps[1]),
        note,
    ));
    for (long, paper) in [(false, -0.845), (true, -0.725)] {
        for (s, name) in [("cfc-ex", "CFC_ex"), ("afc-ex", "AFC_ex")] {
            let (a, wal) = (x.size(long, s)?, x.size(long, "wal")?);
            let g = a.gc_per_commit_ns() / wal.gc_per_commit_ns() - 1.0;
            let class = if long { "long" } else { "short" };
            out.claims.push(claim(
                &format!("flagcommit-fig18-gc-{class}-{s}"),
                format!(
                    "{name} needs {} % less GC time per transaction than WAL for {class} transactions (Fig. 18b)",
                    if long { "72–73" } else { "84–85" }
                ),
                &pct(paper),
                format!(
                    "{} ({:.3} vs {:.3} ms per committed transaction)",
                    pct(g),
                    a.gc_per_commit_ns() / 1e6,
                    wal.gc_per_commit_ns() / 1e6
                ),
                Verdict::change(paper, g),
                note,
            ));
        }
    }
    Ok(())
}

/// Fig. 19: buffer pool size.
fn fig19(out: &mut Output, frames: &[u32], x: &Pts) -> Result<(), String> {
    let at = |n: u32, s: &str| x.frames(n, s);
    let series = |f: &dyn Fn(&Res) -> f64| -> Result<Vec<Series>, String> {
        EXTENDED
            .iter()
            .map(|s| {
                Ok(Series {
                    name: s.to_uppercase().replace("-EX", "_ex"),
                    points: frames
                        .iter()
                        .map(|&n| at(n, s).map(|r| (f64::from(n), f(r))))
                        .collect::<Result<_, String>>()?,
                })
            })
            .collect()
    };
    out.svgs.push((
        "flagcommit_fig19a_throughput.svg".into(),
        line_chart(
            &chart(
                "Flag Commit Fig. 19a: throughput vs buffer",
                "buffer pool (pages)",
                "committed transactions / s",
                true,
            ),
            &series(&|r| r.tput())?,
        ),
    ));
    out.svgs.push((
        "flagcommit_fig19b_gc.svg".into(),
        line_chart(
            &chart(
                "Flag Commit Fig. 19b: GC time vs buffer",
                "buffer pool (pages)",
                "GC time (ms)",
                true,
            ),
            &series(&|r| r.m.gc_time_ns as f64 / 1e6)?,
        ),
    ));
    let (lo, hi) = (frames[0], frames[frames.len() - 1]);
    let t = |n: u32, s: &str| at(n, s).map(|r| r.tput());
    let rises = EXTENDED
        .iter()
        .map(|s| Ok(t(hi, s)? > t(lo, s)?))
        .collect::<Result<Vec<bool>, String>>()?;
    out.claims.push(claim(
        "flagcommit-fig19-rises",
        format!("Throughput increases for CFC_ex, AFC_ex and WAL as the buffer grows from {lo} to {hi} pages (Fig. 19a)"),
        "increases (no number)",
        EXTENDED
            .iter()
            .map(|s| Ok(format!("{s} {}", pct(t(hi, s)? / t(lo, s)? - 1.0))))
            .collect::<Result<Vec<_>, String>>()?
            .join(", "),
        Verdict::qualitative(rises.iter().all(|&x| x)),
        "Tested as stated, between the smallest and the largest buffer.",
    ));
    let gap =
        |n: u32| -> Result<f64, String> { Ok((t(n, "afc-ex")? / t(n, "cfc-ex")? - 1.0).abs()) };
    out.claims.push(claim(
        "flagcommit-fig19-afc-cfc-converge",
        "The gap between AFC_ex and CFC_ex shrinks as the buffer grows (Fig. 19a)".into(),
        "shrinks, converging above 2,048 pages (no number)",
        format!("|AFC_ex ÷ CFC_ex − 1|: {} at {lo}, {} at {hi}", pct(gap(lo)?), pct(gap(hi)?)),
        Verdict::qualitative(gap(hi)? < gap(lo)?),
        format!(
            "Tested as stated: the absolute relative gap is smaller at the largest buffer than at the smallest. CFC_ex and AFC_ex differ only in their flag programs; the gap measured at each size: {}.",
            frames
                .iter()
                .map(|&n| Ok(format!("{n} pages {}", pct(gap(n)?))))
                .collect::<Result<Vec<_>, String>>()?
                .join(", ")
        )
        .as_str(),
    ));
    // §5.4: "they finally converge when the buffer pool grows larger than 2,048 pages".
    let above: Vec<u32> = frames.iter().copied().filter(|&n| n > 2048).collect();
    if !above.is_empty() {
        let gaps = above
            .iter()
            .map(|&n| gap(n))
            .collect::<Result<Vec<f64>, String>>()?;
        out.claims.push(claim(
            "flagcommit-fig19-afc-cfc-converged",
            "AFC_ex and CFC_ex converge when the buffer is larger than 2,048 pages (Fig. 19a, §5.4)".into(),
            "same throughput above 2,048 pages (no number)",
            above
                .iter()
                .zip(&gaps)
                .map(|(n, g)| format!("|AFC_ex ÷ CFC_ex − 1| {} at {n} pages", pct(*g)))
                .collect::<Vec<_>>()
                .join(", "),
            Verdict::qualitative(gaps.iter().all(|g| *g <= crate::SAME_WITHIN)),
            &format!("Tested as stated: at every swept buffer above 2,048 pages the two throughputs differ by at most the {:.0} % sameness band.", crate::SAME_WITHIN * 100.0),
        ));
    }
    let note = format!(
        "Gap over WAL = the extended protocol's throughput ÷ WAL's − 1 at the same buffer size. {}",
        frames
            .iter()
            .map(|&n| {
                Ok(format!(
                    "At {n} pages: {}",
                    restarts_vs_wal(
                        &[("CFC_ex", at(n, "cfc-ex")?), ("AFC_ex", at(n, "afc-ex")?)],
                        at(n, "wal")?
                    )
                ))
            })
            .collect::<Result<Vec<_>, String>>()?
            .join(". ")
    );
    let note = note.as_str();
    for (s, name, p_lo) in [("cfc-ex", "CFC_ex", 0.24), ("afc-ex", "AFC_ex", 0.34)] {
        for (n, paper, end) in [(lo, p_lo, "small"), (hi, 0.83, "large")] {
            let g = t(n, s)? / t(n, "wal")? - 1.0;
            out.claims.push(claim(
                &format!("flagcommit-fig19-{s}-vs-wal-{end}"),
                format!(
                    "{name}'s throughput gap over WAL is {:.0} % with a {n}-page buffer (Fig. 19a)",
                    paper * 100.0
                ),
                &pct(paper),
                pct(g),
                Verdict::change(paper, g),
                note,
            ));
        }
    }
    let gc = |n: u32, s: &str| at(n, s).map(|r| r.m.gc_time_ns as f64);
    for (s, name, paper) in [
        ("cfc-ex", "CFC_ex", -0.71),
        ("afc-ex", "AFC_ex", -0.61),
        ("wal", "WAL", -0.41),
    ] {
        let g = gc(hi, s)? / gc(lo, s)?.max(1.0) - 1.0;
        out.claims.push(claim(
            &format!("flagcommit-fig19b-gc-{s}"),
            format!("{name}'s GC time falls by {:.0} % as the buffer grows from {lo} to {hi} pages (Fig. 19b)", -paper * 100.0),
            &pct(paper),
            format!("{} ({:.0} → {:.0} ms)", pct(g), gc(lo, s)? / 1e6, gc(hi, s)? / 1e6),
            Verdict::change(paper, g),
            "GC time over the same number of transactions.",
        ));
    }
    Ok(())
}

/// Fig. 18's claims that compare its two transaction classes or read its long class,
/// explained at full scale by causes the claims' own runs already have (`matched`).
fn fig18_matched_ids() -> [&'static str; 3] {
    [
        "flagcommit-fig18-short-gains-more",
        "flagcommit-fig18-gc-long-cfc-ex",
        "flagcommit-fig18-gc-long-afc-ex",
    ]
}

/// What Fig. 18's own short- and long-transaction runs measured, for a `matched` cause.
fn fig18_classes_text(x: &Pts) -> Result<String, String> {
    let mut parts = Vec::new();
    for long in [false, true] {
        let wal = x.size(long, "wal")?;
        let mut v = Vec::new();
        for s in EXTENDED {
            let r = x.size(long, s)?;
            v.push(format!(
                "{} {:.1} tx/s, GC {:.3} ms per commit, {} log pages",
                s.to_uppercase().replace("-EX", "_ex"),
                r.tput(),
                r.gc_per_commit_ns() / 1e6,
                r.m.log_pages
            ));
        }
        parts.push(format!(
            "{} transactions: {} (CFC_ex vs WAL {})",
            if long { "long" } else { "short" },
            v.join("; "),
            pct(x.size(long, "cfc-ex")?.tput() / wal.tput() - 1.0)
        ));
    }
    Ok(parts.join("; "))
}

/// The label of the CFC_ex or AFC_ex run at the largest max_c without merge reads.
fn no_merge_run(s: &str) -> String {
    format!("flagcommit {s} max_c={MAX_C_LARGE} without merge reads")
}

/// A point of the slot-reuse ablation: long transactions, or the smallest (`false`) or
/// largest (`true`) buffer of Fig. 19.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ReusePoint {
    Long,
    Frames(bool),
}

/// The slot-reuse ablation's points (`host.fc_reuse_slots_first`): CFC_ex's long
/// transactions, and with `Plan::reuse_all` AFC_ex's and CFC_ex's smallest and largest
/// buffer.
fn reuse_points(plan: &Plan) -> Vec<(&'static str, ReusePoint)> {
    let mut v = vec![("cfc-ex", ReusePoint::Long)];
    if plan.reuse_all {
        v.push(("afc-ex", ReusePoint::Long));
        v.push(("cfc-ex", ReusePoint::Frames(false)));
        v.push(("cfc-ex", ReusePoint::Frames(true)));
    }
    v
}

/// The smallest or largest of Fig. 19's buffers (`Plan::frames`, never empty).
fn frames_at(frames: &[u32], largest: bool) -> u32 {
    let f = if largest {
        frames.last()
    } else {
        frames.first()
    };
    f.copied().unwrap_or(FRAMES)
}

/// The label of a slot-reuse run.
fn reuse_run(s: &str, what: ReusePoint, frames: &[u32]) -> String {
    match what {
        ReusePoint::Long => format!("flagcommit {s} long txns slots reused first"),
        ReusePoint::Frames(l) => format!(
            "flagcommit {s} {} frames slots reused first",
            frames_at(frames, l)
        ),
    }
}

/// The cause the slot-reuse runs test, in words.
const REUSE_CAUSE: &str = "out-of-date versions left mapped: a page's new version takes a free version slot first and reclaims a slot (§4.3's rules) only when none is free, and no slot is unmapped, so up to max(3, max_c) versions of a written page stay valid to the FTL, whose GC copies versions §4.3 would let it reclaim (§5.3.4: with fewer page versions, copying valid pages during each GC costs less)";

/// What a slot-reuse run changes against the claim's run.
const REUSE_CHANGES: &str = "a page's new version takes its oldest reclaimable slot before a free one (`host.fc_reuse_slots_first`), on the same aged device: the reclaim rules and flag moves are the same, fewer out-of-date versions stay mapped";

/// GC's work in a run, for an ablation's detail: valid pages copied per victim erased.
fn gc_work(r: &Res) -> String {
    format!(
        "{} GC copies over {} GC erases ({:.2} per erase), {} versions written",
        r.gc.copies,
        r.gc.erases,
        r.gc.copies_per_erase(),
        r.m.strategy_counters
            .get("fc_versions_written")
            .copied()
            .unwrap_or(0)
    )
}

/// The label of the CFC run with `protocol.cfc_flag_reprogram`.
const FLAG_RUN: &str = "flagcommit cfc δ=5% flag reprogrammed";

/// The label of a run on the old preparation (`Prep::Aged`): a device protocol at δ = 5 %,
/// or CFC_ex, AFC_ex or WAL at the defaults.
fn old_run(p: &str) -> String {
    if EXTENDED.contains(&p) {
        format!("flagcommit {p} old preparation")
    } else {
        format!("flagcommit {p} δ=5% old preparation")
    }
}

fn trace_run(s: &str) -> String {
    format!("flagcommit {s} PostgreSQL trace")
}

/// The PostgreSQL TPC-C trace shipped with the repository (docs/TRACES.md).
const TRACE: &str = "examples/traces/pg-tpcc.trace.gz";

/// Where the trace is: relative to the working directory (the repository's root), else
/// to this crate's sources.
fn trace_path() -> Result<String, String> {
    if std::path::Path::new(TRACE).exists() {
        return Ok(TRACE.into());
    }
    let there = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/traces/pg-tpcc.trace.gz"
    );
    if std::path::Path::new(there).exists() {
        return Ok(there.into());
    }
    Err(format!(
        "the PostgreSQL trace {TRACE} is missing (run `commitlab reproduce` from the repository's root)"
    ))
}

/// The trace series' base configuration: `b` replaying the PostgreSQL trace (host workload
/// `trace`) for `plan.trace_transactions` transactions on a device of
/// `plan.trace_blocks_per_plane` blocks per plane (the plan's own when `None`).
fn trace_base(plan: &Plan, b: &Config) -> Result<Config, String> {
    let mut c = b.clone();
    if let Some(n) = plan.trace_blocks_per_plane {
        c.nand.blocks_per_plane = n;
    }
    c.host.workload = "trace".into();
    c.host.trace.path = trace_path()?;
    c.host.transactions = plan.trace_transactions;
    Ok(c)
}

fn fresh_run(p: &str) -> String {
    format!("flagcommit {p} δ=5% fresh device")
}

fn mem_run(p: &str, blocks_per_plane: u32) -> String {
    format!("flagcommit {p} δ=5% fresh {blocks_per_plane}-block planes")
}

fn wh_run(s: &str, warehouses: u32, blocks_per_plane: u32) -> String {
    format!("flagcommit {s} {warehouses} warehouses fresh {blocks_per_plane}-block planes")
}

/// `b` with its planes doubled until CFC_ex's extent at `warehouses` (`host_extent`) fits in
/// 85 % of the device's pages (below what `ssd` exports: it keeps 10 % over-provisioning,
/// the summary page of each block and GC's reserve).
fn large_device(b: &Config, warehouses: u32) -> Result<Config, String> {
    let mut c = strat(b, "cfc-ex");
    c.host.tpcc.warehouses = warehouses;
    let need = host_extent(&c, b.nand.geometry().page_bytes)?;
    let mut big = b.clone();
    while (f64::from(big.nand.geometry().pages()) * 0.85) < need as f64 {
        if big.nand.blocks_per_plane >= 1 << 16 {
            return Err(format!(
                "no device of this shape holds {warehouses} warehouses ({need} pages)"
            ));
        }
        big.nand.blocks_per_plane *= 2;
    }
    Ok(big)
}

/// Fig. 14's δ points: the lowest and highest swept, and the largest not above 20 % (the
/// end of CFC's "slight increase from 1 to 20 %").
fn fig14_deltas(deltas: &[f64]) -> (f64, f64, f64) {
    let (lo, hi) = (deltas[0], deltas[deltas.len() - 1]);
    let mid = deltas
        .iter()
        .copied()
        .filter(|&d| d <= 0.20 + 1e-9)
        .fold(lo, f64::max);
    (lo, hi, mid)
}

/// Which device run stands for a Fig. 14 claim in its explanation (the protocol and δ
/// its quantity is measured at, besides CFC): `what` as `explain` names the claims.
fn fig14_run(what: &str, lo: f64, hi: f64, mid: f64) -> (&str, f64) {
    let mut w = what.split(' ');
    match (w.next(), w.next()) {
        (Some(p), Some("low")) => (p, lo),
        (Some(p), Some(_)) => (p, hi),
        (Some("rises"), None) => ("cfc", mid),
        _ => ("afc", hi),
    }
}

/// The buffer's share of the database: Table 2's 512 frames hold a share of its
/// 20-warehouse database (§5.1: "the buffer pool size [is] smaller than the database size in
/// order to exercise disk I/O operations"); a smaller database with the same frames holds
/// more of it. `frames` gives the buffer that holds the same share of the plan's database,
/// from both databases' DB pages (`device-tx`'s data pages, whose count follows TPC-C's
/// cardinalities).
#[derive(Clone, Debug)]
pub(crate) struct Share {
    /// Data pages at the plan's warehouses and at the paper's.
    pub ours: u64,
    pub paper: u64,
    pub warehouses: [u32; 2],
}

impl Share {
    fn of(b: &Config, warehouses: u32, paper_warehouses: u32) -> Result<Share, String> {
        let pages = |wh: u32| {
            let mut c = strat(b, "cfc");
            c.host.tpcc.warehouses = wh;
            own_extent(&c, b.nand.geometry().page_bytes)
        };
        Ok(Share {
            ours: pages(warehouses)?,
            paper: pages(paper_warehouses)?,
            warehouses: [warehouses, paper_warehouses],
        })
    }

    /// The buffer that holds of the plan's database the share `f` frames hold of the
    /// paper's.
    pub(crate) fn frames(&self, f: u32) -> u32 {
        ((f64::from(f) * self.ours as f64 / self.paper.max(1) as f64).round() as u32).max(1)
    }

    /// The label of a run whose buffer holds the share `f` frames hold at the paper's scale.
    fn run(&self, what: &str, f: u32) -> String {
        format!(
            "{what} {} frames (the share of {f} at {} warehouses)",
            self.frames(f),
            self.warehouses[1]
        )
    }
}

/// The runs with the buffer at Table 2's share of the database (`Share`), in job order:
/// the device protocols at Fig. 14's lowest then highest δ, CFC at the middle δ, the
/// short-transaction runs of `EXTENDED`, then CFC_ex and AFC_ex at the smaller then the
/// larger of Fig. 19's buffer ends.
struct ShareRuns<'a> {
    share: Share,
    /// Fig. 14's lowest, highest and middle δ.
    deltas: [f64; 3],
    /// Fig. 19's smallest and largest buffer (at the paper's scale).
    frames: [u32; 2],
    runs: Vec<&'a Res>,
}

impl ShareRuns<'_> {
    fn dev(&self, d: f64, p: &str) -> Result<&Res, String> {
        let pi = DEVICE
            .iter()
            .position(|&x| x == p)
            .ok_or("no such protocol")?;
        match self.deltas.iter().position(|&x| x == d) {
            Some(0) => Ok(self.runs[pi]),
            Some(1) => Ok(self.runs[DEVICE.len() + pi]),
            Some(_) if p == "cfc" => Ok(self.runs[2 * DEVICE.len()]),
            _ => Err(format!("no buffer-share run of {p} at δ = {d}")),
        }
    }
    fn short(&self, s: &str) -> Result<&Res, String> {
        let i = EXTENDED
            .iter()
            .position(|&x| x == s)
            .ok_or("no such strategy")?;
        Ok(self.runs[2 * DEVICE.len() + 1 + i])
    }
    /// CFC_ex or AFC_ex at Fig. 19's smaller (`k` = 0) or larger (1) buffer end.
    fn ext(&self, k: usize, s: &str) -> Result<&Res, String> {
        let i = usize::from(s == "afc-ex");
        Ok(self.runs[2 * DEVICE.len() + 1 + EXTENDED.len() + 2 * k + i])
    }
    fn label(&self, what: &str, f: u32) -> String {
        self.share.run(what, f)
    }
}

/// The ablation runs' results.
struct Abl<'a> {
    /// CFC at δ = 5 % with every commit flag a separate partial program.
    flag: &'a Res,
    /// The slot-reuse runs, `reuse_points` order.
    reuse: Vec<(&'static str, ReusePoint, &'a Res)>,
    /// The device protocols (`DEVICE` order) at δ = 5 %, then `EXTENDED` at the defaults,
    /// with the old preparation (`Prep::Aged`).
    old: Vec<&'a Res>,
    /// AFC and CFC at δ = 5 % on an empty device, recovery measured.
    fresh_afc: &'a Res,
    fresh_cfc: &'a Res,
    /// CFC_ex, AFC_ex and WAL at the plan's and the paper's warehouses, one empty device.
    wh: Option<WhPair<'a>>,
    /// The buffer at Table 2's share of the database (quick scale only).
    share: Option<ShareRuns<'a>>,
}

struct WhPair<'a> {
    warehouses: [u32; 2],
    blocks_per_plane: u32,
    /// `EXTENDED` at `warehouses[0]`, then at `warehouses[1]`.
    runs: Vec<&'a Res>,
    /// `DEVICE` at δ = 5 % on the same device (Table 3's memory at a larger capacity).
    memory: Vec<&'a Res>,
    /// CFC_ex and AFC_ex at max_c = 2: at `warehouses[0]`, then at `warehouses[1]`.
    max_c2: Vec<&'a Res>,
    /// CFC and AFC at δ = 5 % at `warehouses[1]` (at `warehouses[0]`: `memory`).
    device_hi: Vec<&'a Res>,
}

impl WhPair<'_> {
    fn at(&self, k: usize, s: &str) -> Result<&Res, String> {
        let i = EXTENDED
            .iter()
            .position(|&x| x == s)
            .ok_or("no such strategy")?;
        Ok(self.runs[k * EXTENDED.len() + i])
    }
    /// CFC_ex or AFC_ex at max_c = 2 at the pair's `k`-th warehouse count.
    fn max_c2(&self, k: usize, s: &str) -> &Res {
        self.max_c2[2 * k + usize::from(s == "afc-ex")]
    }
    /// CFC or AFC under `device-tx` at δ = 5 % at the pair's `k`-th warehouse count.
    fn device(&self, k: usize, p: &str) -> Result<&Res, String> {
        if k == 1 {
            return Ok(self.device_hi[usize::from(p == "afc")]);
        }
        let i = DEVICE
            .iter()
            .position(|&x| x == p)
            .ok_or("no such protocol")?;
        Ok(self.memory[i])
    }
    /// `s`'s throughput ÷ WAL's − 1 at the pair's `k`-th warehouse count.
    fn gap(&self, k: usize, s: &str) -> Result<f64, String> {
        Ok(self.at(k, s)?.tput() / self.at(k, "wal")?.tput() - 1.0)
    }
}

impl Abl<'_> {
    /// Device protocol or `EXTENDED` strategy `p` on the old preparation.
    fn old(&self, p: &str) -> Result<&Res, String> {
        let i = DEVICE
            .iter()
            .chain(EXTENDED.iter())
            .position(|&x| x == p)
            .ok_or("no such protocol")?;
        Ok(self.old[i])
    }
}

fn recovery_ns(r: &Res) -> f64 {
    r.m.recovery.map_or(f64::NAN, |x| x.time_ns as f64)
}

/// Attaches to every disagreeing claim whose suspected cause has an ablation in this
/// reproduction the explanation that ablation supports (the one rule, `cause::attach`: the
/// class follows from what the ablation measured). Claims that agree get none; claims whose cause has no
/// ablation run stay unexplained (listed in the report's summary).
fn explain(out: &mut Output, plan: &Plan, b: &Config, x: &Pts, ab: &Abl) -> Result<(), String> {
    let at = |p: &str| x.dev(DELTA, p);
    let page_bytes = b.nand.geometry().page_bytes;
    let mut expl: Vec<(String, cause::Candidate)> = Vec::new();

    // The device's preparation (Figs. 12 and 13a): the claims' runs have §5.1's (the
    // database on the device, aged by its own pages, a warm-up before the window); the
    // old preparation is the evidence of what it changed. The cause is matched in the
    // claims' own runs, so a claim that still disagrees is a `finding` by the one rule.
    let cfg_dev = strat(b, "cfc");
    let (all_ext, db_ext) = (
        host_extent(&cfg_dev, page_bytes)?,
        own_extent(&cfg_dev, page_bytes)?,
    );
    let prep_cause = format!(
        "the device's preparation. The claim's runs have §5.1's: the database's {db_ext} device pages on the device, cold data over the rest of the logical space, random overwrites of the database's own pages until GC runs, then a warm-up of 1/{WARMUP_DIVISOR} of the transactions (§5.1's 30 minutes before 4 hours) before the measured window. The old preparation (cold data beyond the {all_ext} pages CFC_ex may use, the database unmapped, a cold buffer pool, every transaction measured) is run beside them"
    );
    let vs_old = |show: &dyn Fn(f64) -> String, now: f64, old: f64, runs: &str| {
        format!(
            "{} in the claim's runs against {} with the old preparation ({runs})",
            show(now),
            show(old)
        )
    };
    let old_detail = |p: &str| -> Result<String, String> {
        Ok(format!(
            "{} GC share {:.1} % (old preparation {:.1} %)",
            p.to_uppercase(),
            at(p)?.m.gc_share * 100.0,
            ab.old(p)?.m.gc_share * 100.0,
        ))
    };
    for (id, who) in [
        ("flagcommit-fig13a-gc-share-bpcc", "bpcc"),
        ("flagcommit-fig13a-gc-share-scc", "scc"),
    ] {
        let show = |v: f64| format!("{} GC share {:.1} %", who.to_uppercase(), v * 100.0);
        expl.push((
            id.into(),
            matched(
                &prep_cause,
                &old_run(who),
                vs_old(
                    &show,
                    at(who)?.m.gc_share,
                    ab.old(who)?.m.gc_share,
                    &format!("`{}`", old_run(who)),
                ),
            ),
        ));
    }
    for (id, vs) in [
        ("flagcommit-fig13a-afc-gc-vs-bpcc", "bpcc"),
        ("flagcommit-fig13a-afc-gc-vs-scc", "scc"),
    ] {
        let g = |a: &Res, o: &Res| a.m.gc_time_ns as f64 / o.m.gc_time_ns.max(1) as f64 - 1.0;
        let show = |v: f64| format!("AFC's GC time vs {} {}", vs.to_uppercase(), pct(v));
        expl.push((
            id.into(),
            matched(
                &prep_cause,
                &old_run("afc"),
                format!(
                    "{}; {}; {}",
                    vs_old(
                        &show,
                        g(at("afc")?, at(vs)?),
                        g(ab.old("afc")?, ab.old(vs)?),
                        &format!("`{}`, `{}`", old_run("afc"), old_run(vs)),
                    ),
                    old_detail("afc")?,
                    old_detail(vs)?
                ),
            ),
        ));
    }
    for (id, who, vs) in [
        ("flagcommit-fig12-afc-vs-bpcc", "afc", "bpcc"),
        ("flagcommit-fig12-afc-vs-scc", "afc", "scc"),
        ("flagcommit-fig12-cfc-vs-bpcc", "cfc", "bpcc"),
        ("flagcommit-fig12-cfc-vs-scc", "cfc", "scc"),
    ] {
        let show = |v: f64| {
            format!(
                "{} vs {} throughput {}",
                who.to_uppercase(),
                vs.to_uppercase(),
                pct(v)
            )
        };
        expl.push((
            id.into(),
            matched(
                &prep_cause,
                &old_run(who),
                format!(
                    "{}; {}; {}",
                    vs_old(
                        &show,
                        at(who)?.tput() / at(vs)?.tput() - 1.0,
                        ab.old(who)?.tput() / ab.old(vs)?.tput() - 1.0,
                        &format!("`{}`, `{}`", old_run(who), old_run(vs)),
                    ),
                    old_detail(who)?,
                    old_detail(vs)?
                ),
            ),
        ));
    }
    {
        // Fig. 12b holds when the faster of BPCC and SCC is slower than the slower of AFC and
        // CFC: min(BPCC, SCC) ÷ max(AFC, CFC) − 1 > 0.
        let q = |r: &dyn Fn(&str) -> Result<f64, String>| -> Result<f64, String> {
            Ok(r("bpcc")?.min(r("scc")?) / r("afc")?.max(r("cfc")?) - 1.0)
        };
        let base = q(&|p| at(p).map(|r| r.m.txn_time_ns.mean))?;
        let abl = q(&|p| ab.old(p).map(|r| r.m.txn_time_ns.mean))?;
        let show = |v: f64| {
            format!(
                "min(BPCC, SCC) ÷ max(AFC, CFC) mean execution time − 1 = {}",
                pct(v)
            )
        };
        expl.push((
            "flagcommit-fig12b-exec-time".into(),
            matched(
                &prep_cause,
                &old_run("afc"),
                vs_old(
                    &show,
                    base,
                    abl,
                    &DEVICE.map(|p| format!("`{}`", old_run(p))).join(", "),
                ),
            ),
        ));
    }

    // CFC's commit flag (Fig. 13a, AFC vs CFC): §3.3's saving switched off on the same device.
    {
        let cfc = at("cfc")?;
        let flags = |r: &Res, k: &str| match k {
            "commit_flags_in_page" => r.flags.in_page,
            "commit_flag_programs" => r.flags.commit,
            _ => r.flags.gc,
        };
        let cause = format!(
            "how often CFC programs a separate commit flag. §5.2 says CFC \"maintains a commit flag for each committed transaction, which is a bit more costly\" than AFC's flags for aborted ones; here CFC's last page carries its TRUE flag when it is written at commit (§3.3's saving, Flag Commit's own rule) in {} of {} commits, so CFC programs {} separate commit flags in its run.",
            flags(cfc, "commit_flags_in_page"),
            cfc.m.txns_committed,
            flags(cfc, "commit_flag_programs"),
        );
        let g = |a: &Res, o: &Res| a.m.gc_time_ns as f64 / o.m.gc_time_ns.max(1) as f64 - 1.0;
        let show = |v: f64| format!("AFC's GC time vs CFC {}", pct(v));
        expl.push((
            "flagcommit-fig13a-afc-gc-vs-cfc".into(),
            Test {
                class: CauseClass::Model,
                cause: &cause,
                run: FLAG_RUN,
                changes: "CFC with `protocol.cfc_flag_reprogram`: every commit flag a separate partial program, on the same aged device",
                rule: Rule::Value(-0.13),
                base: g(at("afc")?, cfc),
                ablated: g(at("afc")?, ab.flag),
                show: &show,
                detail: format!(
                    "CFC's separate commit-flag programs {} → {}, GC flag moves {} → {}, throughput {:.1} → {:.1} tx/s",
                    flags(cfc, "commit_flag_programs"),
                    flags(ab.flag, "commit_flag_programs"),
                    flags(cfc, "gc_flag_programs"),
                    flags(ab.flag, "gc_flag_programs"),
                    cfc.tput(),
                    ab.flag.tput()
                ),
            }.candidate(),
        ));
    }

    // Recovery (Fig. 13b): AFC ÷ CFC on the aged device and on an empty one.
    {
        let base = recovery_ns(at("afc")?) / recovery_ns(at("cfc")?);
        let abl = recovery_ns(ab.fresh_afc) / recovery_ns(ab.fresh_cfc);
        let afc = at("afc")?;
        let pages = |r: &Res| r.m.recovery.map_or(0, |x| x.pages_read);
        let cause = format!(
            "the cold data of the aged device. Every protocol's recovery scans the device's blocks, most of which hold the cold data the ageing wrote beyond the database's pages, so AFC's flag-chain reads add little to the scan's time (AFC's recovery read {} pages, CFC's {}, the database's own pages among them); the paper's 32 GB device held a 2 GB database (Table 2).",
            pages(afc),
            pages(at("cfc")?)
        );
        let show = |v: f64| format!("AFC's recovery ÷ CFC's {v:.2}");
        expl.push((
            "flagcommit-fig13b-afc-longest".into(),
            Test {
                class: CauseClass::Setup,
                cause: &cause,
                run: &fresh_run("afc"),
                changes: &format!("AFC and CFC (`{}`) at δ = 5 % on an empty device (no cold data, the database unmapped, no warm-up); the claim's CFC, BPCC and SCC recover alike here, CFC stands for them", fresh_run("cfc")),
                rule: Rule::Above(MAGNITUDE_HIGH),
                base,
                ablated: abl,
                show: &show,
                detail: format!(
                    "recovery AFC {:.1} ms, CFC {:.1} ms, pages read {} and {}",
                    recovery_ns(ab.fresh_afc) / 1e6,
                    recovery_ns(ab.fresh_cfc) / 1e6,
                    pages(ab.fresh_afc),
                    pages(ab.fresh_cfc)
                ),
            }.candidate(),
        ));
    }

    // The database's scale (Figs. 16, 18, 19: CFC_ex / AFC_ex against WAL).
    let wh_claims: [(&str, &str, f64, &str); 8] = [
        ("flagcommit-fig16-cfcex-vs-wal", "cfc-ex", 0.49, ""),
        ("flagcommit-fig16-afcex-vs-wal", "afc-ex", 0.51, ""),
        (
            "flagcommit-fig18-short",
            "cfc-ex",
            0.64,
            " (over every transaction size, not only short ones)",
        ),
        (
            "flagcommit-fig18-long",
            "cfc-ex",
            0.46,
            " (over every transaction size, not only long ones)",
        ),
        (
            "flagcommit-fig19-cfc-ex-vs-wal-small",
            "cfc-ex",
            0.24,
            " (at 512 frames, not the claim's smallest buffer)",
        ),
        (
            "flagcommit-fig19-cfc-ex-vs-wal-large",
            "cfc-ex",
            0.83,
            " (at 512 frames, not the claim's largest buffer)",
        ),
        (
            "flagcommit-fig19-afc-ex-vs-wal-small",
            "afc-ex",
            0.34,
            " (at 512 frames, not the claim's smallest buffer)",
        ),
        (
            "flagcommit-fig19-afc-ex-vs-wal-large",
            "afc-ex",
            0.83,
            " (at 512 frames, not the claim's largest buffer)",
        ),
    ];
    match &ab.wh {
        Some(w) => {
            let [lo, hi] = w.warehouses;
            let cause = format!(
                "the database's scale: {lo} warehouses instead of Table 2's {hi}. With 50 clients, TPC-C's hot warehouse and district rows are shared by {:.1} clients per warehouse instead of {:.1}; CFC_ex and AFC_ex admit at most max_c = {MAX_C} updaters per DB page (Algorithm 1) and block the rest, where WAL's record locks do not.",
                f64::from(plan.clients) / f64::from(lo),
                f64::from(plan.clients) / f64::from(hi)
            );
            let changes = format!(
                "CFC_ex, AFC_ex and WAL at {lo} and at {hi} warehouses, both on one empty device with {} blocks per plane (large enough for {hi}); the claim's quantity is compared between the two",
                w.blocks_per_plane
            );
            for (id, s, paper, scope) in wh_claims {
                let name = if s == "cfc-ex" { "CFC_ex" } else { "AFC_ex" };
                let show = |v: f64| format!("{name} vs WAL {}{scope}", pct(v));
                let run = wh_run(s, hi, w.blocks_per_plane);
                let changes = format!(
                    "{changes} (with `{}`, `{}`, `{}`)",
                    wh_run("wal", hi, w.blocks_per_plane),
                    wh_run(s, lo, w.blocks_per_plane),
                    wh_run("wal", lo, w.blocks_per_plane)
                );
                expl.push((
                    id.into(),
                    Test {
                        class: CauseClass::Setup,
                        cause: &cause,
                        run: &run,
                        changes: &changes,
                        rule: Rule::Value(paper),
                        base: w.gap(0, s)?,
                        ablated: w.gap(1, s)?,
                        show: &show,
                        detail: format!(
                            "throughput at {lo} / {hi} warehouses: {name} {:.1} / {:.1}, WAL {:.1} / {:.1} tx/s",
                            w.at(0, s)?.tput(),
                            w.at(1, s)?.tput(),
                            w.at(0, "wal")?.tput(),
                            w.at(1, "wal")?.tput()
                        ),
                    }.candidate(),
                ));
            }
        }
        None => {
            let wal = x.frames(FRAMES, "wal")?;
            for (id, s, _, _) in wh_claims {
                let r = x.frames(FRAMES, s)?;
                expl.push((
                    id.into(),
                    matched(
                        &format!(
                            "the database's scale: the run is at Table 2's {} warehouses with {} clients",
                            plan.warehouses, plan.clients
                        ),
                        &format!("flagcommit {s} max_c={MAX_C}"),
                        format!(
                            "{} {:.1} tx/s, WAL {:.1} tx/s ({}) at {} warehouses",
                            s.to_uppercase().replace("-EX", "_ex"),
                            r.tput(),
                            wal.tput(),
                            pct(r.tput() / wal.tput() - 1.0),
                            plan.warehouses
                        ),
                    ),
                ));
            }
            // Fig. 18's two classes (the gains compared, and GC per commit on long
            // transactions), on the claims' own short- and long-transaction runs.
            for id in fig18_matched_ids() {
                expl.push((
                    id.into(),
                    matched(
                        &format!(
                            "the database's scale: the run is at Table 2's {} warehouses with {} clients",
                            plan.warehouses, plan.clients
                        ),
                        "flagcommit cfc-ex long txns",
                        fig18_classes_text(x)?,
                    ),
                ));
            }
        }
    }

    // Table 3: controller memory on a device closer to the paper's 32 GB.
    let mb = |r: &Res| r.dram_bytes as f64 / 1e6;
    let mem_claims: [(&str, &str, Option<&str>, f64); 6] = [
        ("flagcommit-table3-cfc-total", "cfc", None, 59.88),
        ("flagcommit-table3-afc-total", "afc", None, 59.88),
        ("flagcommit-table3-bpcc-total", "bpcc", None, 63.10),
        ("flagcommit-table3-scc-total", "scc", None, 60.24),
        (
            "flagcommit-table3-cfc-vs-bpcc",
            "bpcc",
            Some("cfc"),
            63.10 - 59.88,
        ),
        (
            "flagcommit-table3-cfc-vs-scc",
            "scc",
            Some("cfc"),
            60.24 - 59.88,
        ),
    ];
    match &ab.wh {
        Some(w) => {
            let own_bpp = b.nand.blocks_per_plane;
            let cap = |bpp: u32| {
                let mut n = b.nand.clone();
                n.blocks_per_plane = bpp;
                n.geometry().capacity_bytes() as f64 / f64::from(1u32 << 30)
            };
            let cause = format!(
                "the device's capacity: the FTL's tables (mapping, reverse map, page flags) and SCC's and BPCC's per-page tables grow with the device, which is {:.0} GiB here against the paper's 32 GB (Table 2).",
                cap(own_bpp)
            );
            let mem = |p: &str| -> Result<&Res, String> {
                let i = DEVICE
                    .iter()
                    .position(|&x| x == p)
                    .ok_or("no such protocol")?;
                Ok(w.memory[i])
            };
            // The larger device is empty; ageing does not change the tables' size (CFC on
            // the claims' device: aged and empty, below).
            let detail = format!(
                "CFC on the {:.0} GiB device aged {:.2} MB, empty {:.2} MB",
                cap(own_bpp),
                mb(at("cfc")?),
                mb(ab.fresh_cfc)
            );
            for (id, p, minus, paper) in mem_claims {
                // CFC's and AFC's saving against `p` (the claim takes the larger of the two).
                let q = |r: &dyn Fn(&str) -> Result<f64, String>| -> Result<f64, String> {
                    Ok(match minus {
                        Some(_) => r(p)? - r("cfc")?.max(r("afc")?),
                        None => r(p)?,
                    })
                };
                let base = q(&|x| at(x).map(mb))?;
                let abl = q(&|x| mem(x).map(mb))?;
                let label = match minus {
                    Some(_) => format!("CFC's and AFC's saving against {}", p.to_uppercase()),
                    None => format!("{}'s memory", p.to_uppercase()),
                };
                let show = |v: f64| format!("{label} {v:.2} MB");
                let changes = format!(
                    "the four device protocols at δ = 5 % on an empty {:.0} GiB device ({} blocks per plane; with `{}` for the other protocols)",
                    cap(w.blocks_per_plane),
                    w.blocks_per_plane,
                    DEVICE
                        .iter()
                        .filter(|&&x| x != p)
                        .map(|x| mem_run(x, w.blocks_per_plane))
                        .collect::<Vec<_>>()
                        .join("`, `")
                );
                expl.push((
                    id.into(),
                    Test {
                        class: CauseClass::Setup,
                        cause: &cause,
                        run: &mem_run(p, w.blocks_per_plane),
                        changes: &changes,
                        rule: Rule::Value(paper),
                        base,
                        ablated: abl,
                        show: &show,
                        detail: detail.clone(),
                    }
                    .candidate(),
                ));
            }
        }
        None => {
            let gib = b.nand.geometry().capacity_bytes() as f64 / f64::from(1u32 << 30);
            for (id, p, _, _) in mem_claims {
                expl.push((
                    id.into(),
                    matched(
                        &format!("the device's capacity: the run is on Table 2's 32 GB device ({gib:.0} GiB)"),
                        &format!("flagcommit {p} δ=5%"),
                        format!(
                            "{} needs {:.2} MB (its own tables {:.2} MB)",
                            p.to_uppercase(),
                            mb(at(p)?),
                            at(p)?.protocol_dram_bytes as f64 / 1e6
                        ),
                    ),
                ));
            }
        }
    }

    // Figs. 15 and 16 at the database's scale: the same pair of empty devices as Figs. 16,
    // 18 and 19 against WAL, with CFC_ex and AFC_ex at max_c = 2 and CFC and AFC under
    // device-tx at both warehouse counts.
    let fig15_16: [(String, &str, Option<&str>, f64); 6] = [
        ("flagcommit-fig15a-cfc-ex".into(), "cfc-ex", None, 0.13),
        ("flagcommit-fig15a-afc-ex".into(), "afc-ex", None, 0.13),
        (
            "flagcommit-fig15b-cfc-ex".into(),
            "cfc-ex",
            Some("restarts"),
            -0.40,
        ),
        (
            "flagcommit-fig15b-afc-ex".into(),
            "afc-ex",
            Some("restarts"),
            -0.40,
        ),
        (
            "flagcommit-fig16-cfcex-vs-cfc".into(),
            "cfc-ex",
            Some("cfc"),
            0.64,
        ),
        (
            "flagcommit-fig16-afcex-vs-afc".into(),
            "afc-ex",
            Some("afc"),
            0.53,
        ),
    ];
    match &ab.wh {
        Some(w) => {
            let [lo, hi] = w.warehouses;
            let bpp = w.blocks_per_plane;
            for (id, s, vs, paper) in &fig15_16 {
                let name = s.to_uppercase().replace("-EX", "_ex");
                let rr = |r: &Res| r.restart_ratio();
                // The claim's quantity at the pair's k-th warehouse count.
                let q = |k: usize| -> Result<f64, String> {
                    let three = w.at(k, s)?;
                    Ok(match vs {
                        None => three.tput() / w.max_c2(k, s).tput() - 1.0,
                        Some("restarts") => {
                            let two = rr(w.max_c2(k, s));
                            if two > 0.0 {
                                rr(three) / two - 1.0
                            } else {
                                f64::NAN
                            }
                        }
                        Some(p) => three.tput() / w.device(k, p)?.tput() - 1.0,
                    })
                };
                let (cause, run, changes, show, detail): (String, String, String, Box<dyn Fn(f64) -> String>, String) = match vs {
                    Some(p) if *p != "restarts" => {
                        let pn = p.to_uppercase();
                        (
                            format!(
                                "the database's scale: {lo} warehouses instead of Table 2's {hi}. With {} clients, TPC-C's hot warehouse, district and stock pages are shared by {:.1} clients per warehouse instead of {:.1}; {pn} runs under device-tx with page-level locks (§5.2) and conflicts on those pages more than {name}'s record-level locks, so the gain of record-level locking (§5.3.2's first cause) grows as the database shrinks.",
                                plan.clients,
                                f64::from(plan.clients) / f64::from(lo),
                                f64::from(plan.clients) / f64::from(hi)
                            ),
                            wh_run(&format!("{p} δ=5%"), hi, bpp),
                            format!(
                                "{name} and {pn} at {lo} and at {hi} warehouses, all on one empty device with {bpp} blocks per plane (with `{}`, `{}`, `{}`)",
                                wh_run(s, hi, bpp),
                                wh_run(s, lo, bpp),
                                mem_run(p, bpp)
                            ),
                            {
                                let n = name.clone();
                                Box::new(move |v: f64| format!("{n} vs {pn} throughput {}", pct(v)))
                            },
                            format!(
                                "throughput at {lo} / {hi} warehouses: {} {:.1} / {:.1}, {} {:.1} / {:.1} tx/s; restarts per commit {} {:.4} / {:.4}, {} {:.4} / {:.4}",
                                s.to_uppercase().replace("-EX", "_ex"),
                                w.at(0, s)?.tput(),
                                w.at(1, s)?.tput(),
                                p.to_uppercase(),
                                w.device(0, p)?.tput(),
                                w.device(1, p)?.tput(),
                                s.to_uppercase().replace("-EX", "_ex"),
                                rr(w.at(0, s)?),
                                rr(w.at(1, s)?),
                                p.to_uppercase(),
                                rr(w.device(0, p)?),
                                rr(w.device(1, p)?)
                            ),
                        )
                    }
                    _ => (
                        format!(
                            "the database's scale: {lo} warehouses instead of Table 2's {hi}. With {} clients, TPC-C's hot pages are shared by {:.1} clients per warehouse instead of {:.1}, so more transactions contend for max_c's admission to one DB page (Algorithm 1) and raising max_c from 2 to 3 unblocks more of them.",
                            plan.clients,
                            f64::from(plan.clients) / f64::from(lo),
                            f64::from(plan.clients) / f64::from(hi)
                        ),
                        wh_run(&format!("{s} max_c=2"), hi, bpp),
                        format!(
                            "{name} at max_c = 2 and 3, at {lo} and at {hi} warehouses, all on one empty device with {bpp} blocks per plane (with `{}`, `{}`, `{}`)",
                            wh_run(s, hi, bpp),
                            wh_run(&format!("{s} max_c=2"), lo, bpp),
                            wh_run(s, lo, bpp)
                        ),
                        {
                            let n = name.clone();
                            let restarts = vs.is_some();
                            Box::new(move |v: f64| {
                                if restarts {
                                    format!("{n}'s restart ratio max_c 2 → 3 {}", pct(v))
                                } else {
                                    format!("{n}'s throughput max_c 2 → 3 {}", pct(v))
                                }
                            })
                        },
                        format!(
                            "at {lo} / {hi} warehouses: {name} {:.1} → {:.1} / {:.1} → {:.1} tx/s, restarts {} → {} / {} → {} (max_c 2 → 3)",
                            w.max_c2(0, s).tput(),
                            w.at(0, s)?.tput(),
                            w.max_c2(1, s).tput(),
                            w.at(1, s)?.tput(),
                            w.max_c2(0, s).m.txns_restarted,
                            w.at(0, s)?.m.txns_restarted,
                            w.max_c2(1, s).m.txns_restarted,
                            w.at(1, s)?.m.txns_restarted
                        ),
                    ),
                };
                expl.push((
                    id.clone(),
                    Test {
                        class: CauseClass::Setup,
                        cause: &cause,
                        run: &run,
                        changes: &changes,
                        rule: Rule::Value(*paper),
                        base: q(0)?,
                        ablated: q(1)?,
                        show: &*show,
                        detail,
                    }
                    .candidate(),
                ));
            }
        }
        None => {
            for (id, s, vs, _) in &fig15_16 {
                let r = x.ext(MAX_C, s)?;
                expl.push((
                    id.clone(),
                    matched(
                        &format!(
                            "the database's scale: the run is at Table 2's {} warehouses with {} clients",
                            plan.warehouses, plan.clients
                        ),
                        &format!("flagcommit {s} max_c={MAX_C}"),
                        format!(
                            "{} {:.1} tx/s, {} restarts in {} commits{}",
                            s.to_uppercase().replace("-EX", "_ex"),
                            r.tput(),
                            r.m.txns_restarted,
                            r.m.txns_committed,
                            match vs {
                                Some(p) if *p != "restarts" => format!(
                                    "; {} {:.1} tx/s",
                                    p.to_uppercase(),
                                    at(p)?.tput()
                                ),
                                _ => String::new(),
                            }
                        ),
                    ),
                ));
            }
        }
    }

    // Figs. 14, 18 (short transactions) and 19 (AFC_ex and CFC_ex converging): the buffer's
    // share of the database.
    let (d_lo, d_hi, d_mid) = fig14_deltas(x.deltas);
    let pcts = |d: f64| format!("{:.0} %", d * 100.0);
    let counter = |r: &Res, k: &str| r.m.strategy_counters.get(k).copied().unwrap_or(0);
    // The claims of this group: id, and the quantity (a function of the runs at the
    // claims' buffer or at the share's) with its rule.
    // The device runs' (throughput, GC per committed transaction) at (protocol, δ).
    type Runs<'r> = dyn Fn(&str, f64) -> Result<(f64, f64), String> + 'r;
    struct Q {
        id: String,
        rule: Rule,
        what: String,
    }
    let fig14_claims: Vec<Q> = {
        let mut v = Vec::new();
        for (p, a, bb) in [("bpcc", 0.12, 0.47), ("scc", 0.77, 1.53)] {
            for (end, paper) in [("low", a), ("high", bb)] {
                v.push(Q {
                    id: format!("flagcommit-fig14-cfc-vs-{p}-{end}"),
                    rule: Rule::Value(paper),
                    what: format!("{p} {end}"),
                });
            }
            v.push(Q {
                id: format!("flagcommit-fig14-cfc-vs-{p}-grows"),
                rule: Rule::Above(0.0),
                what: format!("{p} grows"),
            });
        }
        v.push(Q {
            id: "flagcommit-fig14-crossing".into(),
            rule: Rule::Above(0.0),
            what: "crossing".into(),
        });
        v.push(Q {
            id: "flagcommit-fig14-decreasing".into(),
            rule: Rule::Above(0.0),
            what: "decreasing".into(),
        });
        v.push(Q {
            id: "flagcommit-fig14-cfc-rises".into(),
            rule: Rule::Above(0.0),
            what: "rises".into(),
        });
        for (p, paper) in [("bpcc", 0.38), ("scc", 0.72)] {
            v.push(Q {
                id: format!("flagcommit-fig14b-gc-{p}"),
                rule: Rule::Value(paper),
                what: format!("{p} gc"),
            });
        }
        v
    };
    // A Fig. 14 quantity from the device runs `at(δ, protocol)`.
    let q14 = |q: &Q, at: &Runs<'_>| -> Result<(f64, String), String> {
        let t = |d: f64, p: &str| at(p, d).map(|r| r.0);
        let words: Vec<&str> = q.what.split(' ').collect();
        Ok(match words.as_slice() {
            [p, "low"] => (
                t(d_lo, "cfc")? / t(d_lo, p)? - 1.0,
                format!("CFC vs {} at δ = {}", p.to_uppercase(), pcts(d_lo)),
            ),
            [p, "high"] => (
                t(d_hi, "cfc")? / t(d_hi, p)? - 1.0,
                format!("CFC vs {} at δ = {}", p.to_uppercase(), pcts(d_hi)),
            ),
            [p, "grows"] => (
                (t(d_hi, "cfc")? / t(d_hi, p)? - 1.0) - (t(d_lo, "cfc")? / t(d_lo, p)? - 1.0),
                format!(
                    "CFC's gap over {} at δ = {} minus at δ = {}",
                    p.to_uppercase(),
                    pcts(d_hi),
                    pcts(d_lo)
                ),
            ),
            ["crossing"] => (
                t(d_hi, "cfc")? / t(d_hi, "afc")? - 1.0,
                format!(
                    "CFC vs AFC at δ = {} (the claim has CFC above AFC beyond 15 %)",
                    pcts(d_hi)
                ),
            ),
            ["decreasing"] => (
                ["afc", "bpcc", "scc"]
                    .iter()
                    .map(|p| Ok(1.0 - t(d_hi, p)? / t(d_lo, p)?))
                    .collect::<Result<Vec<f64>, String>>()?
                    .into_iter()
                    .fold(f64::INFINITY, f64::min),
                format!(
                    "the smallest throughput fall of AFC, BPCC and SCC from δ = {} to {}",
                    pcts(d_lo),
                    pcts(d_hi)
                ),
            ),
            ["rises"] => (
                t(d_mid, "cfc")? / t(d_lo, "cfc")? - 1.0,
                format!(
                    "CFC's throughput change from δ = {} to {}",
                    pcts(d_lo),
                    pcts(d_mid)
                ),
            ),
            [p, "gc"] => {
                let g = |d: f64| at(p, d).map(|r| r.1);
                (
                    g(d_hi)? / g(d_lo)?.max(1.0) - 1.0,
                    format!(
                        "{}'s GC per committed transaction from δ = {} to {}",
                        p.to_uppercase(),
                        pcts(d_lo),
                        pcts(d_hi)
                    ),
                )
            }
            _ => return Err(format!("internal: no Fig. 14 quantity {}", q.what)),
        })
    };
    let claims_at = |p: &str, d: f64| x.dev(d, p).map(|r| (r.tput(), r.gc_per_commit_ns()));
    match &ab.share {
        Some(sh) => {
            let f = sh.share.frames(FRAMES);
            let [lo_wh, hi_wh] = sh.share.warehouses;
            let held = sh.share.paper as f64 / sh.share.ours.max(1) as f64;
            // The cause, with the mechanism each figure's text names for it.
            let share_cause = |mechanism: &str, frames: &str| {
                format!(
                    "the buffer's share of the database. Table 2's {FRAMES} frames are far smaller than its {hi_wh}-warehouse database (§5.1; {} data pages here); the plan's {lo_wh} warehouses have {} data pages, so the same frames hold {held:.1}× that share and fewer pages reach flash before commit; {mechanism}. {frames} hold Table 2's share of this database.",
                    sh.share.paper, sh.share.ours
                )
            };
            let cause = share_cause(
                "under device-tx fewer pages of in-progress transactions are stolen (§5.1: every page but the last shadow page may be), the uncommitted pages §5.2 and Fig. 14 name as SCC's and BPCC's cost at high δ (SCC must reclaim them, BPCC must keep obsolete ones) and that AFC flags when their transaction aborts",
                &format!("{f} frames"),
            );
            let cause18 = share_cause(
                "§5.3.3's mechanism for short transactions is that their pages are more likely written back before commit, so CFC_ex and AFC_ex need no commit log record, and WAL's rollbacks rewrite pages already on flash",
                &format!("{f} frames"),
            );
            let [f19_lo, f19_hi] = sh.frames;
            let cause19 = share_cause(
                "§5.4's mechanism for the gap between AFC_ex and CFC_ex is that a larger buffer performs more of their flag updates in main memory, so the gap shrinks as the buffer grows",
                &format!(
                    "{} and {} frames (for {f19_lo} and {f19_hi})",
                    sh.share.frames(f19_lo),
                    sh.share.frames(f19_hi)
                ),
            );
            let share_at = |p: &str, d: f64| sh.dev(d, p).map(|r| (r.tput(), r.gc_per_commit_ns()));
            let steal = |r: &Res| {
                (
                    counter(r, "stolen_pages"),
                    counter(r, "uncommitted_pages_left"),
                )
            };
            for q in &fig14_claims {
                let (base, what) = q14(q, &claims_at)?;
                let (abl, _) = q14(q, &share_at)?;
                let (p, d) = fig14_run(&q.what, d_lo, d_hi, d_mid);
                let run = sh.label(&format!("flagcommit {p} δ={:.0}%", d * 100.0), FRAMES);
                let changes = format!(
                    "the device protocols at δ = {} and {} (CFC also at {}) with {f} buffer frames instead of {FRAMES}, on the claims' aged devices",
                    pcts(d_lo), pcts(d_hi), pcts(d_mid)
                );
                let detail = {
                    let mut v = Vec::new();
                    for pp in if p == "cfc" {
                        vec!["cfc"]
                    } else {
                        vec!["cfc", p]
                    } {
                        for dd in [d_lo, d] {
                            let (a, b2) = (x.dev(dd, pp)?, sh.dev(dd, pp)?);
                            let ((s0, u0), (s1, u1)) = (steal(a), steal(b2));
                            v.push(format!(
                                "{} at δ = {}: pages stolen {s0} → {s1}, uncommitted pages left on flash {u0} → {u1}, GC share {:.1} → {:.1} %",
                                pp.to_uppercase(),
                                pcts(dd),
                                a.m.gc_share * 100.0,
                                b2.m.gc_share * 100.0
                            ));
                        }
                    }
                    v.dedup();
                    format!("at {FRAMES} → {f} frames: {}", v.join("; "))
                };
                let show = |v: f64| format!("{what} {}", pct(v));
                expl.push((
                    q.id.clone(),
                    Test {
                        class: CauseClass::Setup,
                        cause: &cause,
                        run: &run,
                        changes: &changes,
                        rule: q.rule,
                        base,
                        ablated: abl,
                        show: &show,
                        detail,
                    }
                    .candidate(),
                ));
            }
            // Fig. 18's short transactions: CFC_ex's gain and GC against WAL.
            let changes18 = format!(
                "CFC_ex, AFC_ex and WAL on short transactions only with {f} buffer frames instead of {FRAMES}, on the claims' aged device"
            );
            let cx = |r: &Res| r.tput();
            for (id, s, gc, paper) in [
                ("flagcommit-fig18-short", "cfc-ex", false, 0.64),
                ("flagcommit-fig18-gc-short-cfc-ex", "cfc-ex", true, -0.845),
                ("flagcommit-fig18-gc-short-afc-ex", "afc-ex", true, -0.845),
            ] {
                let name = s.to_uppercase().replace("-EX", "_ex");
                let quant = |a: &Res, wal: &Res| {
                    if gc {
                        a.gc_per_commit_ns() / wal.gc_per_commit_ns().max(1.0) - 1.0
                    } else {
                        cx(a) / cx(wal) - 1.0
                    }
                };
                let (a0, w0) = (x.size(false, s)?, x.size(false, "wal")?);
                let (a1, w1) = (sh.short(s)?, sh.short("wal")?);
                let show = |v: f64| {
                    format!(
                        "{name} vs WAL {} on short transactions {}",
                        if gc { "GC per commit" } else { "throughput" },
                        pct(v)
                    )
                };
                expl.push((
                    id.into(),
                    Test {
                        class: CauseClass::Setup,
                        cause: &cause18,
                        run: &sh.label(&format!("flagcommit {s} short txns"), FRAMES),
                        changes: &changes18,
                        rule: Rule::Value(paper),
                        base: quant(a0, w0),
                        ablated: quant(a1, w1),
                        show: &show,
                        detail: format!(
                            "at {FRAMES} → {f} frames: {name} {:.1} → {:.1} tx/s, GC {:.3} → {:.3} ms per commit, log pages {} → {}; WAL {:.1} → {:.1} tx/s, GC {:.3} → {:.3} ms per commit, log pages {} → {}",
                            cx(a0), cx(a1),
                            a0.gc_per_commit_ns() / 1e6, a1.gc_per_commit_ns() / 1e6,
                            a0.m.log_pages, a1.m.log_pages,
                            cx(w0), cx(w1),
                            w0.gc_per_commit_ns() / 1e6, w1.gc_per_commit_ns() / 1e6,
                            w0.m.log_pages, w1.m.log_pages
                        ),
                    }
                    .candidate(),
                ));
            }
            // Fig. 19: AFC_ex's and CFC_ex's gap, smaller at the largest buffer than at the
            // smallest.
            {
                let [fl, fh] = sh.frames;
                let gap = |a: &Res, c: &Res| (a.tput() / c.tput() - 1.0).abs();
                let base = gap(x.frames(fl, "afc-ex")?, x.frames(fl, "cfc-ex")?)
                    - gap(x.frames(fh, "afc-ex")?, x.frames(fh, "cfc-ex")?);
                let abl = gap(sh.ext(0, "afc-ex")?, sh.ext(0, "cfc-ex")?)
                    - gap(sh.ext(1, "afc-ex")?, sh.ext(1, "cfc-ex")?);
                let show = |v: f64| {
                    format!(
                        "|AFC_ex ÷ CFC_ex − 1| at the smallest buffer minus at the largest {}",
                        pct(v)
                    )
                };
                expl.push((
                    "flagcommit-fig19-afc-cfc-converge".into(),
                    Test {
                        class: CauseClass::Setup,
                        cause: &cause19,
                        run: &sh.label("flagcommit afc-ex", fl),
                        changes: &format!(
                            "CFC_ex and AFC_ex with {} and {} buffer frames (Table 2's share of {fl} and {fh}) instead of {fl} and {fh}, on the claims' aged device",
                            sh.share.frames(fl),
                            sh.share.frames(fh)
                        ),
                        rule: Rule::Above(0.0),
                        base,
                        ablated: abl,
                        show: &show,
                        detail: format!(
                            "|AFC_ex ÷ CFC_ex − 1| {} at {} and {} at {} frames; partial programs CFC_ex {} / AFC_ex {} at {} frames",
                            pct(gap(sh.ext(0, "afc-ex")?, sh.ext(0, "cfc-ex")?)),
                            sh.share.frames(fl),
                            pct(gap(sh.ext(1, "afc-ex")?, sh.ext(1, "cfc-ex")?)),
                            sh.share.frames(fh),
                            sh.ext(0, "cfc-ex")?.m.nand_partial_programs,
                            sh.ext(0, "afc-ex")?.m.nand_partial_programs,
                            sh.share.frames(fl)
                        ),
                    }
                    .candidate(),
                ));
                // Fig. 19 / §5.4: the two converged at the largest buffer (within the
                // sameness band): the band less the gap there, above zero when it holds.
                let band = |a: &Res, c: &Res| crate::SAME_WITHIN - gap(a, c);
                let show = |v: f64| {
                    format!(
                        "the {:.0} % sameness band less |AFC_ex ÷ CFC_ex − 1| at the largest buffer {}",
                        crate::SAME_WITHIN * 100.0,
                        pct(v)
                    )
                };
                expl.push((
                    "flagcommit-fig19-afc-cfc-converged".into(),
                    Test {
                        class: CauseClass::Setup,
                        cause: &cause19,
                        run: &sh.label("flagcommit afc-ex", fh),
                        changes: &format!(
                            "CFC_ex and AFC_ex with {} buffer frames (Table 2's share of {fh}) instead of {fh}, on the claims' aged device",
                            sh.share.frames(fh)
                        ),
                        rule: Rule::Above(0.0),
                        base: band(x.frames(fh, "afc-ex")?, x.frames(fh, "cfc-ex")?),
                        ablated: band(sh.ext(1, "afc-ex")?, sh.ext(1, "cfc-ex")?),
                        show: &show,
                        detail: format!(
                            "|AFC_ex ÷ CFC_ex − 1| {} at {fh} frames, {} at {}; partial programs CFC_ex {} / AFC_ex {} at {fh}",
                            pct(gap(x.frames(fh, "afc-ex")?, x.frames(fh, "cfc-ex")?)),
                            pct(gap(sh.ext(1, "afc-ex")?, sh.ext(1, "cfc-ex")?)),
                            sh.share.frames(fh),
                            x.frames(fh, "cfc-ex")?.m.nand_partial_programs,
                            x.frames(fh, "afc-ex")?.m.nand_partial_programs,
                        ),
                    }
                    .candidate(),
                ));
            }
        }
        None => {
            let cause = format!(
                "the buffer's share of the database: the run has Table 2's {FRAMES} frames against its {} warehouses",
                plan.warehouses
            );
            for q in &fig14_claims {
                let (p, d) = fig14_run(&q.what, d_lo, d_hi, d_mid);
                let r = x.dev(d, p)?;
                expl.push((
                    q.id.clone(),
                    matched(
                        &cause,
                        &format!("flagcommit {p} δ={:.0}%", d * 100.0),
                        format!(
                            "{} at δ = {}: {} pages stolen, {} uncommitted pages left on flash, GC share {:.1} %",
                            p.to_uppercase(),
                            pcts(d),
                            counter(r, "stolen_pages"),
                            counter(r, "uncommitted_pages_left"),
                            r.m.gc_share * 100.0
                        ),
                    ),
                ));
            }
            // Fig. 18's classes at Table 2's buffer against its database (the short-transaction
            // ablation's setting), and Fig. 19b's GC over the swept buffers, which are the
            // paper's against Table 2's database.
            for id in fig18_matched_ids() {
                expl.push((
                    id.into(),
                    matched(
                        &cause,
                        "flagcommit cfc-ex long txns",
                        fig18_classes_text(x)?,
                    ),
                ));
            }
            let frames = plan.frames();
            if let (Some(&lo), Some(&hi)) = (frames.first(), frames.last()) {
                for s in EXTENDED {
                    let gc = |n: u32| x.frames(n, s).map(|r| r.m.gc_time_ns as f64 / 1e6);
                    let (a, b2) = (x.frames(lo, s)?, x.frames(hi, s)?);
                    expl.push((
                        format!("flagcommit-fig19b-gc-{s}"),
                        matched(
                            &format!(
                                "the buffer's share of the database: the sweep's {lo} to {hi} frames are Table 2's buffer sizes against its {} warehouses",
                                plan.warehouses
                            ),
                            &format!("flagcommit {s} {lo} frames"),
                            format!(
                                "{} GC {:.0} → {:.0} ms, {} → {} erases, {} → {} log pages, {:.1} → {:.1} tx/s from {lo} to {hi} frames",
                                s.to_uppercase().replace("-EX", "_ex"),
                                gc(lo)?,
                                gc(hi)?,
                                a.m.nand_erases,
                                b2.m.nand_erases,
                                a.m.log_pages,
                                b2.m.log_pages,
                                a.tput(),
                                b2.tput()
                            ),
                        ),
                    ));
                }
            }
            for (id, s) in [
                ("flagcommit-fig18-gc-short-cfc-ex", "cfc-ex"),
                ("flagcommit-fig18-gc-short-afc-ex", "afc-ex"),
                ("flagcommit-fig19-afc-cfc-converge", "afc-ex"),
                ("flagcommit-fig19-afc-cfc-converged", "afc-ex"),
            ] {
                let r = x.frames(FRAMES, s)?;
                expl.push((
                    id.into(),
                    matched(
                        &cause,
                        &format!("flagcommit {s} max_c={MAX_C}"),
                        format!(
                            "{} {:.1} tx/s, GC {:.3} ms per commit",
                            s.to_uppercase().replace("-EX", "_ex"),
                            r.tput(),
                            r.gc_per_commit_ns() / 1e6
                        ),
                    ),
                ));
            }
        }
    }

    // Fig. 15 beyond max_c = 3: §5.3.1's second cause, merge reads, switched off.
    if x.max_cs.contains(&MAX_C_LARGE) {
        let merges = |r: &Res| {
            r.m.strategy_counters
                .get("fc_merge_reads")
                .copied()
                .unwrap_or(0)
        };
        for (k, s) in ["cfc-ex", "afc-ex"].into_iter().enumerate() {
            let name = s.to_uppercase().replace("-EX", "_ex");
            let (three, four) = (x.ext(MAX_C, s)?, x.ext(MAX_C_LARGE, s)?);
            let without = get(x.r, x.i_fig15_ablation + k)?;
            // The claim holds when throughput drops beyond max_c = 3: 1 − (max_c 4) ÷ (max_c 3)
            // above zero.
            let drop = |r: &Res| 1.0 - r.tput() / three.tput();
            let cause = format!(
                "§5.3.1's second cause of the drop beyond max_c = 3, reading a DB page's committed records scattered over its versions (§4.3's merge at a buffer miss; {name} read {} merged versions in {} commits at max_c = {MAX_C_LARGE}). The mechanism is modelled; switching it off measures its share of the change from max_c = {MAX_C} to {MAX_C_LARGE}.",
                merges(four),
                four.m.txns_committed
            );
            let run = no_merge_run(s);
            let show = |v: f64| {
                format!(
                    "{name}'s drop from max_c {MAX_C} to {MAX_C_LARGE} {}",
                    pct(v)
                )
            };
            expl.push((
                format!("flagcommit-fig15a-{s}-beyond-3"),
                Test {
                    class: CauseClass::Model,
                    cause: &cause,
                    run: &run,
                    changes: &format!("{name} at max_c = {MAX_C_LARGE} without merge reads (`host.fc_no_merge_reads`: one version read per buffer miss), on the same aged device"),
                    rule: Rule::Above(0.0),
                    base: drop(four),
                    ablated: drop(without),
                    show: &show,
                    detail: format!(
                        "{name} {:.1} tx/s at max_c = {MAX_C}, {:.1} with merge reads and {:.1} without at max_c = {MAX_C_LARGE}; restarts {} → {}",
                        three.tput(),
                        four.tput(),
                        without.tput(),
                        three.m.txns_restarted,
                        four.m.txns_restarted
                    ),
                }
                .candidate(),
            ));
            if s == "cfc-ex" {
                // The ablation claim itself: its own runs are the mechanism on and off.
                expl.push((
                    "flagcommit-fig15-ablation-merge-reads".into(),
                    matched(
                        "merge reads, the mechanism §5.3.1 names: the claim's two runs are CFC_ex with and without it",
                        &run,
                        format!(
                            "{} merged version reads in {} commits; CFC_ex {:.1} tx/s with them, {:.1} without",
                            merges(four),
                            four.m.txns_committed,
                            four.tput(),
                            without.tput()
                        ),
                    ),
                ));
            }
        }
    }

    // The trace series (`flagcommit-pg-…`): its workload is the kind §5.1 ran, a TPC-C
    // recorded from PostgreSQL, so that cause is matched in the claim's own run (a
    // `finding` by the one rule); the evidence beside it is the same figure on the
    // engine's TPC-C (the claim without `pg-`).
    let measured_of = |id: &str| {
        out.claims
            .iter()
            .find(|c| c.id == id)
            .map(|c| c.measured.clone())
    };
    for c in out
        .claims
        .iter()
        .filter(|c| c.id.starts_with("flagcommit-pg-"))
    {
        let twin = c.id.replacen("flagcommit-pg-", "flagcommit-", 1);
        let who =
            c.id.split('-')
                .skip(3)
                .find_map(|t| match t {
                    "cfcex" => Some("cfc-ex"),
                    "afcex" => Some("afc-ex"),
                    "afc" | "cfc" | "bpcc" | "scc" => Some(t),
                    _ => None,
                })
                .unwrap_or("cfc");
        let tpcc = match measured_of(&twin) {
            Some(m) => format!("; the engine's TPC-C (`{twin}`): {m}"),
            None => String::new(),
        };
        expl.push((
            c.id.clone(),
            matched(
                "the workload. §5.1 replayed TPC-C data accesses recorded from PostgreSQL; this claim replays such a recording (PostgreSQL 15, 1 warehouse, 10 clients recorded; the paper's: PostgreSQL 8.4, 20 warehouses, 50 clients)",
                &trace_run(who),
                format!("on the trace: {}{tpcc}", c.measured),
            ),
        ));
    }

    // The device's preparation of §5.3's points (Figs. 16 and 17): the claims' runs have
    // §5.1's, as §5.2's; the old preparation of CFC_ex, AFC_ex and WAL at the defaults
    // (and of CFC and AFC, above) is the evidence of what it changed. Matched in the claims'
    // own runs, so it is a `finding` by the one rule; tried before each claim's other causes, so
    // its evidence (both preparations' values) is the ablation shown when none accounts for it.
    let mut prep_ex: Vec<(String, cause::Candidate)> = Vec::new();
    let cfg_ex = strat(b, "cfc-ex");
    let ex_cause = format!(
        "the device's preparation. The claim's runs have §5.1's: the database's {} device pages on the device (CFC_ex / AFC_ex read them as version slot 0 holding each page as loaded), the rest of what CFC_ex may use ({} pages: its master, log and further version slots) unmapped, cold data beyond it, random overwrites of the database's own pages until GC runs, then a warm-up of 1/{WARMUP_DIVISOR} of the transactions before the measured window. The old preparation (the database unmapped, a cold buffer pool, every transaction measured) is run beside them",
        db_extent(&cfg_ex, page_bytes)?,
        host_extent(&cfg_ex, page_bytes)?,
    );
    // A quantity of `s`'s run: the claim's (`new`) or on the old preparation.
    let of = |s: &str, new: bool, q: &dyn Fn(&Res) -> f64| -> Result<f64, String> {
        let r = match (new, s) {
            (false, _) => ab.old(s)?,
            (true, "cfc-ex" | "afc-ex") => x.ext(MAX_C, s)?,
            (true, "wal") => x.frames(FRAMES, s)?,
            (true, _) => at(s)?,
        };
        Ok(q(r))
    };
    let name = |s: &str| match s {
        "cfc-ex" => "CFC_ex".to_string(),
        "afc-ex" => "AFC_ex".to_string(),
        other => other.to_uppercase(),
    };
    let runs = |ss: &[&str]| {
        ss.iter()
            .map(|s| format!("`{}`", old_run(s)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let tput = |r: &Res| r.tput();
    let commit = |r: &Res| r.m.commit_latency_ns.mean;
    let fig16: Vec<(String, &str, &str, &str, &dyn Fn(&Res) -> f64)> = FIG16A
        .iter()
        .map(|&(sfx, _, a, _, bw, _)| {
            (
                format!("flagcommit-{sfx}"),
                a,
                bw,
                "throughput",
                &tput as &dyn Fn(&Res) -> f64,
            )
        })
        .chain([
            (
                "flagcommit-fig16b-cfcex-commit".to_string(),
                "cfc-ex",
                "cfc",
                "mean commit time",
                &commit as &dyn Fn(&Res) -> f64,
            ),
            (
                "flagcommit-fig16b-afcex-commit".to_string(),
                "afc-ex",
                "afc",
                "mean commit time",
                &commit as &dyn Fn(&Res) -> f64,
            ),
        ])
        .collect();
    for (id, a, bw, what, q) in fig16 {
        let g = |new: bool| -> Result<f64, String> { Ok(of(a, new, q)? / of(bw, new, q)? - 1.0) };
        let show = |v: f64| format!("{} vs {} {what} {}", name(a), name(bw), pct(v));
        prep_ex.push((
            id,
            matched(
                &ex_cause,
                &old_run(a),
                vs_old(&show, g(true)?, g(false)?, &runs(&[a, bw])),
            ),
        ));
    }
    let log_pages = |r: &Res| r.m.log_pages as f64;
    let gc_ms = |r: &Res| r.m.gc_time_ns as f64 / 1e6;
    for (id, what, q) in [
        (
            "flagcommit-fig17a-log-pages",
            "log pages",
            &log_pages as &dyn Fn(&Res) -> f64,
        ),
        (
            "flagcommit-fig17b-gc",
            "GC ms",
            &gc_ms as &dyn Fn(&Res) -> f64,
        ),
    ] {
        let three = |new: bool| -> Result<String, String> {
            Ok(EXTENDED
                .iter()
                .map(|s| Ok(format!("{} {:.0}", name(s), of(s, new, q)?)))
                .collect::<Result<Vec<_>, String>>()?
                .join(", "))
        };
        prep_ex.push((
            id.into(),
            matched(
                &ex_cause,
                &old_run("wal"),
                format!(
                    "{what}: {} in the claim's runs against {} with the old preparation ({})",
                    three(true)?,
                    three(false)?,
                    runs(&EXTENDED)
                ),
            ),
        ));
    }
    expl.splice(0..0, prep_ex);
    // Out-of-date versions left mapped (Fig. 18b's long transactions, Fig. 18a's classes
    // compared, Fig. 19b's GC over the buffer): tried first, so a claim it does not explain
    // shows this ablation with the causes its own run already matches.
    expl.splice(0..0, reuse_tests(x, ab)?);
    cause::attach(out, &expl);
    Ok(())
}

/// Fig. 18b's long-transaction GC claim (the paper's −72.5 % against WAL) judged on a
/// slot-reuse run: `ns` is GC per commit in the claim's run, in the ablation and in WAL's
/// run; `detail` the runs' GC work.
fn reuse_gc_candidate(run: &str, name: &str, ns: [f64; 3], detail: String) -> cause::Candidate {
    let [base, ablated, wal] = ns;
    let show = |v: f64| pct(v);
    Test {
        class: CauseClass::Model,
        cause: REUSE_CAUSE,
        run,
        changes: REUSE_CHANGES,
        rule: Rule::Value(-0.725),
        base: base / wal - 1.0,
        ablated: ablated / wal - 1.0,
        show: &show,
        detail: format!(
            "{name} GC {:.3} → {:.3} ms per commit against WAL's {:.3}; {detail}",
            base / 1e6,
            ablated / 1e6,
            wal / 1e6
        ),
    }
    .candidate()
}

/// The slot-reuse ablation's candidates (`REUSE_CAUSE`), each judged on the claim's own
/// quantity computed from the ablation's run in place of the claim's.
fn reuse_tests(x: &Pts, ab: &Abl) -> Result<Vec<(String, cause::Candidate)>, String> {
    let mut out = Vec::new();
    let wal_long = x.size(true, "wal")?;
    // Fig. 19's buffers in ascending order (`Plan::frames`).
    let mut frames: Vec<u32> = std::iter::once(FRAMES)
        .chain(x.other_frames.iter().copied())
        .collect();
    frames.sort_unstable();
    let (f_lo, f_hi) = (frames_at(&frames, false), frames_at(&frames, true));
    let find = |s: &str, w: ReusePoint| ab.reuse.iter().find(|(a, b, _)| *a == s && *b == w);
    let show = |v: f64| pct(v);
    for (s, name) in [("cfc-ex", "CFC_ex"), ("afc-ex", "AFC_ex")] {
        let Some((_, _, ra)) = find(s, ReusePoint::Long) else {
            continue;
        };
        let base = x.size(true, s)?;
        let run = reuse_run(s, ReusePoint::Long, &frames);
        out.push((
            format!("flagcommit-fig18-gc-long-{s}"),
            reuse_gc_candidate(
                &run,
                name,
                [
                    base.gc_per_commit_ns(),
                    ra.gc_per_commit_ns(),
                    wal_long.gc_per_commit_ns(),
                ],
                format!(
                    "claim's run {}; ablation {}; WAL {}",
                    gc_work(base),
                    gc_work(ra),
                    gc_work(wal_long)
                ),
            ),
        ));
        if s == "cfc-ex" {
            // Fig. 18a's classes compared: the long class's gap with the ablation's CFC_ex.
            let (short, wal_short) = (x.size(false, s)?, x.size(false, "wal")?);
            let gs = short.tput() / wal_short.tput() - 1.0;
            let gl = base.tput() / wal_long.tput() - 1.0;
            let gl2 = ra.tput() / wal_long.tput() - 1.0;
            let show_d = |v: f64| format!("short − long {:+.1} points", v * 100.0);
            let test = Test {
                class: CauseClass::Model,
                cause: REUSE_CAUSE,
                run: &run,
                changes: REUSE_CHANGES,
                rule: Rule::Above(0.0),
                base: gs - gl,
                ablated: gs - gl2,
                show: &show_d,
                detail: format!(
                    "CFC_ex vs WAL on long transactions {} → {} ({:.1} → {:.1} tx/s against WAL's {:.1}), short {}",
                    pct(gl),
                    pct(gl2),
                    base.tput(),
                    ra.tput(),
                    wal_long.tput(),
                    pct(gs)
                ),
            };
            out.push(("flagcommit-fig18-short-gains-more".into(), test.candidate()));
        }
    }
    if let (Some((_, _, lo)), Some((_, _, hi))) = (
        find("cfc-ex", ReusePoint::Frames(false)),
        find("cfc-ex", ReusePoint::Frames(true)),
    ) {
        let (blo, bhi) = (x.frames(f_lo, "cfc-ex")?, x.frames(f_hi, "cfc-ex")?);
        let fall =
            |a: &Res, b: &Res| b.m.gc_time_ns as f64 / (a.m.gc_time_ns as f64).max(1.0) - 1.0;
        let run = format!(
            "{} and {}",
            reuse_run("cfc-ex", ReusePoint::Frames(false), &frames),
            reuse_run("cfc-ex", ReusePoint::Frames(true), &frames)
        );
        let test = Test {
            class: CauseClass::Model,
            cause: REUSE_CAUSE,
            run: &run,
            changes: REUSE_CHANGES,
            rule: Rule::Value(-0.71),
            base: fall(blo, bhi),
            ablated: fall(lo, hi),
            show: &show,
            detail: format!(
                "CFC_ex GC {:.0} → {:.0} ms from {f_lo} to {f_hi} frames (claim's runs {:.0} → {:.0}); at {f_lo} frames {}, at {f_hi} {}",
                lo.m.gc_time_ns as f64 / 1e6,
                hi.m.gc_time_ns as f64 / 1e6,
                blo.m.gc_time_ns as f64 / 1e6,
                bhi.m.gc_time_ns as f64 / 1e6,
                gc_work(lo),
                gc_work(hi)
            ),
        };
        out.push(("flagcommit-fig19b-gc-cfc-ex".into(), test.candidate()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, Magnitude};

    /// Fig. 16's and Fig. 19's notes state how often the extended protocols restart against
    /// WAL from the run's own counts: the same note rendered from swapped counts says the
    /// opposite (the static note said "restart far more than WAL" while the run measured 5
    /// and 6 restarts against WAL's 11).
    #[test]
    fn restart_notes_follow_the_measured_counts() {
        let quick = restart_words(&[("CFC_ex", 5, 1000), ("AFC_ex", 6, 1000)], (11, 1000));
        assert!(
            quick.contains("CFC_ex and AFC_ex restart less often than WAL"),
            "{quick}"
        );
        assert!(!quick.contains("more often"), "{quick}");
        let swapped = restart_words(&[("CFC_ex", 11, 1000), ("AFC_ex", 6, 1000)], (5, 1000));
        assert!(
            swapped.contains("CFC_ex and AFC_ex restart more often than WAL"),
            "{swapped}"
        );
        let mixed = restart_words(&[("CFC_ex", 11, 1000), ("AFC_ex", 2, 1000)], (5, 1000));
        assert!(
            mixed.contains("CFC_ex restarts more often than WAL")
                && mixed.contains("AFC_ex restarts less often than WAL"),
            "{mixed}"
        );
        let same = restart_words(&[("CFC_ex", 0, 1000)], (0, 1000));
        assert!(same.contains("as often as WAL"), "{same}");
        assert!(quick.contains("WAL 11 in 1000 commits"), "{quick}");
    }

    /// The class of an explanation is computed from what its ablation measured, by the one
    /// rule (`cause::explain` over `Test::candidate`): the cause's own class (`setup`,
    /// `model`) only when the ablation brings the claim into agreement by the claim's own
    /// verdict rule or closes more than half of its distance to the paper (`cause::MOST`);
    /// an ablation that leaves the claim where it was, or moves it away, refutes the cause
    /// and yields a `finding` saying so. The measured text is the numbers' own.
    #[test]
    fn explanation_class_follows_the_ablations_numbers() {
        let show = |v: f64| format!("gap {}", pct(v));
        let t = |class, rule, base, ablated| {
            cause::explain(&[Test {
                class,
                cause: "the cause.",
                run: "r",
                changes: "one thing",
                rule,
                base,
                ablated,
                show: &show,
                detail: "stolen pages 2 → 2,823".into(),
            }
            .candidate()])
        };
        let (setup, model) = (CauseClass::Setup, CauseClass::Model);
        // CFC vs BPCC −25.8 % against the paper's +24 %: +20 % agrees by the claim's own
        // verdict rule (×0.83), though short of the paper's value.
        let paper = Rule::Value(0.24);
        let into = t(setup, paper, -0.258, 0.20);
        assert_eq!(into.class, CauseClass::Setup);
        let m = &into.ablation.as_ref().unwrap().measured;
        assert!(m.contains("gap +20.0% against gap -25.8%"), "{m}");
        assert!(m.contains("into agreement"), "{m}");
        assert!(m.contains("stolen pages 2 → 2,823"), "{m}");
        // Toward, closing 72 % of the distance: the cause stands, in part.
        let toward = t(model, paper, -0.258, 0.10);
        assert_eq!(toward.class, CauseClass::Model);
        assert!(toward.cause.contains("closes 72 %"), "{}", toward.cause);
        // Toward, closing only 42 %: not enough to name the cause (`cause::MOST`).
        let part = t(model, paper, -0.258, -0.05);
        assert_eq!(part.class, CauseClass::Finding);
        assert!(
            part.cause.contains("accounts only for 42 %"),
            "{}",
            part.cause
        );
        // An ablation that does not move the claim (within the 2 % band) or moves it away
        // refutes the cause: never `setup`.
        for (abl, words) in [(-0.255, "sameness band"), (-0.40, "no closer")] {
            let e = t(setup, paper, -0.258, abl);
            assert_eq!(e.class, CauseClass::Finding, "{abl}");
            assert!(e.cause.contains("refuted"), "{}", e.cause);
            assert!(e.ablation.unwrap().measured.contains(words));
        }
        // A bound (GC share over 35 %): 8 % → 30 % closes 81 % of the distance, 8 % → 20 %
        // only 44 %, 8 % → 8.1 % does not move, 8 % → 40 % is into agreement.
        let bound = Rule::Above(0.35);
        assert_eq!(t(setup, bound, 0.08, 0.30).class, CauseClass::Setup);
        assert_eq!(t(setup, bound, 0.08, 0.20).class, CauseClass::Finding);
        assert_eq!(t(setup, bound, 0.08, 0.081).class, CauseClass::Finding);
        let e = t(setup, bound, 0.08, 0.40);
        assert_eq!(e.class, CauseClass::Setup);
        assert!(e.cause.contains("into agreement"), "{}", e.cause);
        // Nothing measured (a NaN) moves nothing.
        assert_eq!(t(model, paper, -0.258, f64::NAN).class, CauseClass::Finding);
        assert_eq!(t(model, paper, f64::NAN, 0.2).class, CauseClass::Finding);
        // The claim's own run already has the paper's setting: a finding whatever it shows.
        let e = cause::explain(&[matched("the scale", "r", "1 tx/s".into())]);
        assert_eq!(e.class, CauseClass::Finding);
        assert!(
            e.cause.contains("already has the paper's setting"),
            "{}",
            e.cause
        );
    }

    /// The slot-reuse ablation on Fig. 18b's long-transaction GC claim (full scale: CFC_ex
    /// 4.034 ms per commit against WAL's 3.589, paper −72.5 %), tried before the causes the
    /// claim's own run matches, as `explain` orders them: an ablation GC that closes more
    /// than half of the distance (−72.5 % ± 42.5 points: below 2.510 ms) names the mechanism
    /// (`model`); one that closes less leaves a `finding` whose ablation is the slot-reuse
    /// run, not the matched cause's.
    #[test]
    fn slot_reuse_names_the_mechanism_only_past_the_threshold() {
        let judge = |ablated_ms: f64| {
            cause::explain(&[
                reuse_gc_candidate(
                    "flagcommit cfc-ex long txns slots reused first",
                    "CFC_ex",
                    [4.034e6, ablated_ms * 1e6, 3.589e6],
                    "GC copies 5.5 → 2.1 per erase".into(),
                ),
                matched(
                    "the database's scale",
                    "flagcommit cfc-ex long txns",
                    "x".into(),
                ),
            ])
        };
        let named = judge(2.40);
        assert_eq!(named.class, CauseClass::Model, "{}", named.cause);
        assert!(
            named.cause.starts_with("Out-of-date versions left mapped"),
            "{}",
            named.cause
        );
        assert!(named.cause.contains("closes 54 %"), "{}", named.cause);
        let a = named.ablation.unwrap();
        assert_eq!(a.run, "flagcommit cfc-ex long txns slots reused first");
        assert!(
            a.measured.contains("CFC_ex GC 4.034 → 2.400 ms"),
            "{}",
            a.measured
        );
        assert!(a.measured.contains("5.5 → 2.1 per erase"), "{}", a.measured);
        for ms in [2.70, 4.0, 4.5] {
            let e = judge(ms);
            assert_eq!(e.class, CauseClass::Finding, "{ms}: {}", e.cause);
            assert!(
                e.cause.contains("already has the paper's setting"),
                "{}",
                e.cause
            );
            assert_eq!(
                e.ablation.unwrap().run,
                "flagcommit cfc-ex long txns slots reused first",
                "{ms}"
            );
        }
    }

    /// Table 2's buffer share: 512 frames over a 20-warehouse database hold what 102 hold
    /// of a 4-warehouse one of a fifth the pages, and the labels name both sizes.
    #[test]
    fn the_buffer_share_follows_the_databases_pages() {
        let sh = Share {
            ours: 20_000,
            paper: 100_000,
            warehouses: [4, 20],
        };
        assert_eq!(sh.frames(512), 102);
        assert_eq!(sh.frames(4096), 819);
        assert_eq!(sh.frames(1), 1);
        assert_eq!(
            sh.run("flagcommit cfc δ=1%", 512),
            "flagcommit cfc δ=1% 102 frames (the share of 512 at 20 warehouses)"
        );
        assert_eq!(fig14_run("scc low", 0.01, 0.5, 0.2), ("scc", 0.01));
        assert_eq!(fig14_run("rises", 0.01, 0.5, 0.2), ("cfc", 0.2));
        assert_eq!(fig14_run("crossing", 0.01, 0.5, 0.2), ("afc", 0.5));
    }

    /// Every point on the remote engine (`remote::testing::drive`: each point a task,
    /// its result carried as JSON) gives the local engine's output, file for file; a
    /// point's result reads back from JSON equal in every field, its histogram and floats
    /// included.
    #[test]
    fn the_remote_engine_gives_the_local_output() {
        let plan = tiny_plan(Some(2));
        let say = |_: &str| {};
        let local = run_plan(&plan, &Progress::new(1, &say)).unwrap();
        let (remote, rounds) = crate::remote::testing::drive(|p| run_plan(&plan, p));
        crate::remote::testing::assert_same_output(&remote, &local);
        assert!(rounds >= 2, "{rounds}");
        let b = base(&plan).unwrap();
        for s in ["cfc", "wal"] {
            let r = host_point(&strat(&b, s)).unwrap();
            assert!(r.m.txn_time_hist.count() > 0);
            crate::remote::testing::assert_round_trip(&r);
        }
    }

    /// A small TPC-C on a small device, with two deltas, two max_c values and one buffer size;
    /// `ablation_warehouses` as the test needs.
    fn tiny_plan(ablation_warehouses: Option<u32>) -> Plan {
        Plan {
            blocks_per_plane: 16,
            warehouses: 1,
            clients: 4,
            transactions: 40,
            log_pages: 1024,
            customers_per_district: Some(30),
            items: Some(200),
            deltas: vec![0.01, 0.5],
            max_cs: vec![2, 4],
            frames: vec![256],
            ablation_warehouses,
            trace_transactions: 0,
            trace_blocks_per_plane: None,
            reuse_all: true,
        }
    }

    /// A tiny plan (a small TPC-C on a small device) through the whole reproduction: every
    /// claim is present with both verdict axes, and the aged device really does GC.
    #[test]
    fn tiny_reproduction_keeps_the_output_contract() {
        let plan = tiny_plan(Some(2));
        let say = |_: &str| {};
        let p = Progress::new(2, &say);
        let mut out = run_plan(&plan, &p).unwrap();
        // As `run_paper` does: the runs made, for the explanations' ablation labels.
        out.configs = p.take_configs();
        // Deterministic whatever the number of jobs: the same claims and data.
        let one = run_plan(&plan, &Progress::new(1, &say)).unwrap();
        let json = |o: &Output| serde_json::to_string(&o.claims).unwrap();
        assert_eq!(json(&out), json(&one));
        assert_eq!(out.csvs, one.csvs);
        let ids: Vec<&str> = out.claims.iter().map(|c| c.id.as_str()).collect();
        for want in [
            "flagcommit-fig12-afc-vs-bpcc",
            "flagcommit-fig13a-gc-share-scc",
            "flagcommit-fig13b-afc-longest",
            "flagcommit-fig14-crossing",
            "flagcommit-fig15b-cfc-ex",
            "flagcommit-fig16-afcex-vs-wal",
            "flagcommit-fig17a-log-pages",
            "flagcommit-fig18-short",
            "flagcommit-fig18-gc-long-afc-ex",
            "flagcommit-fig19-cfc-ex-vs-wal-large",
            "flagcommit-table3-cfc-vs-bpcc",
        ] {
            assert!(ids.contains(&want), "{want} missing from {ids:?}");
        }
        // Fig. 18 is measured now (it was not modelled before the size filter).
        assert!(out
            .claims
            .iter()
            .filter(|c| c.id.starts_with("flagcommit-fig18"))
            .all(|c| c.verdict.direction != Direction::NotModelled));
        for c in &out.claims {
            assert_eq!(c.paper, PAPER);
            assert!(!c.measured.is_empty() && !c.note.is_empty(), "{}", c.id);
            // Both axes are judged: a number gives a ratio, none says so, and a missing
            // mechanism is not modelled on both.
            match c.verdict.magnitude {
                Magnitude::Agrees | Magnitude::Off => {
                    assert_ne!(c.verdict.direction, Direction::NotModelled, "{}", c.id)
                }
                Magnitude::Qualitative => {
                    assert!(c.verdict.ratio.is_none(), "{}", c.id)
                }
                Magnitude::NotModelled => {
                    assert_eq!(c.verdict.direction, Direction::NotModelled, "{}", c.id)
                }
            }
        }
        let csv = &out
            .csvs
            .iter()
            .find(|(n, _)| n == "flagcommit_points.csv")
            .unwrap()
            .1;
        // δ sweep (3 × 4), max_c (3 × 2), WAL, buffer (1 × 3), sizes (2 × 3), the
        // slot-reuse ablation (CFC_ex and AFC_ex long, CFC_ex at both buffer ends).
        assert_eq!(csv.lines().count(), 1 + 12 + 6 + 1 + 3 + 6 + 4, "{csv}");
        assert_eq!(csv.matches("slots reused first").count(), 4, "{csv}");
        assert!(!out.svgs.is_empty());
        // Explanations: only on disagreeing claims, each naming a run of this reproduction;
        // the GC-share bound (tested by the device's fill) carries one whenever it fails.
        out.check_explanations().unwrap();
        assert!(!out.explanations.is_empty());
        for (id, e) in &out.explanations {
            let c = out.claims.iter().find(|c| &c.id == id).unwrap();
            assert!(c.verdict.disagrees(), "{id} agrees but is explained");
            assert!(e.ablation.is_some(), "{id}");
        }
        for id in [
            "flagcommit-fig13a-gc-share-bpcc",
            "flagcommit-fig13b-afc-longest",
            "flagcommit-fig16-cfcex-vs-wal",
        ] {
            let c = out.claims.iter().find(|c| c.id == id).unwrap();
            assert_eq!(c.verdict.disagrees(), out.explanation(id).is_some(), "{id}");
        }
        assert_eq!(
            serde_json::to_string(&out.explanations).unwrap(),
            serde_json::to_string(&one.explanations).unwrap()
        );
        // Aged: the device garbage-collects from the first measured transactions on.
        let r = host_point(&strat(&base(&plan).unwrap(), "scc")).unwrap();
        assert!(r.aged_gc_erases > 0 && r.aged_ns > 0, "{:?}", r.m);
    }

    /// §5.1's preparation for §5.2's points: the database is on the device (each part
    /// reads back its loaded tag), the device was aged by overwriting the database's own
    /// pages until GC ran, and a warm-up ran before the measured window. Before, the
    /// database was unmapped and every transaction was measured from a cold pool (kept as
    /// `Prep::Aged`).
    #[test]
    fn device_tx_points_run_on_their_own_loaded_aged_database_after_a_warm_up() {
        let plan = tiny_plan(None);
        let cfg = strat(&base(&plan).unwrap(), "cfc");
        assert_eq!(prep_of(&cfg), Prep::Loaded);
        let mut a = aged_as(&cfg, Prep::Loaded).unwrap();
        let at = a.dev.barrier(SimTime::ZERO);
        let (o, _) = a.dev.read(sim::Lpn(0), at).unwrap();
        assert_eq!(
            o,
            ssd::ReadOutcome::Tag(host::external::loaded_tag(sim::Lpn(0)))
        );
        assert!(a.aged_gc_erases > 0, "the ageing reached GC");
        assert_eq!(a.warmup, plan.transactions / WARMUP_DIVISOR);
        let r = run_aged(&cfg, a).unwrap();
        assert!(r.warmup_committed > 0, "a warm-up ran");
        assert!(r.m.txns_committed + r.warmup_committed <= plan.transactions);
        // The old preparation, kept as the ablation: the database unmapped, no warm-up.
        let mut old = aged_as(&cfg, Prep::Aged).unwrap();
        assert_eq!(old.warmup, 0);
        let at = old.dev.barrier(SimTime::ZERO);
        assert_eq!(
            old.dev.read(sim::Lpn(0), at).unwrap().0,
            ssd::ReadOutcome::Unmapped
        );
    }

    /// §5.1's preparation for §5.3's points: CFC_ex, AFC_ex (every max_c) and WAL start from
    /// one device (one preparation key), the database on it as slot 0 / the data area
    /// (its loaded tags), the rest of CFC_ex's extent unmapped (master, log, version slots
    /// 1..), cold data beyond it, aged until GC ran; each runs a warm-up before its window
    /// and reads the loaded pages from flash. Before, they ran on the old preparation: the
    /// database unmapped, no warm-up, every transaction measured.
    #[test]
    fn extended_points_run_on_one_loaded_aged_database_after_a_warm_up() {
        let plan = tiny_plan(None);
        let b = base(&plan).unwrap();
        let mut keys = Vec::new();
        for s in EXTENDED {
            let cfg = strat(&b, s);
            assert_eq!(prep_of(&cfg), Prep::Loaded, "{s}");
            keys.push(aged_key(&cfg).unwrap());
            if s != "wal" {
                let mut c = cfg.clone();
                c.host.max_c = MAX_C_LARGE;
                keys.push(aged_key(&c).unwrap());
            }
        }
        assert!(keys.iter().all(|k| k == &keys[0]), "one shared device");
        assert_ne!(keys[0], aged_key(&strat(&b, "cfc")).unwrap());
        let cfg = strat(&b, "cfc-ex");
        let page_bytes = cfg.device().image_params().unwrap().geometry.page_bytes;
        let (db, ext) = (
            db_extent(&cfg, page_bytes).unwrap(),
            host_extent(&cfg, page_bytes).unwrap(),
        );
        assert!(db < ext);
        let mut a = aged(&cfg).unwrap();
        let at = a.dev.barrier(SimTime::ZERO);
        for lpn in [0, db - 1] {
            let l = sim::Lpn(lpn as u32);
            assert_eq!(
                a.dev.read(l, at).unwrap().0,
                ssd::ReadOutcome::Tag(host::external::loaded_tag(l))
            );
        }
        for lpn in [db, ext - 1] {
            let (o, _) = a.dev.read(sim::Lpn(lpn as u32), at).unwrap();
            assert_eq!(o, ssd::ReadOutcome::Unmapped, "lpn {lpn}");
        }
        assert!(matches!(
            a.dev.read(sim::Lpn(ext as u32), at).unwrap().0,
            ssd::ReadOutcome::Tag(_)
        ));
        assert!(a.aged_gc_erases > 0, "the ageing reached GC");
        assert_eq!(a.warmup, plan.transactions / WARMUP_DIVISOR);
        for s in EXTENDED {
            let c = strat(&b, s);
            let r = run_aged(&c, aged(&c).unwrap()).unwrap();
            assert!(r.warmup_committed > 0, "{s}: a warm-up ran");
            assert!(r.m.txns_committed > 0, "{s}");
            // A buffer miss of a loaded page is a flash read.
            assert!(r.m.nand_reads > 0, "{s}: {:?}", r.m);
        }
    }

    /// The measured window is the run less its warm-up: counters are differences, the GC
    /// share is the window's GC time over the window's busy time (not the run's share).
    #[test]
    fn the_window_is_the_run_less_its_warm_up() {
        let plan = tiny_plan(None);
        let cfg = strat(&base(&plan).unwrap(), "scc");
        let dev = aged_as(&cfg, Prep::Aged).unwrap().dev;
        let (run, warm) =
            host::engine::run_with_snapshot(&cfg.host, &cfg.device(), dev, cfg.seed, 10).unwrap();
        let (full, warm) = (run.metrics, warm.unwrap());
        let w = window(&full, &warm);
        assert_eq!(w.txns_committed + warm.txns_committed, full.txns_committed);
        assert_eq!(w.nand_programs + warm.nand_programs, full.nand_programs);
        assert_eq!(w.sim_time_ns + warm.sim_time_ns, full.sim_time_ns);
        assert_eq!(w.gc_time_ns + warm.gc_time_ns, full.gc_time_ns);
        assert!(w.array_busy_ns > 0 && w.array_busy_ns < full.array_busy_ns);
        let share = w.gc_time_ns as f64 / w.array_busy_ns as f64;
        assert!((w.gc_share - share).abs() < 1e-12);
        let tput = w.txns_committed as f64 / (w.sim_time_ns as f64 / 1e9);
        assert!((w.throughput_per_s - tput).abs() < 1e-9);
        assert_eq!(
            w.txn_time_ns.count,
            full.txn_time_ns.count - warm.txn_time_ns.count
        );
    }

    /// A plan without the scale ablations (as at full scale, whose runs have Table 2's
    /// warehouses, capacity and buffer share): the causes those ablations test are matched
    /// by the claims' own runs, so the one rule makes each such disagreement a `finding`
    /// whose evidence is a run of this reproduction; none is `setup`.
    #[test]
    fn matched_causes_are_findings_without_the_scale_ablations() {
        // With the trace series (40 transactions of the PostgreSQL trace on a 1 GiB
        // device): its claims are present and a disagreeing one is a matched `finding`.
        let plan = Plan {
            trace_transactions: 40,
            trace_blocks_per_plane: Some(256),
            ..tiny_plan(None)
        };
        let say = |_: &str| {};
        let p = Progress::new(2, &say);
        let mut out = run_plan(&plan, &p).unwrap();
        out.configs = p.take_configs();
        out.check_explanations().unwrap();
        let matched: Vec<&String> = out
            .explanations
            .iter()
            .filter(|(_, e)| e.cause.contains("already has the paper's setting"))
            .map(|(id, _)| id)
            .collect();
        assert!(!matched.is_empty(), "{:?}", out.explanations);
        for (id, e) in &out.explanations {
            if e.cause.contains("already has the paper's setting") {
                assert_eq!(e.class, CauseClass::Finding, "{id}");
                assert!(e.ablation.is_some(), "{id}");
            }
        }
        // Fig. 18's compared classes and long class and Fig. 19b's GC: at full scale they
        // disagreed with no explanation (`commitlab reproduce --paper flagcommit`); without
        // the scale ablations each has matched causes from its own runs.
        for id in fig18_matched_ids().into_iter().chain([
            "flagcommit-fig19b-gc-cfc-ex",
            "flagcommit-fig19b-gc-afc-ex",
            "flagcommit-fig19b-gc-wal",
        ]) {
            let c = out.claims.iter().find(|c| c.id == id).unwrap();
            assert_eq!(
                c.verdict.disagrees(),
                out.explanation(id).is_some(),
                "{id}: {:?}",
                c.verdict
            );
            if let Some(e) = out.explanation(id) {
                assert_eq!(e.class, CauseClass::Finding, "{id}");
                assert!(
                    e.cause.contains("already has the paper's setting"),
                    "{id}: {}",
                    e.cause
                );
            }
        }
        let pg: Vec<&Claim> = out
            .claims
            .iter()
            .filter(|c| c.id.starts_with("flagcommit-pg-"))
            .collect();
        assert_eq!(
            pg.len(),
            16,
            "{:?}",
            pg.iter().map(|c| &c.id).collect::<Vec<_>>()
        );
        for c in pg {
            assert_eq!(
                c.verdict.disagrees(),
                out.explanation(&c.id).is_some(),
                "{}",
                c.id
            );
        }
    }

    /// One full-scale point exactly as `reproduce --paper flagcommit` runs it (32 GiB aged,
    /// TPC-C 20 warehouses, 100,000 transactions): the strategy from `FC_POINT` (default
    /// `cfc-ex`; `scc`, `wal`, … work too). A measurement, not a check — run it under
    /// `/usr/bin/time` (docs/PERFORMANCE.md, "Current figures"):
    /// `FC_POINT=afc-ex cargo test --release -p commitlab-reproduce full_scale_point -- --ignored --nocapture`.
    /// `FC_LONG=1` runs Fig. 18's long transactions only, `FC_FRAMES=n` an n-frame buffer,
    /// `FC_REUSE=1` the slot-reuse ablation (`host.fc_reuse_slots_first`): the points the
    /// reproduction adds for it, alone; `FC_SCALE=quick` the quick plan's point instead.
    #[test]
    #[ignore]
    fn full_scale_point() {
        let s = std::env::var("FC_POINT").unwrap_or_else(|_| "cfc-ex".into());
        let on = |k: &str| std::env::var(k).is_ok_and(|v| v == "1");
        let scale = match std::env::var("FC_SCALE").as_deref() {
            Ok("quick") => Scale::Quick,
            _ => Scale::Full,
        };
        let plan = Plan::of(scale);
        let mut c = strat(&base(&plan).unwrap(), &s);
        if on("FC_LONG") {
            c.host.tpcc.min_pages_written = SHORT_PAGES + 1;
        }
        if let Some(f) = std::env::var("FC_FRAMES").ok().and_then(|v| v.parse().ok()) {
            c.host.buffer_frames = f;
        }
        c.host.fc_reuse_slots_first = on("FC_REUSE");
        let r = host_point(&c).unwrap();
        eprintln!(
            "{s}: {} committed, {} restarted, {:.1} txn/s, GC share {:.3}, GC {:.1} ms ({:.3} ms per commit), {} log pages, {}, aged GC erases {}, counters {:?}",
            r.m.txns_committed,
            r.m.txns_restarted,
            r.m.throughput_per_s,
            r.m.gc_share,
            r.m.gc_time_ns as f64 / 1e6,
            r.gc_per_commit_ns() / 1e6,
            r.m.log_pages,
            gc_work(&r),
            r.aged_gc_erases,
            r.m.strategy_counters
        );
    }

    /// Points that start from the same aged device (same device, protocol, seed and host
    /// extent) share one ageing: each runs from its own copy and gets, byte for byte, what
    /// it gets ageing its own device (`aged_key`, `runner::run_each_shared`), whatever the
    /// number of jobs; points on other protocols never share.
    #[test]
    fn shared_ageing_gives_the_results_of_separate_ageing() {
        let plan = Plan {
            deltas: vec![],
            max_cs: vec![],
            frames: vec![],
            ..tiny_plan(None)
        };
        let b = base(&plan).unwrap();
        let jobs = || {
            let mut v = Vec::new();
            for (name, d, recovery) in [
                ("cfc", 0.01, false),
                ("scc", 0.05, true),
                ("cfc", 0.05, true),
                ("afc", 0.05, false),
                ("wal", 0.05, false),
                ("cfc-ex", 0.05, false),
                ("scc", 0.30, false),
                ("afc-ex", 0.05, false),
            ] {
                let mut c = strat(&b, name);
                c.host.tpcc.delta_abort = d;
                c.host.measure_recovery = recovery;
                v.push(Job {
                    label: format!("{name} {d}"),
                    cfg: c,
                });
            }
            v
        };
        // Everything but the wall time recovery took.
        let text = |r: &Res| {
            let mut m = r.m.clone();
            if let Some(x) = m.recovery.as_mut() {
                x.wall_time_s = 0.0;
            }
            format!(
                "{} {} {} {} {}",
                world::deterministic_json(&m),
                r.aged_ns,
                r.aged_gc_erases,
                r.dram_bytes,
                r.protocol_dram_bytes
            )
        };
        let separate: Vec<String> = jobs()
            .iter()
            .map(|j| text(&host_point(&j.cfg).unwrap()))
            .collect();
        let keys: Vec<Option<String>> = jobs().iter().map(|j| aged_key(&j.cfg)).collect();
        // cfc, scc, afc and none (wal, cfc-ex, afc-ex) age four devices.
        let mut distinct = keys.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{keys:?}");
        let say = |_: &str| {};
        for n in [1, 2, 3] {
            let p = Progress::new(n, &say);
            let shared: Vec<String> =
                crate::runner::run_each_shared(jobs(), &p, aged_key, aged, copy_aged, run_aged)
                    .into_iter()
                    .map(|r| text(&r.unwrap()))
                    .collect();
            assert_eq!(separate, shared, "{n} jobs");
            let t = p.take_timings();
            // cfc (2 points), scc (2) and none (3) share; afc's one point ages its device as
            // a group of one (kept for later batches).
            let count = |task: &str| t.iter().filter(|t| t.task == task).count();
            assert_eq!(
                (count("builder"), count("follow"), count("alone")),
                (4, 4, 0)
            );
            assert!(t
                .iter()
                .all(|t| t.setup_cpu_s.is_some() == (t.task != "follow")));
        }
        // A budget that cannot hold an image beside a job on each worker: no sharing (which
        // would leave a worker idle), every point ages its own, with the same results.
        let mut p = Progress::new(2, &say);
        p.set_mem_budget_bytes(1);
        let apart: Vec<String> =
            crate::runner::run_each_shared(jobs(), &p, aged_key, aged, copy_aged, run_aged)
                .into_iter()
                .map(|r| text(&r.unwrap()))
                .collect();
        assert_eq!(separate, apart);
        assert!(p.take_timings().iter().all(|t| t.task == "alone"));
    }

    /// A point that measures recovery, which does not fit beside its group's image and a
    /// job on the other worker, takes the aged device itself as its group's last user
    /// (`runner::last_takers`) instead of ageing its own, and gets, byte for byte, what it
    /// gets ageing its own device; a recovering point alone in its group still ages its own.
    #[test]
    fn a_recovering_point_takes_the_aged_device_as_its_groups_last_user() {
        let plan = Plan {
            deltas: vec![],
            max_cs: vec![],
            frames: vec![],
            ..tiny_plan(None)
        };
        let b = base(&plan).unwrap();
        let jobs = || {
            let mut v = Vec::new();
            for (name, d, recovery) in [
                ("cfc", 0.05, true),
                ("cfc", 0.01, false),
                ("cfc", 0.30, false),
                ("scc", 0.05, true),
            ] {
                let mut c = strat(&b, name);
                c.host.tpcc.delta_abort = d;
                c.host.measure_recovery = recovery;
                v.push(Job {
                    label: format!("{name} {d}"),
                    cfg: c,
                });
            }
            v
        };
        let text = |r: &Res| {
            let mut m = r.m.clone();
            if let Some(x) = m.recovery.as_mut() {
                x.wall_time_s = 0.0;
            }
            format!(
                "{} {} {} {} {}",
                world::deterministic_json(&m),
                r.aged_ns,
                r.aged_gc_erases,
                r.dram_bytes,
                r.protocol_dram_bytes
            )
        };
        let separate: Vec<String> = jobs()
            .iter()
            .map(|j| text(&host_point(&j.cfg).unwrap()))
            .collect();
        // Room for the image and a plain job on each of two workers, not for the image and
        // two recovering jobs, but for a recovering job on the image and a plain job.
        let image = crate::runner::image_bytes(&jobs()[1].cfg);
        let plain = crate::runner::job_bytes(&jobs()[1].cfg);
        let recovering = crate::runner::job_bytes(&jobs()[0].cfg);
        assert!(recovering > plain && recovering <= image + plain);
        let say = |_: &str| {};
        let mut p = Progress::new(2, &say);
        p.set_mem_budget_bytes(image + 2 * plain);
        let shared: Vec<String> =
            crate::runner::run_each_shared(jobs(), &p, aged_key, aged, copy_aged, run_aged)
                .into_iter()
                .map(|r| text(&r.unwrap()))
                .collect();
        assert_eq!(separate, shared);
        let mut t: Vec<(String, String)> = p
            .take_timings()
            .into_iter()
            .map(|t| (t.label.clone(), t.task.to_string()))
            .collect();
        t.sort();
        assert_eq!(
            t,
            [
                ("cfc 0.01", "builder"),
                ("cfc 0.05", "last"),
                ("cfc 0.3", "follow"),
                ("scc 0.05", "alone"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }
}
