//! LightTx (Lu et al., IEEE TC 2015) §4: LightTx against Atomic-Write, SCC, BPCC, MHL-D and
//! MHL-M.
//!
//! - Fig. 7: transaction throughput under strict, no-page-conflict and serializable isolation.
//! - Figs. 9 and 11: throughput and GC overhead under 0–50 % aborts (strict isolation).
//! - Fig. 17: protocol memory. Fig. 19: mapping-persistence writes (from the abort sweep).
//! - Fig. 18: recovery time, on a larger device (whole-device scans grow with capacity).

use crate::runner::{run_all, Job};
use crate::{judge_change, pct, Claim, Output, Scale, Verdict};
use report::svg::{bar_chart, line_chart, Chart, Series};
use ssd::Isolation;
use workload::txn::Isolation as WIso;
use world::{Config, ConfigSource, RunMetrics};

const PAPER: &str = "lighttx";
const PROTOCOLS: [&str; 6] = ["lighttx", "aw", "mhl-d", "mhl-m", "scc", "bpcc"];
const ABORTS: [f64; 6] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5];
const ISOLATIONS: [(Isolation, WIso); 3] = [
    (Isolation::Strict, WIso::Strict),
    (Isolation::NoPageConflict, WIso::NoPageConflict),
    (Isolation::Serializable, WIso::Serializable),
];
/// DRAM structures the FTL itself owns (everything else is the protocol's).
const FTL_DRAM: [&str; 5] = [
    "mapping table",
    "reverse map",
    "page flags",
    "block table",
    "device transaction table",
];

/// The LightTx device (Table 2's shape) with `blocks` blocks per plane, 85 % prefilled,
/// running the TPC-C stand-in with `transactions` transactions.
fn base(blocks: u32, transactions: u64) -> Result<Config, String> {
    let sets = vec![
        "nand.data_mode=\"tag\"".to_string(),
        "workload.prefill=0.85".into(),
        format!("nand.blocks_per_plane={blocks}"),
    ];
    let mut c = Config::load(&ConfigSource {
        preset: Some("lighttx".into()),
        file: None,
        sets,
    })
    .map_err(|e| e.to_string())?;
    // TPC-C stand-in (§4.1: DBT-2 on PostgreSQL, 7 clients, 27.2 pages per transaction on
    // average, 142 at most).
    c.workload.kind = world::WorkloadKind::Txn;
    let t = &mut c.workload.txn;
    t.transactions = transactions;
    t.size_dist = workload::txn::SizeDist::Exponential;
    t.size_mean = 27.2;
    t.size_min = 1;
    t.size_max = 142;
    t.concurrency = 7;
    t.address = workload::address::AddressKind::HotCold;
    t.hot_fraction = 0.2;
    t.hot_access = 0.8;
    t.span = 0.5;
    Ok(c)
}

fn get(r: &[Result<RunMetrics, String>], i: usize) -> Result<&RunMetrics, String> {
    r[i].as_ref().map_err(|e| e.clone())
}

fn protocol_dram(m: &RunMetrics) -> u64 {
    m.dram_bytes
        .iter()
        .filter(|(k, _)| !FTL_DRAM.contains(&k.as_str()))
        .map(|(_, v)| *v)
        .sum()
}

fn ratio(a: f64, b: f64) -> f64 {
    a / b.max(1e-9)
}

