//! The `commitlab` command line. Library crates return errors; this is the only place that
//! turns them into messages and exit codes: 0 success, 1 a check failed (crash violations,
//! a failed verification), 2 bad input (configuration, trace, image, usage).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use world::{Config, ConfigSource, RunOptions};

#[derive(Parser)]
#[command(
    name = "commitlab",
    version,
    about = "Run, crash-check and compare transaction-recovery protocols on emulated NAND flash"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Args, Clone, Default)]
struct ConfigArgs {
    /// A TOML configuration file.
    #[arg(long)]
    config: Option<PathBuf>,
    /// A device preset: default, txflash, flagcommit, lighttx, openssd.
    #[arg(long)]
    preset: Option<String>,
    /// Override any key: --set nand.channels=4 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// The random seed (overrides `seed`).
    #[arg(long)]
    seed: Option<u64>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one protocol on one workload and report its metrics.
    Run {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Commit protocol (overrides protocol.name).
        #[arg(long)]
        protocol: Option<String>,
        /// Replay a trace file instead of the configured workload.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Trace format: disksim (MQSim/SSDSim ASCII: arrival_ns dev lsn size_sectors op) or
        /// txn (transactional: time_ns txid op lpn count flags; see docs/TRACES.md).
        #[arg(long, default_value = "disksim")]
        trace_format: String,
        /// Write every command the run issues to this file as a txn trace.
        #[arg(long)]
        record: Option<PathBuf>,
        /// Write the metrics as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Keep the device image in this file, written through on every operation
        /// (needs nand.data_mode = "full"); `commitlab recover --image` reopens it.
        #[arg(long)]
        image: Option<PathBuf>,
        /// Append "lpn tag" for every plain write as it is applied (for `recover --verify-acks`).
        #[arg(long)]
        ack_log: Option<PathBuf>,
    },
    /// Run every protocol (or a list) on the same device and workload, side by side.
    Compare {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Comma-separated protocol names (default: every registered protocol).
        #[arg(long, value_delimiter = ',')]
        protocols: Vec<String>,
        #[arg(long)]
        json: Option<PathBuf>,
        #[arg(long)]
        csv: Option<PathBuf>,
    },
    /// Crash-check a protocol: recover from every (or N random) crash states and check them.
    Crash {
        #[command(flatten)]
        cfg: ConfigArgs,
        #[arg(long)]
        protocol: String,
        /// Enumerate every crash state (the default).
        #[arg(long, conflicts_with = "schedules")]
        exhaustive: bool,
        /// Check N seeded random crash states instead.
        #[arg(long)]
        schedules: Option<u64>,
        /// Evaluate only this state (to replay a failure) and describe it.
        #[arg(long)]
        state: Option<u64>,
        /// Exhaustive mode refuses configurations with more operations in progress at once.
        #[arg(long, default_value_t = 10)]
        max_in_flight: usize,
    },
    /// Measure simulator speed (NAND operations per CPU-second) and peak memory.
    Bench {
        /// A 2 GiB device instead of the 32 GiB TxFlash preset.
        #[arg(long)]
        quick: bool,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Open a file-backed device image (from `run --image`), recover it and report.
    Recover {
        #[arg(long)]
        image: PathBuf,
        /// Check the recovered contents against an ack log written by `run --ack-log`.
        #[arg(long)]
        verify_acks: Option<PathBuf>,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Reproduce the papers' headline experiments and write a claims report.
    Reproduce {
        /// txflash, lighttx, or all (repeatable).
        #[arg(long = "paper", required = true)]
        papers: Vec<String>,
        /// Small devices and workloads (minutes instead of hours).
        #[arg(long)]
        quick: bool,
        /// Where claims.json, REPORT.md, CSV files and SVG plots go.
        #[arg(long, default_value = "out/reproduce")]
        out: PathBuf,
        /// Points run at once (default: one per core). The report does not depend on it.
        #[arg(long, default_value_t = 0)]
        jobs: usize,
    },
    /// List the registered commit protocols.
    Protocols,
    /// List the device presets.
    Presets,
    /// Print the effective configuration as TOML.
    Config {
        #[command(flatten)]
        cfg: ConfigArgs,
    },
}

/// An error with its exit code.
struct Fail(u8, String);

fn bad(e: impl std::fmt::Display) -> Fail {
    Fail(2, e.to_string())
}

fn load(a: &ConfigArgs, base: Option<Config>, extra: &[String]) -> Result<Config, Fail> {
    let mut sets = a.sets.clone();
    sets.extend(extra.iter().cloned());
    let src = ConfigSource {
        preset: a.preset.clone(),
        file: a.config.clone(),
        sets,
    };
    let base = if a.config.is_none() { base } else { None };
    let mut cfg = Config::load_over(base.as_ref(), &src).map_err(bad)?;
    if let Some(s) = a.seed {
        cfg.seed = s;
    }
    Ok(cfg)
}

fn write_json<T: serde::Serialize + ?Sized>(path: &Option<PathBuf>, v: &T) -> Result<(), Fail> {
    if let Some(p) = path {
        report::write_json(p, v).map_err(|e| Fail(2, e))?;
    }
    Ok(())
}

fn quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=,:".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[allow(clippy::too_many_arguments)]
fn cmd_run(
    a: &ConfigArgs,
    protocol: &Option<String>,
    trace: &Option<PathBuf>,
    trace_format: &str,
    record: &Option<PathBuf>,
    json: &Option<PathBuf>,
    image: &Option<PathBuf>,
    ack_log: &Option<PathBuf>,
) -> Result<(), Fail> {
    let mut extra = Vec::new();
    if let Some(p) = protocol {
        extra.push(format!("protocol.name=\"{p}\""));
    }
    if let Some(t) = trace {
        extra.push("workload.kind=\"trace\"".into());
        extra.push(format!("workload.trace.path=\"{}\"", t.display()));
        extra.push(format!("workload.trace.format=\"{trace_format}\""));
    }
    let cfg = load(a, None, &extra)?;
    let opts = RunOptions {
        record_trace: record.clone(),
        record: false,
        image: image.clone(),
        ack_log: ack_log.clone(),
    };
    let out = world::run(&cfg, &opts).map_err(|e| match e {
        world::WorldError::Device { .. } => Fail(1, e.to_string()),
        other => bad(other),
    })?;
    print!("{}", report::run_summary(&out.metrics));
    write_json(json, &out.metrics)
}

fn cmd_compare(
    a: &ConfigArgs,
    protocols: &[String],
    json: &Option<PathBuf>,
    csv: &Option<PathBuf>,
) -> Result<(), Fail> {
    let names: Vec<String> = if protocols.is_empty() {
        ssd::protocol::names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        protocols.to_vec()
    };
    let base = load(a, None, &[])?;
    let mut runs = Vec::new();
    let mut failed = Vec::new();
    for n in &names {
        let mut cfg = base.clone();
        cfg.protocol.name = n.clone();
        ssd::protocol::lookup(n).map_err(bad)?;
        eprintln!("running {n} ...");
        match world::run(&cfg, &RunOptions::default()) {
            Ok(out) => runs.push(out.metrics),
            // A protocol that cannot run this workload (an isolation level or abort it does
            // not support) is a result of the comparison, not a failure of it.
            Err(e @ world::WorldError::Device { .. }) => failed.push((n.clone(), e.to_string())),
            Err(e) => return Err(bad(format!("{n}: {e}"))),
        }
    }
    println!(
        "workload: {}",
        runs.first()
            .map_or(base.workload.kind_name(), |m| m.workload.clone())
    );
    print!("{}", report::compare_table(&runs));
    for (n, e) in &failed {
        println!("{n}: could not run this workload: {e}");
    }
    write_json(json, &runs)?;
    if let Some(p) = csv {
        std::fs::write(p, report::compare_csv(&runs))
            .map_err(|e| Fail(2, format!("{}: {e}", p.display())))?;
    }
    Ok(())
}

fn cmd_crash(
    a: &ConfigArgs,
    protocol: &str,
    schedules: Option<u64>,
    state: Option<u64>,
    max_in_flight: usize,
) -> Result<(), Fail> {
    ssd::protocol::lookup(protocol).map_err(bad)?;
    if schedules == Some(0) {
        return Err(Fail(2, "--schedules must be at least 1".into()));
    }
    let base = check::small_config(protocol);
    let cfg = load(a, Some(base), &[format!("protocol.name=\"{protocol}\"")])?;
    cfg.validate().map_err(bad)?;
    let mode = match schedules {
        Some(n) => check::Mode::Random { schedules: n },
        None => check::Mode::Exhaustive { max_in_flight },
    };
    let rec = check::record(&cfg).map_err(|e| Fail(1, format!("recording the run failed: {e}")))?;
    let rep = check::check(&rec, mode, cfg.seed, state).map_err(|e| Fail(2, e))?;
    let replay = |k: u64| {
        let mut cmd = format!(
            "commitlab crash --protocol {} --seed {}",
            quote(protocol),
            cfg.seed
        );
        match schedules {
            Some(n) => cmd.push_str(&format!(" --schedules {n}")),
            None => cmd.push_str(" --exhaustive"),
        }
        if let Some(c) = &a.config {
            cmd.push_str(&format!(" --config {}", quote(&c.display().to_string())));
        }
        if let Some(p) = &a.preset {
            cmd.push_str(&format!(" --preset {}", quote(p)));
        }
        for s in &a.sets {
            cmd.push_str(&format!(" --set {}", quote(s)));
        }
        cmd.push_str(&format!(" --state {k}"));
        cmd
    };
    if let (Some(k), 0) = (state, rep.states) {
        return Err(Fail(
            2,
            format!("--state {k}: this run has no crash state {k} (states are numbered from 0; run without --state to count them)"),
        ));
    }
    if state.is_some() {
        for v in &rep.first {
            print!("{}", check::describe(&rec, &v.state));
            if v.findings.is_empty() {
                println!("  no violation");
            }
            for f in &v.findings {
                match f.lpn {
                    Some(l) => println!("  lpn {}: {}", l.0, f.what),
                    None => println!("  {}", f.what),
                }
            }
        }
    } else if let Some(v) = rep.first.first() {
        println!("first violation (seed={}):", cfg.seed);
        print!("{}", check::describe(&rec, &v.state));
        for f in v.findings.iter().take(5) {
            match f.lpn {
                Some(l) => println!("  lpn {}: {}", l.0, f.what),
                None => println!("  {}", f.what),
            }
        }
        println!("replay: {}", replay(v.state.index));
    }
    println!(
        "operations recorded: {}, most in flight at once: {}",
        rep.ops, rep.max_in_flight_seen
    );
    println!(
        "crash states checked: {}, violations: {}",
        rep.states, rep.violations
    );
    if rep.violations > 0 {
        return Err(Fail(
            1,
            format!(
                "{} crash states violate the durability contract of {protocol}",
                rep.violations
            ),
        ));
    }
    Ok(())
}

fn cmd_recover(
    image: &std::path::Path,
    verify: &Option<PathBuf>,
    json: &Option<PathBuf>,
) -> Result<(), Fail> {
    let cfg = world::config_of_image(image).map_err(bad)?;
    let (nand, _) = media::Nand::open_file(image, cfg.nand.timing.clone())
        .map_err(|e| bad(format!("{}: {e}", image.display())))?;
    let (mut dev, rep) = ssd::Device::recover(&cfg.device(), nand)
        .map_err(|e| bad(format!("{}: {e}", image.display())))?;
    dev.check_invariants()
        .map_err(|e| Fail(1, format!("recovered device is inconsistent: {e}")))?;
    let at = sim::SimTime::from_ms(1 << 30);
    let contents = world::run::read_all(&mut dev, at).map_err(|e| Fail(1, e.to_string()))?;
    let mapped = contents
        .iter()
        .filter(|o| matches!(o, ssd::ReadOutcome::Tag(_)))
        .count();
    let garbage = contents
        .iter()
        .filter(|o| {
            matches!(
                o,
                ssd::ReadOutcome::Uncorrectable | ssd::ReadOutcome::Bytes(_)
            )
        })
        .count();
    println!("protocol: {}", cfg.protocol.name);
    println!(
        "recovery: {} pages read, {:.3} ms simulated, checkpoint: {}",
        rep.pages_read,
        rep.time_ns as f64 / 1e6,
        rep.had_checkpoint
    );
    println!(
        "logical pages: {}, mapped: {mapped}, unreadable: {garbage}",
        contents.len()
    );
    if garbage > 0 {
        return Err(Fail(
            1,
            format!("{garbage} logical pages read garbage after recovery"),
        ));
    }
    if let Some(p) = verify {
        let text = std::fs::read_to_string(p).map_err(|e| bad(format!("{}: {e}", p.display())))?;
        let mut last: std::collections::BTreeMap<u32, u64> = Default::default();
        // A writer killed mid-line leaves a last line without its newline: it never finished
        // logging that write, so it is not a claim.
        let complete = match text.rfind('\n') {
            Some(i) => &text[..=i],
            None => "",
        };
        for (i, line) in complete.lines().enumerate() {
            let mut f = line.split_whitespace();
            let (Some(l), Some(t), None) = (f.next(), f.next(), f.next()) else {
                if line.trim().is_empty() {
                    continue;
                }
                return Err(bad(format!(
                    "{}:{}: expected 'lpn tag'",
                    p.display(),
                    i + 1
                )));
            };
            let l: u32 = l
                .parse()
                .map_err(|_| bad(format!("{}:{}: bad lpn", p.display(), i + 1)))?;
            let t: u64 = t
                .parse()
                .map_err(|_| bad(format!("{}:{}: bad tag", p.display(), i + 1)))?;
            last.insert(l, t);
        }
        let mut lost = 0;
        for (l, t) in &last {
            match contents.get(*l as usize) {
                Some(ssd::ReadOutcome::Tag(x)) if x >= t => {}
                other => {
                    if lost < 5 {
                        eprintln!("lpn {l}: acked tag {t}, reads {other:?}");
                    }
                    lost += 1;
                }
            }
        }
        println!("ack log: {} pages checked, {lost} lost", last.len());
        if lost > 0 {
            return Err(Fail(1, format!("{lost} acked writes lost")));
        }
    }
    write_json(json, &rep)
}

fn cmd_reproduce(
    papers: &[String],
    quick: bool,
    out: &std::path::Path,
    jobs: usize,
) -> Result<(), Fail> {
    let mut list: Vec<String> = Vec::new();
    for p in papers {
        match p.as_str() {
            "all" => list.extend(["txflash".to_string(), "lighttx".to_string()]),
            "txflash" | "lighttx" => list.push(p.clone()),
            other => {
                return Err(bad(format!(
                    "unknown paper '{other}' (known: txflash, lighttx, all)"
                )))
            }
        }
    }
    list.dedup();
    let scale = if quick {
        reproduce::Scale::Quick
    } else {
        reproduce::Scale::Full
    };
    let wall = std::time::Instant::now();
    let report = |m: &str| eprintln!("{m}");
    let progress = reproduce::Progress::new(jobs, &report);
    let mut outputs = Vec::new();
    for p in &list {
        eprintln!(
            "reproducing {p} ({}, {} jobs)",
            if quick { "quick" } else { "full" },
            progress.jobs
        );
        let o =
            reproduce::run_paper(p, scale, &progress).map_err(|e| Fail(1, format!("{p}: {e}")))?;
        outputs.push((p.clone(), o));
    }
    reproduce::write(out, &outputs, scale, wall.elapsed().as_secs_f64()).map_err(|e| Fail(2, e))?;
    let mut t = report::Table::new(vec!["id", "paper", "measured", "verdict"]);
    for (_, o) in &outputs {
        for c in &o.claims {
            t.row(vec![
                c.id.clone(),
                c.paper_value.clone(),
                c.measured.clone(),
                c.verdict.to_string(),
            ]);
        }
    }
    print!("{}", t.render());
    println!("report: {}", out.join("REPORT.md").display());
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match &cli.cmd {
        Cmd::Run {
            cfg,
            protocol,
            trace,
            trace_format,
            record,
            json,
            image,
            ack_log,
        } => cmd_run(
            cfg,
            protocol,
            trace,
            trace_format,
            record,
            json,
            image,
            ack_log,
        ),
        Cmd::Compare {
            cfg,
            protocols,
            json,
            csv,
        } => cmd_compare(cfg, protocols, json, csv),
        Cmd::Crash {
            cfg,
            protocol,
            exhaustive: _,
            schedules,
            state,
            max_in_flight,
        } => cmd_crash(cfg, protocol, *schedules, *state, *max_in_flight),
        Cmd::Bench { quick, json } => match world::bench::run_bench(*quick) {
            Ok(b) => {
                println!("{}", serde_json::to_string_pretty(&b).unwrap_or_default());
                write_json(json, &b)
            }
            Err(e) => Err(Fail(1, e.to_string())),
        },
        Cmd::Recover {
            image,
            verify_acks,
            json,
        } => cmd_recover(image, verify_acks, json),
        Cmd::Reproduce {
            papers,
            quick,
            out,
            jobs,
        } => cmd_reproduce(papers, *quick, out, *jobs),
        Cmd::Protocols => {
            for p in ssd::REGISTRY {
                let iso: Vec<&str> = p.isolation.iter().map(|i| i.name()).collect();
                println!(
                    "{:<8} {} (isolation: {})",
                    p.name,
                    p.summary,
                    iso.join(", ")
                );
            }
            Ok(())
        }
        Cmd::Presets => {
            for p in world::presets::NAMES {
                let c = Config::load(&ConfigSource {
                    preset: Some(p.to_string()),
                    ..Default::default()
                });
                match c {
                    Ok(c) => {
                        let g = c.nand.geometry();
                        println!(
                            "{p:<11} {:>6.1} GiB, {} planes, {} KiB pages, {} pages/block, {:?}",
                            g.capacity_bytes() as f64 / (1u64 << 30) as f64,
                            g.pus(),
                            g.page_bytes / 1024,
                            g.pages_per_block,
                            c.nand.cell
                        )
                    }
                    Err(e) => println!("{p:<11} {e}"),
                }
            }
            Ok(())
        }
        Cmd::Config { cfg } => load(cfg, None, &[]).map(|c| print!("{}", c.to_toml())),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail(code, msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(code)
        }
    }
}
