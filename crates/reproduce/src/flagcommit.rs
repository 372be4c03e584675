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
//! Every point runs on an *aged* device (`age`): the logical pages beyond the host's own
//! extent hold cold data written once and overwritten at random until the free pool has
//! reached the GC threshold, so GC is active from the first measured transaction at every
//! scale. The host's own pages start unmapped, because the engine's "as loaded" database is
//! not on the device (its first reads of a never-written page cost no flash read).
//!
//! What it does not do: tune anything toward the paper; run the paper's 4-hour traces (it
//! runs a stated number of transactions per point).

use crate::runner::{run_each, Job, Progress};
use crate::{pct, Claim, Output, Scale, Verdict, MAGNITUDE_HIGH, MAGNITUDE_LOW};
use host::HostMetrics;
use report::svg::{bar_chart, line_chart, Chart, Series};
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

/// Why §5.2's comparisons can differ here (shared by the Fig. 12-14 claims).
const DEVICE_TX_NOTE: &str = "Likely cause of any disagreement: `device-tx` runs SCC and BPCC with §5.1's rule (every page of an in-progress transaction may be stolen but its last shadow page), so an aborted or restarted transaction that stole pages leaves uncommitted intentions on flash, which SCC erases and BPCC keeps (§5.2); a stolen page updated again before commit cannot get a second intention in the same SCC/BPCC transaction, so the engine reopens the device transaction and writes its pages again (DECISIONS.md, a cost the paper does not describe). CFC and AFC may steal, and each commit adds a flag program after the transaction's last page write; under force and page-level locks that lengthens commit and the time hot pages stay locked (the CSV's `commit_ms_mean` and `nand_partial_programs`: CFC's commit flags and the flag updates its GC needs, §3.2, are partial programs queued on the same planes as data programs and GC). The workload is the engine's own TPC-C rather than the paper's PostgreSQL trace.";

/// The sizes one reproduction runs at.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub blocks_per_plane: u32,
    pub warehouses: u32,
    pub clients: u32,
    pub transactions: u64,
    /// Device pages of the log area (WAL, CFC_ex, AFC_ex): room for the whole run's log,
    /// so no run depends on truncation (see `DECISIONS.md`, "reproduce flagcommit").
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