pub fn run(scale: Scale, progress: &(dyn Fn(&str) + Sync)) -> Result<Output, String> {
    let (blocks, txs) = match scale {
        // 64 planes × 32 blocks: 512 MiB; 4000 transactions write about three times the free
        // space, so GC reaches steady state.
        Scale::Quick => (32, 4_000),
        // The paper's 32 GB and about its trace length (1.33 M requests).
        Scale::Full => (2048, 50_000),
    };
    let b = base(blocks, txs)?;
    let mut out = Output::default();
    fig7(&b, &mut out, progress)?;
    fig9_to_19(&b, &mut out, progress)?;
    fig18(scale, &mut out, progress)?;
    let g = b.nand.geometry();
    out.notes.push(format!(
        "Device: the LightTx preset's shape (Table 2: 8 packages × 8 planes, 4 KiB pages, 64 pages per block, 25/200/1500 µs, GC threshold 5 %), {blocks} blocks per plane: {:.2} GiB{}. Tag data mode; 85 % of the logical space prefilled; summary pages on; LightTx, MHL-D, AW and MHL-M run with the FTL's mapping checkpoints (window of 2 blocks per plane; a journal of changed mapping entries between full rewrites of the translation pages).",
        g.capacity_bytes() as f64 / f64::from(1u32 << 30),
        if scale == Scale::Quick { " (the paper's is 32 GB)" } else { "" }
    ));
    out.notes.push(format!(
        "Workload stand-in for the DBT-2 TPC-C trace (1.33 M requests, 27.2 pages per transaction, 142 at most, 7 clients): {txs} synthetic transactions with exponentially distributed sizes (mean 27.2, 1–142 pages), 7 at once, 80 % of writes to 20 % of half the logical space. It runs closed-loop (no think time); the paper replays a timed trace accelerated 70×. Isolation levels are expressed with barriers as in §4.2: after every transaction (strict), between segments of 7 transactions with disjoint pages (no-page-conflict), none (serializable). Abort sweeps run under strict isolation (Figs. 9 and 11)."
    ));
    Ok(out)
}

fn fig7(b: &Config, out: &mut Output, progress: &(dyn Fn(&str) + Sync)) -> Result<(), String> {
    let mut jobs = Vec::new();
    let mut slots: Vec<(usize, usize, usize)> = Vec::new(); // (protocol, isolation, job)
    for (pi, p) in PROTOCOLS.iter().enumerate() {
        let info = ssd::protocol::lookup(p).map_err(|e| e.to_string())?;
        for (ii, (iso, wiso)) in ISOLATIONS.iter().enumerate() {
            if !info.supports(*iso) {
                continue;
            }
            let mut c = b.clone();
            c.protocol.name = p.to_string();
            c.workload.txn.isolation = *wiso;
            slots.push((pi, ii, jobs.len()));
            jobs.push(Job {
                label: format!("lighttx fig7 {p} {}", iso.name()),
                cfg: c,
            });
        }
    }
    let r = run_all(jobs, progress);
    let run7 = |pi: usize, ii: usize| -> Option<Result<&RunMetrics, String>> {
        slots
            .iter()
            .find(|(p, i, _)| *p == pi && *i == ii)
            .map(|(_, _, j)| get(&r, *j))
    };
    let t7 = |pi: usize, ii: usize| run7(pi, ii).map(|m| m.map(|m| m.tx_throughput_per_s));
    let mut csv = String::from("protocol,isolation,tx_per_s\n");
    let mut series = Vec::new();
    for (pi, p) in PROTOCOLS.iter().enumerate() {
        let mut pts = Vec::new();
        for (ii, (iso, _)) in ISOLATIONS.iter().enumerate() {
            match t7(pi, ii) {
                Some(t) => {
                    let t = t?;
                    csv.push_str(&format!("{p},{},{t:.2}\n", iso.name()));
                    pts.push((ii as f64, t));
                }
                None => {
                    csv.push_str(&format!("{p},{},unsupported\n", iso.name()));
                    pts.push((ii as f64, f64::NAN));
                }
            }
        }
        series.push(Series {
            name: p.to_string(),
            points: pts,
        });
    }
    out.csvs.push(("lighttx_fig7_isolation.csv".into(), csv));
    out.svgs.push((
        "lighttx_fig7_isolation.svg".into(),
        bar_chart(
            &Chart {
                title: "LightTx Fig. 7: throughput by isolation level".into(),
                x_label: "isolation level".into(),
                y_label: "transactions / s".into(),
                log_x: false,
                y_from_zero: true,
            },
            &ISOLATIONS
                .iter()
                .map(|(i, _)| i.name().to_string())
                .collect::<Vec<_>>(),
            &series,
        ),
    ));
    let lt = |ii: usize| t7(0, ii).unwrap_or(Err("lighttx must support every level".into()));
    let (strict, npc, ser) = (lt(0)?, lt(1)?, lt(2)?);
    let (g_npc, g_ser) = (npc / strict - 1.0, ser / strict - 1.0);
    let iso_note = "Rule: same sign and within a factor 1.5 of the paper's gain agrees, same sign otherwise partly. The paper replays a timed DBT-2 trace (accelerated 70×), so its throughput is partly bounded by arrivals; the stand-in is a closed loop of 7 clients with no think time, which lets relaxed isolation use more of the 64 planes than a timed replay can (a strict-isolation transaction of 27 pages occupies under half the planes for one program time). A larger gain here is the expected consequence of that difference, not of the protocol.";
    out.claims.push(Claim {
        paper: PAPER.into(),
        id: "lighttx-fig7-serializable".into(),
        claim: "With LightTx, serializable isolation improves throughput by 20.6 % over strict isolation".into(),
        paper_value: "+20.6 %".into(),
        measured: pct(g_ser),
        verdict: judge_change(0.206, g_ser, 1.5, 0.01),
        note: iso_note.into(),
    });
    out.claims.push(Claim {
        paper: PAPER.into(),
        id: "lighttx-fig7-npc".into(),
        claim: "With LightTx, no-page-conflict isolation improves throughput by 19.6 % over strict isolation".into(),
        paper_value: "+19.6 %".into(),
        measured: pct(g_npc),
        verdict: judge_change(0.196, g_npc, 1.5, 0.01),
        note: iso_note.into(),
    });
    let mut worse = Vec::new();
    for (ii, (iso, _)) in ISOLATIONS.iter().enumerate() {
        let l = lt(ii)?;
        for (pi, p) in PROTOCOLS.iter().enumerate().skip(1) {
            if let Some(t) = t7(pi, ii) {
                let t = t?;
                if t > l * 1.02 {
                    worse.push(format!("{p} {} under {}", pct(t / l - 1.0), iso.name()));
                }
            }
        }
    }
    // What LightTx pays for the FTL's mapping checkpoints, which SCC and BPCC (whole-device
    // scan at recovery) do without: `none` under strict isolation without checkpoints and
    // with them at LightTx's measured rate.
    let lm = run7(0, 0).ok_or("no lighttx strict run")??;
    let per_ckpt = (lm.host_writes / lm.ftl.checkpoints.max(1)).max(1);
    let mut cjobs = Vec::new();
    for interval in [0, per_ckpt] {
        let mut c = b.clone();
        c.protocol.name = "none".into();
        c.workload.txn.isolation = WIso::Strict;
        c.ftl.checkpoint_interval = interval;
        cjobs.push(Job {
            label: format!("lighttx fig7 none strict checkpoint_interval={interval}"),
            cfg: c,
        });
    }
    let cr = run_all(cjobs, progress);
    let (n_off, n_on) = (
        get(&cr, 0)?.tx_throughput_per_s,
        get(&cr, 1)?.tx_throughput_per_s,
    );
    let mut best_note = String::from("Rule: agrees if no protocol beats LightTx by more than 2 % at any isolation level it supports.");
    best_note.push_str(&format!(
        " Likely cause: LightTx needs the FTL's mapping checkpoints (its zone sliding), which SCC and BPCC do not (they scan the whole device at recovery). The same checkpoints, at LightTx's rate of one per {per_ckpt} host writes, cost the plain FTL `none` {} ({n_off:.0} → {n_on:.0} tx/s under strict isolation); LightTx ({strict:.0} tx/s) is {} from that, so its own mechanisms cost little. The checkpoints' NAND work is small (about 0.3 % of programs); their cost is in time: each checkpoint's 15–23 translation, journal and root pages occupy one plane for 3–5 ms, which the next transaction (striped over every plane) waits for, and a new map block every few checkpoints pulls its unit under the GC threshold for an extra GC out of step with the other units' (DECISIONS.md, \"Map stream placement\"). Ruled out by experiment: GC's restriction to the checkpointed zone, erase holds until a root is durable, and waiting for roots before programming window blocks each changed LightTx's throughput by under 4 %. The paper's simulator does not say what its mapping persistence costs in time; a controller that spread map pages over planes or wrote them in idle time would narrow the gap, which this model does not do.",
        pct(n_on / n_off - 1.0),
        pct(strict / n_on - 1.0),
    ));
    out.claims.push(Claim {
        paper: PAPER.into(),
        id: "lighttx-fig7-best".into(),
        claim: "For a given isolation level, LightTx provides as good or better transaction throughput than all previous approaches".into(),
        paper_value: "LightTx ≥ every other protocol at each level".into(),
        measured: if worse.is_empty() {
            "LightTx within 2 % of or above every protocol at every level".into()
        } else {
            format!("beaten by: {}", worse.join("; "))
        },
        verdict: if worse.is_empty() {
            Verdict::Agrees
        } else if worse.len() <= 2 {
            Verdict::Partly
        } else {
            Verdict::Disagrees
        },
        note: best_note,
    });
    Ok(())
}