/// What one point measured.
#[derive(Clone, Debug)]
pub(crate) struct Res {
    pub m: HostMetrics,
    /// Controller DRAM at the end of the run: everything, and the protocol's own tables.
    pub dram_bytes: u64,
    pub protocol_dram_bytes: u64,
    /// Simulated time the ageing took (before the run's own clock starts), and the GC
    /// erases it caused (the free pool reached the GC threshold).
    pub aged_ns: u64,
    pub aged_gc_erases: u64,
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

/// One point: build the device, age it, run the host engine on it.
pub(crate) fn host_point(cfg: &Config) -> Result<Res, String> {
    let mut cfg = cfg.clone();
    cfg.workload.kind = world::WorkloadKind::Host;
    cfg.validate().map_err(|e| e.to_string())?;
    let mut dev = world::build_device(&cfg, None).map_err(|e| e.to_string())?;
    let from = host_extent(&cfg, dev.core.geo.page_bytes)?;
    age(&mut dev, from, cfg.seed)?;
    let aged_ns = dev.barrier(SimTime::ZERO).as_ns();
    let aged_gc_erases = dev.core.stats.gc_erases;
    let run = host::engine::run_traced(&cfg.host, &cfg.device(), dev, cfg.seed, false, false)
        .map_err(|e| e.to_string())?;
    let d = &run.core.device;
    Ok(Res {
        dram_bytes: d.dram_bytes().iter().map(|(_, b)| b).sum(),
        protocol_dram_bytes: d.protocol_dram_bytes(),
        aged_ns,
        aged_gc_erases,
        m: run.metrics,
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
    {
        let mut c = strat(&b, "cfc-ex");
        c.host.max_c = MAX_C_LARGE;
        c.host.fc_no_merge_reads = true;
        jobs.push(Job {
            label: format!("flagcommit cfc-ex max_c={MAX_C_LARGE} without merge reads"),
            cfg: c,
        });
    }
    progress.plan(jobs.len());
    let r = run_each(jobs, progress, host_point);
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
    // A CSV of every point.
    let mut csv = String::from("figure,strategy,protocol,delta_pct,max_c,buffer_frames,committed,aborted,restarted,throughput_per_s,txn_time_ms_mean,commit_ms_mean,gc_share,gc_time_ms,gc_per_commit_ms,log_pages,nand_programs,nand_partial_programs,nand_erases,recovery_ms,recovery_pages_read,dram_bytes,protocol_dram_bytes,aged_ms,aged_gc_erases\n");
    let mut row = |fig: &str, c: &Res, d: f64, mc: u32, f: u32| {
        let m = &c.m;
        csv.push_str(&format!(
            "{fig},{},{},{:.0},{mc},{f},{},{},{},{:.2},{:.3},{:.3},{:.4},{:.1},{:.3},{},{},{},{},{},{},{},{},{:.1},{}\n",
            m.strategy,
            m.protocol,
            d * 100.0,
            m.txns_committed,
            m.txns_aborted,
            m.txns_restarted,
            m.throughput_per_s,
            m.txn_time_ns.mean / 1e6,
            m.commit_latency_ns.mean / 1e6,
            m.gc_share,
            m.gc_time_ns as f64 / 1e6,
            c.gc_per_commit_ns() / 1e6,
            m.log_pages,
            m.nand_programs,
            m.nand_partial_programs,
            m.nand_erases,
            m.recovery.map_or(String::new(), |x| format!("{:.3}", x.time_ns as f64 / 1e6)),
            m.recovery.map_or(String::new(), |x| x.pages_read.to_string()),
            c.dram_bytes,
            c.protocol_dram_bytes,
            c.aged_ns as f64 / 1e6,
            c.aged_gc_erases,
        ));
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
    out.csvs.push(("flagcommit_points.csv".into(), csv));

    fig12_13(&mut out, &x)?;
    fig14(&mut out, &deltas, &x)?;
    fig15(&mut out, &max_cs, &x)?;
    fig16_17(&mut out, &x)?;
    fig18(&mut out, &x)?;
    fig19(&mut out, &frames, &x)?;

    let g = b.nand.geometry();
    let aged = x.dev(DELTA, "cfc")?;
    out.notes.push(format!(
        "Device: the `flagcommit` preset (Table 2: 8 packages × 2 dies × 2 planes, 2 KiB pages, 64 pages per block, read 0.08 ms, program and partial program 0.2 ms, NOP 2, erase 1.5 ms, 10 % over-provisioning, GC at 5 % free, wear-aware victims) with {} blocks per plane: {:.2} GiB{}. Tag data mode. Every point starts from an aged device: the logical pages beyond the most the host can use (CFC_ex's {FC_VERSIONS} version slots per DB page, its master and log) are written once with cold data and then overwritten at random (the device's physical pages not holding cold data plus a quarter of the cold pages) so the free pool is at the GC threshold when the first transaction starts (the ageing took {:.1} s of simulated time and is not counted). The database itself starts unmapped: the engine's TPC-C tables are \"as loaded\" without being on the device, so a page's first read costs no flash read and it takes flash space only once written (the paper's loaded database is on the device).",
        plan.blocks_per_plane,
        g.capacity_bytes() as f64 / f64::from(1u32 << 30),
        if plan.blocks_per_plane < 8192 { " (the paper's is 32 GB)" } else { "" },
        aged.aged_ns as f64 / 1e9,
    ));
    out.notes.push(format!(
        "Workload: the host engine's TPC-C (45/43/4/4/4 mix, NURand, 1 % New-Order rollbacks) with {} warehouses{}, {} clients, δ = 5 % extra rollbacks unless swept, 8 KiB DB pages over 2 KiB flash pages, 50-byte log records, {FRAMES}-frame LRU buffer unless swept, wait-for-graph deadlock detection with the youngest as victim, {} transactions per point (the paper: a 30-minute warm-up and a 4-hour trace; here the buffer pool starts cold and the first transactions are measured). §5.2's runs are `device-tx` (force at commit through the device protocol, page-level locks, SCC/BPCC's last shadow page pinned in the buffer); §5.3's are `cfc-ex` / `afc-ex` (no-force, redo-only log, record-level locks, max_c = 3 unless swept) and `wal` (ARIES-style, steal / no-force, record-level locks) over the plain FTL; the log area is sized so no run needs truncating it ({} pages; DECISIONS.md). The paper ran a trace of PostgreSQL's data accesses; the host engine generates the transactions itself, so locking and buffering happen in this engine, not PostgreSQL's.",
        plan.warehouses,
        if plan.warehouses < 20 { " (the paper: 20)" } else { "" },
        plan.clients,
        plan.transactions,
        plan.log_pages,
    ));
    Ok(out)
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
    for (id, who, r, vs, vr, paper) in [
        (
            "flagcommit-fig12-afc-vs-bpcc",
            "AFC",
            afc,
            "BPCC",
            bpcc,
            0.35,
        ),
        ("flagcommit-fig12-afc-vs-scc", "AFC", afc, "SCC", scc, 1.10),
        (
            "flagcommit-fig12-cfc-vs-bpcc",
            "CFC",
            cfc,
            "BPCC",
            bpcc,
            0.24,
        ),
        ("flagcommit-fig12-cfc-vs-scc", "CFC", cfc, "SCC", scc, 0.94),
    ] {
        let g = r.tput() / vr.tput() - 1.0;
        out.claims.push(claim(
            id,
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
    for (id, who, r, bound) in [
        ("flagcommit-fig13a-gc-share-bpcc", "BPCC", bpcc, 0.35),
        ("flagcommit-fig13a-gc-share-scc", "SCC", scc, 0.55),
    ] {
        out.claims.push(claim(
            id,
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
    for (id, vs, vr, paper) in [
        ("flagcommit-fig13a-afc-gc-vs-cfc", "CFC", cfc, -0.13),
        ("flagcommit-fig13a-afc-gc-vs-bpcc", "BPCC", bpcc, -0.34),
        ("flagcommit-fig13a-afc-gc-vs-scc", "SCC", scc, -0.58),
    ] {
        let g = afc.m.gc_time_ns as f64 / (vr.m.gc_time_ns.max(1)) as f64 - 1.0;
        out.claims.push(claim(
            id,
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
    let rec_note = format!("Recovery is simulated: a power cut at the end of the run, then the device protocol's own recovery on the aged device (scans and flag-chain reads, reads overlapped across planes) and the host's restart. \"Much longer\" is read as at least the magnitude band's factor 2; \"comparable\" as within it ([0.5, 2]). Every protocol's device recovery here scans every block of the aged device (its cold data included) and AFC's flag-chain reads come on top of that scan, whereas the paper's 32 GB device held a 2 GB database and little else. Measured: AFC's recovery is {:.2}× the longest of CFC's, BPCC's and SCC's.", ra / rc.max(rb).max(rs).max(1.0));
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
    let mut csv = String::from("protocol,dram_bytes,protocol_dram_bytes\n");
    for p in DEVICE {
        let r = at(p)?;
        csv.push_str(&format!("{p},{},{}\n", r.dram_bytes, r.protocol_dram_bytes));
    }
    out.csvs.push(("flagcommit_table3_memory.csv".into(), csv));
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
    let mid = deltas
        .iter()
        .copied()
        .filter(|&d| d <= 0.20 + 1e-9)
        .fold(lo, f64::max);
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
    let note16 = format!("WAL here is steal / no-force with record-level locks, as CFC_ex / AFC_ex, and its rollback costs what the paper describes (each undone page fetched, undo records no longer buffered read back, a CLR per undo). CPU time is charged to no protocol, here as in the paper's simulator (§5.1: \"we ignored the CPU cost\"). {} (max_c admission blocks and can close deadlock cycles; each restart repeats its reads). CFC and AFC are the §5.2 runs (device-tx: force at commit, page-level locks); CFC_ex and AFC_ex run no-force with record-level locks and max_c = 3 over the plain FTL, their commit flags kept by the host strategy (DECISIONS.md: the device-side flags of §4 are not implemented, so the extended protocols' flags are partial programs the host issues into each flash page's record area).", restarts_vs_wal(&[("CFC_ex", cx), ("AFC_ex", ax)], wal));
    let note16 = note16.as_str();
    for (id, a, an, bb, bn, paper) in [
        (
            "flagcommit-fig16-cfcex-vs-cfc",
            cx,
            "CFC_ex",
            cfc,
            "CFC",
            0.64,
        ),
        (
            "flagcommit-fig16-afcex-vs-afc",
            ax,
            "AFC_ex",
            afc,
            "AFC",
            0.53,
        ),
        (
            "flagcommit-fig16-cfcex-vs-wal",
            cx,
            "CFC_ex",
            wal,
            "WAL",
            0.49,
        ),
        (
            "flagcommit-fig16-afcex-vs-wal",
            ax,
            "AFC_ex",
            wal,
            "WAL",
            0.51,
        ),
    ] {
        let g = a.tput() / bb.tput() - 1.0;
        out.claims.push(claim(
            id,
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
        "Tested as \"higher\" over the same number of transactions (the paper gives no number for \"much\"). Likely cause of a disagreement: log pages are a few per cent of all flash programs here (CSV: `log_pages` against `nand_programs`), so WAL's extra log moves GC time by about as much as the data-page writes differ between strategies; CFC_ex / AFC_ex write page versions into up to 3 slots, and the engine's TPC-C dirties whole 8 KiB pages for every strategy alike.",
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

    /// A tiny plan (a small TPC-C on a small device) through the whole reproduction: every
    /// claim is present with both verdict axes, and the aged device really does GC.
    #[test]
    fn tiny_reproduction_keeps_the_output_contract() {
        let plan = Plan {
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
        };
        let say = |_: &str| {};
        let p = Progress::new(2, &say);
        let out = run_plan(&plan, &p).unwrap();
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
        // δ sweep (3 × 4), max_c (3 × 2), WAL, buffer (1 × 3), sizes (2 × 3).
        assert_eq!(csv.lines().count(), 1 + 12 + 6 + 1 + 3 + 6, "{csv}");
        assert!(!out.svgs.is_empty());
        // Aged: the device garbage-collects from the first measured transactions on.
        let r = host_point(&strat(&base(&plan).unwrap(), "scc")).unwrap();
        assert!(r.aged_gc_erases > 0 && r.aged_ns > 0, "{:?}", r.m);
    }

    /// One full-scale point exactly as `reproduce --paper flagcommit` runs it (32 GiB aged,
    /// TPC-C 20 warehouses, 100,000 transactions): the strategy from `FC_POINT` (default
    /// `cfc-ex`; `scc`, `wal`, … work too). A measurement, not a check — run it under
    /// `/usr/bin/time` (PERFORMANCE.md, fcex):
    /// `FC_POINT=afc-ex cargo test --release -p commitlab-reproduce full_scale_point -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn full_scale_point() {
        let s = std::env::var("FC_POINT").unwrap_or_else(|_| "cfc-ex".into());
        let plan = Plan::of(Scale::Full);
        let r = host_point(&strat(&base(&plan).unwrap(), &s)).unwrap();
        eprintln!(
            "{s}: {} committed, {} restarted, {:.1} txn/s, GC share {:.3}, aged GC erases {}, counters {:?}",
            r.m.txns_committed,
            r.m.txns_restarted,
            r.m.throughput_per_s,
            r.m.gc_share,
            r.aged_gc_erases,
            r.m.strategy_counters
        );
    }
}