fn fig9_to_19(
    b: &Config,
    out: &mut Output,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(), String> {
    let mut jobs = Vec::new();
    for p in PROTOCOLS {
        for a in ABORTS {
            let mut c = b.clone();
            c.protocol.name = p.into();
            c.workload.txn.isolation = WIso::Strict;
            c.workload.txn.abort_ratio = a;
            c.run.measure_recovery = false;
            jobs.push(Job {
                label: format!("lighttx fig9 {p} {:.0}% aborts", a * 100.0),
                cfg: c,
            });
        }
    }
    let r = run_all(jobs, progress);
    let m9 = |pi: usize, ai: usize| get(&r, pi * ABORTS.len() + ai);
    let mut csv = String::from(
        "abort_pct,protocol,completed_tx_per_s,committed_tx_per_s,gc_time_ms,gc_vs_lighttx,gc_erases,gc_migrations,forced_erases,write_amplification,map_persist_per_host_write,protocol_dram_bytes\n",
    );
    let mut tput_series = Vec::new();
    let mut gc_series = Vec::new();
    for (pi, p) in PROTOCOLS.iter().enumerate() {
        let mut tp = Vec::new();
        let mut gp = Vec::new();
        for (ai, a) in ABORTS.iter().enumerate() {
            let m = m9(pi, ai)?;
            let gv = ratio(m.gc_time_ns as f64, m9(0, ai)?.gc_time_ns as f64);
            csv.push_str(&format!(
                "{:.0},{p},{:.2},{:.2},{:.3},{gv:.3},{},{},{},{:.3},{:.5},{}\n",
                a * 100.0,
                m.tx_completed_per_s,
                m.tx_throughput_per_s,
                m.gc_time_ns as f64 / 1e6,
                m.gc_erases,
                m.gc_page_migrations,
                m.ftl.forced_erases,
                m.write_amplification,
                m.map_persist_per_host_write,
                protocol_dram(m)
            ));
            tp.push((a * 100.0, m.tx_completed_per_s));
            gp.push((a * 100.0, gv));
        }
        tput_series.push(Series {
            name: p.to_string(),
            points: tp,
        });
        gc_series.push(Series {
            name: p.to_string(),
            points: gp,
        });
    }
    out.csvs.push(("lighttx_fig9_11_aborts.csv".into(), csv));
    let ch = |title: &str, y: &str| Chart {
        title: title.into(),
        x_label: "abort ratio (%)".into(),
        y_label: y.into(),
        log_x: false,
        y_from_zero: true,
    };
    out.svgs.push((
        "lighttx_fig9_throughput.svg".into(),
        line_chart(
            &ch(
                "LightTx Fig. 9: throughput vs aborts (strict)",
                "completed transactions / s",
            ),
            &tput_series,
        ),
    ));
    out.svgs.push((
        "lighttx_fig11_gc.svg".into(),
        line_chart(
            &ch(
                "LightTx Fig. 11: GC overhead vs aborts (strict)",
                "GC time / LightTx's",
            ),
            &gc_series,
        ),
    ));

    let tput_note = "Throughput counts completed transactions (committed or aborted): the same transaction stream is replayed at each abort ratio, so a protocol whose aborts cost what its commits cost stays flat. The CSV also gives committed transactions per second.";
    let avg_gain = |pi: usize| -> Result<f64, String> {
        let mut s = 0.0;
        for ai in 1..ABORTS.len() {
            s += ratio(
                m9(0, ai)?.tx_completed_per_s,
                m9(pi, ai)?.tx_completed_per_s,
            ) - 1.0;
        }
        Ok(s / (ABORTS.len() - 1) as f64)
    };
    let (g_aw, g_mhlm) = (avg_gain(1)?, avg_gain(3)?);
    out.claims.push(Claim {
        paper: PAPER.into(),
        id: "lighttx-fig9-vs-aw".into(),
        claim: "Under aborts (strict isolation) LightTx outperforms Atomic-Write by 1.5 %".into(),
        paper_value: "+1.5 %".into(),
        measured: format!("{} (mean over 10–50 % aborts)", pct(g_aw)),
        verdict: judge_change(0.015, g_aw, 3.0, 0.003),
        note: format!("Rule: same sign and within a factor 3 of the paper's (small) gain agrees. AW makes a commit durable by writing its mapping record after every data page is durable, a second program time on a transaction's critical path that a closed loop measures in full; the paper's timed replay hides most of it when the device keeps up with arrivals. {tput_note}"),
    });
    out.claims.push(Claim {
        paper: PAPER.into(),
        id: "lighttx-fig9-vs-mhlm".into(),
        claim: "Under aborts (strict isolation) LightTx outperforms MHL-M by 7.4 %".into(),
        paper_value: "+7.4 %".into(),
        measured: format!("{} (mean over 10–50 % aborts)", pct(g_mhlm)),
        verdict: judge_change(0.074, g_mhlm, 2.0, 0.005),
        note: format!("Rule: same sign and within a factor 2 agrees. MHL-M pays AW's per-commit mapping write. {tput_note}"),
    });
    let spread = |pi: usize| -> Result<f64, String> {
        let v: Vec<f64> = (0..ABORTS.len())
            .map(|ai| m9(pi, ai).map(|m| m.tx_completed_per_s))
            .collect::<Result<_, _>>()?;
        let hi = v.iter().copied().fold(f64::MIN, f64::max);
        let lo = v.iter().copied().fold(f64::MAX, f64::min);
        Ok(ratio(hi, lo) - 1.0)
    };
    let (s_l, s_aw, s_scc, s_bpcc) = (spread(0)?, spread(1)?, spread(4)?, spread(5)?);
    out.claims.push(Claim {
        paper: PAPER.into(),
        id: "lighttx-fig9-stability".into(),
        claim: "LightTx and AW keep stable throughput across abort ratios while SCC and BPCC do not".into(),
        paper_value: "LightTx, AW stable; SCC, BPCC unstable".into(),
        measured: format!(
            "max/min over 0–50 % aborts: LightTx {}, AW {}, SCC {}, BPCC {}",
            pct(s_l),
            pct(s_aw),
            pct(s_scc),
            pct(s_bpcc)
        ),
        verdict: if s_l < 0.10 && s_aw < 0.10 && s_scc > s_l && s_bpcc > s_l {
            Verdict::Agrees
        } else if s_scc > s_l || s_bpcc > s_l {
            Verdict::Partly
        } else {
            Verdict::Disagrees
        },
        note: format!("Rule: agrees if LightTx and AW vary by under 10 % and SCC and BPCC vary more than LightTx. {tput_note}"),
    });

    // Fig. 11: GC overhead relative to LightTx at 50 % aborts.
    let gc = |pi: usize| -> Result<f64, String> { Ok(m9(pi, 5)?.gc_time_ns as f64) };
    let l_gc = gc(0)?;
    let (gs, gb) = (ratio(gc(4)?, l_gc), ratio(gc(5)?, l_gc));
    let gc_note = "GC overhead is array time spent on GC reads, copies, flag updates and erases, including SCC's forced erases of aborted intentions.";
    out.claims.push(Claim {
        paper: PAPER.into(),
        id: "lighttx-fig11-gc".into(),
        claim: "At 50 % aborts the GC overhead of SCC and BPCC is 41.8× and 4.8× that of LightTx".into(),
        paper_value: "SCC 41.8×, BPCC 4.8×".into(),
        measured: if l_gc > 0.0 {
            format!("SCC {gs:.2}×, BPCC {gb:.2}× (LightTx {:.1} ms of GC)", l_gc / 1e6)
        } else {
            "LightTx did no GC: no ratio".into()
        },
        verdict: if l_gc == 0.0 {
            Verdict::Disagrees
        } else if judge_change(41.8, gs, 3.0, 0.0) == Verdict::Agrees && judge_change(4.8, gb, 2.0, 0.0) == Verdict::Agrees {
            Verdict::Agrees
        } else if gs > gb && gb > 1.0 {
            Verdict::Partly
        } else {
            Verdict::Disagrees
        },
        note: format!("Rule: agrees if SCC is within a factor 3 of 41.8× and BPCC within a factor 2 of 4.8×; partly if the ordering SCC > BPCC > LightTx holds. {gc_note}"),
    });
    let (gc_aw, gc_mhlm) = (ratio(gc(1)?, l_gc) - 1.0, ratio(gc(3)?, l_gc) - 1.0);
    out.claims.push(Claim {
        paper: PAPER.into(),
        id: "lighttx-fig11-aw-mhlm".into(),
        claim: "AW and MHL-M have 6.1 % higher GC overhead than LightTx (their per-commit mapping writes consume free pages)".into(),
        paper_value: "+6.1 %".into(),
        measured: format!("AW {}, MHL-M {} (50 % aborts)", pct(gc_aw), pct(gc_mhlm)),
        verdict: match (judge_change(0.061, gc_aw, 3.0, 0.005), judge_change(0.061, gc_mhlm, 3.0, 0.005)) {
            (Verdict::Agrees, Verdict::Agrees) => Verdict::Agrees,
            (Verdict::Disagrees, Verdict::Disagrees) => Verdict::Disagrees,
            _ => Verdict::Partly,
        },
        note: format!("Rule: both within a factor 3 of +6.1 % agree; both of the wrong sign disagree. {gc_note}"),
    });

    // Fig. 19: mapping-persistence write ratio, at 0 % aborts.
    let mp = |pi: usize| -> Result<f64, String> { Ok(m9(pi, 0)?.map_persist_per_host_write) };
    let (mp_l, mp_aw, mp_mhlm, mp_scc) = (mp(0)?, mp(1)?, mp(3)?, mp(4)?);
    out.claims.push(Claim {
        paper: PAPER.into(),
        id: "lighttx-fig19-mapping".into(),
        claim: "Mapping-persistence writes are 3.70 % of the trace's writes for AW and MHL-M, under 0.75 % for LightTx, and zero for SCC/BPCC".into(),
        paper_value: "AW/MHL-M 3.70 %; LightTx < 0.75 %; SCC/BPCC 0".into(),
        measured: format!(
            "AW {:.2} %, MHL-M {:.2} %, LightTx {:.3} %, SCC {:.3} %",
            mp_aw * 100.0,
            mp_mhlm * 100.0,
            mp_l * 100.0,
            mp_scc * 100.0
        ),
        verdict: if judge_change(0.037, mp_aw, 1.5, 0.0) == Verdict::Agrees
            && judge_change(0.037, mp_mhlm, 1.5, 0.0) == Verdict::Agrees
            && mp_l < 0.0075
            && mp_scc == 0.0
        {
            Verdict::Agrees
        } else if mp_aw > mp_l && mp_mhlm > mp_l {
            Verdict::Partly
        } else {
            Verdict::Disagrees
        },
        note: "Rule: agrees if AW and MHL-M are within a factor 1.5 of 3.70 %, LightTx under 0.75 % and SCC zero. The ratio is mapping-persistence page writes per host page written (the paper's definition). AW/MHL-M write one mapping page per transaction (about 1/27.2 of its pages) plus a record for each GC victim and their checkpoints; LightTx writes translation or journal pages and root records only at zone slides.".into(),
    });

    // Fig. 17: protocol memory, at 50 % aborts.
    let dram = |pi: usize| -> Result<u64, String> { Ok(protocol_dram(m9(pi, 5)?)) };
    let (d_l, d_scc, d_bpcc, d_mhld) = (dram(0)?, dram(4)?, dram(5)?, dram(2)?);
    out.claims.push(Claim {
        paper: PAPER.into(),
        id: "lighttx-fig17-memory".into(),
        claim: "SCC (uncommitted pages) and BPCC (straddle responsibility sets) need far more protocol memory than LightTx and MHL-D, which keep only live transaction ids".into(),
        paper_value: "SCC 3.60 MB, BPCC 5.51 MB; LightTx/MHL-D several KB (plus a shared 0.31 MB Active TxTable)".into(),
        measured: format!("at 50 % aborts: SCC {d_scc} B, BPCC {d_bpcc} B, LightTx {d_l} B, MHL-D {d_mhld} B"),
        verdict: if d_scc > 2 * d_l && d_bpcc > 2 * d_l {
            Verdict::Agrees
        } else if d_scc > d_l || d_bpcc > d_l {
            Verdict::Partly
        } else {
            Verdict::Disagrees
        },
        note: "Rule: agrees if SCC and BPCC each use more than twice LightTx's protocol DRAM (the FTL's own mapping and block tables excluded). Absolute sizes depend on the run's length and abort count, so only the contrast is compared.".into(),
    });
    Ok(())
}

/// Fig. 18 on a device large enough that a whole-device scan costs what it costs: recovery
/// after a short run on an 85 % full device.
fn fig18(scale: Scale, out: &mut Output, progress: &(dyn Fn(&str) + Sync)) -> Result<(), String> {
    let blocks = if scale == Scale::Quick { 256 } else { 2048 };
    let b = base(blocks, 300)?;
    let jobs = PROTOCOLS
        .iter()
        .map(|p| {
            let mut c = b.clone();
            c.protocol.name = p.to_string();
            c.workload.txn.isolation = WIso::Strict;
            Job {
                label: format!("lighttx fig18 {p}"),
                cfg: c,
            }
        })
        .collect();
    let r = run_all(jobs, progress);
    let mut csv = String::from("protocol,recovery_ms,pages_read,scanned_pages,had_checkpoint\n");
    let mut bars = Vec::new();
    let mut rec = Vec::new();
    for (pi, p) in PROTOCOLS.iter().enumerate() {
        let m = get(&r, pi)?;
        let rr = m.recovery.clone().unwrap_or_default();
        csv.push_str(&format!(
            "{p},{:.3},{},{},{}\n",
            rr.time_ns as f64 / 1e6,
            rr.pages_read,
            rr.scanned_pages,
            rr.had_checkpoint
        ));
        bars.push((pi as f64, rr.time_ns as f64 / 1e6));
        rec.push(rr.time_ns as f64 / 1e6);
    }
    out.csvs.push(("lighttx_fig18_recovery.csv".into(), csv));
    out.svgs.push((
        "lighttx_fig18_recovery.svg".into(),
        bar_chart(
            &Chart {
                title: "LightTx Fig. 18: recovery time".into(),
                x_label: "protocol".into(),
                y_label: "simulated recovery time (ms)".into(),
                log_x: false,
                y_from_zero: true,
            },
            &PROTOCOLS.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
            &[Series {
                name: "recovery".into(),
                points: bars,
            }],
        ),
    ));
    let (r_l, r_aw, r_mhld, r_mhlm, r_scc, r_bpcc) =
        (rec[0], rec[1], rec[2], rec[3], rec[4], rec[5]);
    let order_ok = r_scc.min(r_bpcc) > r_l.max(r_mhld) && r_l >= r_aw.min(r_mhlm);
    let gib = f64::from(blocks) * 64.0 * 64.0 * 4096.0 / f64::from(1u32 << 30);
    out.claims.push(Claim {
        paper: PAPER.into(),
        id: "lighttx-fig18-recovery".into(),
        claim: "Recovery: SCC/BPCC scan the whole device (6.957 s), LightTx and MHL-D scan only their zones (< 0.194 s), AW/MHL-M only read the mapping (0.126 s)".into(),
        paper_value: "SCC/BPCC 6.957 s ≫ LightTx < 0.194 s ≥ AW/MHL-M 0.126 s (36× between SCC/BPCC and LightTx)".into(),
        measured: format!(
            "{gib:.0} GiB device: SCC {r_scc:.2} ms, BPCC {r_bpcc:.2} ms, LightTx {r_l:.2} ms, MHL-D {r_mhld:.2} ms, AW {r_aw:.2} ms, MHL-M {r_mhlm:.2} ms ({:.1}× between SCC and LightTx)",
            ratio(r_scc, r_l)
        ),
        verdict: if order_ok && ratio(r_scc, r_l) > 5.0 {
            Verdict::Agrees
        } else if r_scc.min(r_bpcc) > r_l {
            Verdict::Partly
        } else {
            Verdict::Disagrees
        },
        note: "Rule: agrees if the ordering holds and the whole-device scan takes more than 5× LightTx's recovery. Recovery time is simulated: reads proceed in parallel on every plane (SCC and BPCC read one summary page per block), and LightTx's includes reading the root log, translation and journal pages, its zones, and the checkpoint it writes before accepting commands. Absolute times are far below the paper's: its 6.957 s for a 32 GB scan is about what reading every summary page one after another would take, so the paper's simulator likely did not overlap recovery reads across planes; the ordering and ratios are what is compared.".into(),
    });
    out.notes.push(format!(
        "Fig. 18 runs on a {gib:.0} GiB device of the same shape ({blocks} blocks per plane), 85 % prefilled, after 300 transactions under strict isolation; recovery is measured by cutting power at the end of the run."
    ));
    Ok(())
}
