//! The `commitlab` command line. Library crates return errors; this is the only place that
//! turns them into messages and exit codes: 0 success, 1 a check failed (crash violations,
//! a failed verification), 2 bad input (configuration, trace, image, usage).

mod crash;
mod host_image;
mod sql_cmd;
mod trace_stats;

/// mimalloc instead of glibc's malloc: the host engine allocates and frees page images,
/// range lists and per-operation vectors at a high rate, and glibc's free of cold chunks
/// (`_int_free`, `unlink_chunk`, `malloc_consolidate`) was about 9 % of a TPC-C run
/// (docs/TOOL.md, "Commands and output"; docs/PERFORMANCE.md). Never changes results.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// No progress bars (they are also off when stderr is not a terminal).
    #[arg(long, short, global = true)]
    quiet: bool,
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
    /// The DBMS host's update strategy: out-of-place, ipa, ipa-block, ipl (= --set
    /// host.update="...").
    #[arg(long)]
    update: Option<String>,
}

#[derive(Args, Clone, Default)]
struct StudyArgs {
    /// Protocols to run, comma-separated (spaces allowed; repeatable). Default: all of
    /// none, tc, scc, bpcc, cfc, afc, lighttx, aw, mhl-d, mhl-m.
    #[arg(long, value_name = "LIST")]
    protocols: Vec<String>,
    /// Write every result (with its configuration) as JSON to this file (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write every result as CSV to this file (`-`: stdout); units as the column names say.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Points run at once (default: one per core).
    #[arg(long, short, value_name = "N")]
    jobs: Option<usize>,
    /// Do not adapt a protocol's isolation level or aborts: list it as unsupported instead.
    #[arg(long)]
    no_adapt: bool,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one protocol on one workload and report its metrics.
    Run {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Commit protocol (overrides protocol.name): one of none, tc, scc, bpcc, cfc, afc,
        /// lighttx, aw, mhl-d, mhl-m (`commitlab protocols` describes them).
        #[arg(long)]
        protocol: Option<String>,
        /// Replay a trace file instead of the configured workload.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Trace format: disksim (MQSim/SSDSim ASCII: arrival_ns dev lsn size_sectors op),
        /// txn (transactional: time_ns txid op lpn count flags), blkreplay (.load files),
        /// msr (MSR Cambridge CSV), spc (SPC-1/UMass CSV) or pages (a DBMS's page-access
        /// trace, as device transactions); plain or gzip (docs/TRACES.md). (Default:
        /// disksim; with --host: pages, the only format a host replays.)
        #[arg(long)]
        trace_format: Option<String>,
        /// Write every command the run issues to this file as a txn trace.
        #[arg(long)]
        record: Option<PathBuf>,
        /// Write the metrics as JSON to this file (`-`: standard output).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Keep the device image in this file, written through on every operation
        /// (needs nand.data_mode = "full"); `commitlab recover --image` reopens it. With
        /// --host: the host's device; for the PCM strategies (pcmlogging, pcmlogging-page,
        /// wal-pcm, scmlogging) a tier image their PCM and disk write through to (not with
        /// host.pcm.external = "emulated").
        #[arg(long)]
        image: Option<PathBuf>,
        /// Append every acked change as it is acked, unbuffered: "lpn tag" for a plain write
        /// and each page of a committed transaction, "lpn -" for a trim (for `recover
        /// --verify-acks`). With --host: one JSON line per commit issue and ack
        /// ({"ev":"issue"|"ack","txn":N,"digest":D}), the ack before the locks are released.
        #[arg(long)]
        ack_log: Option<PathBuf>,
        #[arg(long, help = host_help("Run the DBMS host with this recovery strategy", "on the device"))]
        host: Option<String>,
        /// The DBMS host's workload: tpcc, tpcb, tatp, bank, records, trace (= --set
        /// host.workload="..."; needs --host; --trace F implies trace).
        #[arg(long)]
        workload: Option<String>,
    },
    /// Run every protocol (or a list) on the same device and workload, side by side.
    ///
    /// With no configuration this is the main job: synthetic transactions (1-16 pages, 4 at
    /// once, 5 % aborts) on a 128 MiB device with GC active. A preset, file or --set changes
    /// it. A protocol that cannot run the configuration is adapted (isolation level, aborts;
    /// status "adapted") or listed with the reason (status "unsupported").
    ///
    /// DBMS host strategies side by side: --set workload.kind='"host"' runs the host engine
    /// (its [host] section: host.strategy, host.workload, ...) over each protocol, e.g.
    /// `compare --set workload.kind='"host"' --set host.strategy='"device-tx"' --protocols
    /// tc,bpcc,lighttx`, or across strategies `sweep --set workload.kind='"host"' --set
    /// host.strategy=wal,cfc-ex ...`.
    Compare {
        #[command(flatten)]
        cfg: ConfigArgs,
        #[command(flatten)]
        out: StudyArgs,
    },
    /// Run a grid of configurations x protocols in parallel: one result row per point.
    ///
    /// Each --set key=a,b,c with several values is a swept key (a column in the output);
    /// a --set with one value applies to every point. Starts from the same base as compare.
    Sweep {
        #[command(flatten)]
        cfg: ConfigArgs,
        #[command(flatten)]
        out: StudyArgs,
    },
    /// Crash-check a protocol (or --all): recover from every (or N random) crash states,
    /// over several timing profiles, optionally crashing inside recovery too (--double).
    Crash(crash::CrashArgs),
    /// Random double-crash schedules over every protocol on all cores, resumable.
    Soak(crash::SoakArgs),
    /// SQLite on the emulated device: run a SQL workload, compare journal modes and
    /// protocols, crash-check a real database.
    Sqlite {
        #[command(subcommand)]
        cmd: sql_cmd::SqliteCmd,
    },
    /// Measure simulator speed (NAND operations per CPU-second) and peak memory.
    Bench {
        /// A 2 GiB device instead of the 32 GiB TxFlash preset.
        #[arg(long, conflicts_with = "size_gib")]
        quick: bool,
        /// A device of this many GiB (the TxFlash preset's shape, 128 blocks per plane per
        /// GiB; 1 to 1024), to see how the device bench scales with the device's size.
        #[arg(long, value_name = "N")]
        size_gib: Option<u32>,
        /// Only the device bench, without the host cases.
        #[arg(long)]
        device_only: bool,
        /// Also write the measurements as JSON to this file (`-`: standard output).
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// What a page-access trace looks like next to the generator's TPC-C: transactions by
    /// type, pages per transaction, reads against writes, hot-page skew (docs/TRACES.md).
    TraceStats {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// The page-access trace (plain or gzip).
        #[arg(long)]
        trace: PathBuf,
        /// Also write both sets of statistics as JSON to this file (`-`: standard output).
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Open a file-backed device image (from `run --image`), recover it and report.
    Recover {
        /// The device image file a `run --image` wrote.
        #[arg(long)]
        image: PathBuf,
        /// Check the recovered contents against an ack log written by `run --ack-log`.
        #[arg(long)]
        verify_acks: Option<PathBuf>,
        /// Write the recovery report as JSON to this file (`-`: standard output).
        #[arg(long)]
        json: Option<PathBuf>,
        #[arg(long, help = host_help("The image is a DBMS host run's (`run --host S --image`) with this recovery strategy", ": restart the strategy from it and, with --verify-acks, judge every logged commit"))]
        host: Option<String>,
    },
    /// Reproduce the papers' headline experiments and write a claims report.
    Reproduce {
        /// txflash, lighttx, flagcommit, ipa, pcmlogging, or all (repeatable).
        #[arg(long = "paper", required = true)]
        papers: Vec<String>,
        /// Small devices and workloads (minutes instead of hours).
        #[arg(long)]
        quick: bool,
        /// Where claims.json, REPORT.md, REPORT.html, CSV files and SVG plots go.
        #[arg(long, default_value = "out/reproduce")]
        out: PathBuf,
        /// Points run at once (default: one per core). The report does not depend on it.
        #[arg(long, default_value_t = 0)]
        jobs: usize,
        /// Where the points run: `local` (threads here) or `ray` (one Ray task per point on
        /// the cluster `RAY_ADDRESS` names, or a local Ray; runs `python3 -m commitlab._ray`,
        /// or $COMMITLAB_PYTHON, with the Python package and Ray installed). Same report.
        #[arg(long, default_value = "local", value_parser = ["local", "ray"])]
        engine: String,
    },
    /// List the registered commit protocols.
    Protocols,
    /// List the device presets.
    Presets,
    /// Print the effective configuration as TOML, or explain a key.
    Config {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Explain a key (or every key under a section): type, default, allowed values, unit.
        #[arg(long, value_name = "KEY")]
        explain: Option<String>,
        /// Print the configuration reference (docs/CONFIG.md) as Markdown.
        #[arg(long)]
        reference: bool,
        /// Start from the main job's base (what `compare` and `sweep` run) instead of the
        /// built-in defaults.
        #[arg(long)]
        main_job: bool,
    },
}

/// An error with its exit code.
struct Fail(u8, String);

fn bad(e: impl std::fmt::Display) -> Fail {
    Fail(2, e.to_string())
}

fn load(a: &ConfigArgs, base: Option<Config>, extra: &[String]) -> Result<Config, Fail> {
    let mut sets = a.sets.clone();
    if let Some(u) = &a.update {
        sets.push(format!("host.update={}", toml::Value::String(u.clone())));
    }
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

/// Refuses a key the user set (`--config` file, `--set`, `--update`) that the run `cfg`
/// describes never reads, naming what would read it (`world::usage`).
fn check_used(a: &ConfigArgs, cfg: &Config) -> Result<(), Fail> {
    let mut sets = a.sets.clone();
    if a.update.is_some() {
        sets.push("host.update=\"\"".into());
    }
    let src = ConfigSource {
        preset: None,
        file: a.config.clone(),
        sets,
    };
    world::usage::check_source(cfg, &src).map_err(bad)
}

/// What set the device geometry, if anything did: a preset, a configuration file with a
/// `[nand]` section, or a `--set nand.*` (a host run sizes the device only when nothing did).
fn geometry_set_by(a: &ConfigArgs) -> Result<Option<String>, Fail> {
    if let Some(k) = a
        .sets
        .iter()
        .map(|s| s.split('=').next().unwrap_or(s).trim())
        .find(|k| world::host_run::GEOMETRY_KEYS.contains(k))
    {
        return Ok(Some(format!("--set {k}")));
    }
    if let Some(p) = &a.preset {
        return Ok(Some(format!("--preset {p}")));
    }
    if let Some(f) = &a.config {
        let text = std::fs::read_to_string(f).map_err(|e| bad(format!("{}: {e}", f.display())))?;
        let table: toml::Table = text
            .parse()
            .map_err(|e| bad(format!("{}: {e}", f.display())))?;
        let sets_geometry = table
            .get("nand")
            .and_then(|n| n.as_table())
            .is_some_and(|n| {
                world::host_run::GEOMETRY_KEYS
                    .iter()
                    .any(|k| n.contains_key(k.trim_start_matches("nand.")))
            });
        if sets_geometry {
            return Ok(Some(format!("the [nand] section of {}", f.display())));
        }
    }
    Ok(None)
}

fn write_json<T: serde::Serialize + ?Sized>(path: &Option<PathBuf>, v: &T) -> Result<(), Fail> {
    if let Some(o) = Out::check(path)? {
        let text = serde_json::to_string_pretty(v).map_err(|e| Fail(2, e.to_string()))?;
        o.write(&(text + "\n"))?;
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
    quiet: bool,
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
    Out::check(json)?;
    cfg.validate().map_err(bad)?;
    check_used(a, &cfg)?;
    let opts = RunOptions {
        record_trace: record.clone(),
        record: false,
        image: image.clone(),
        ack_log: ack_log.clone(),
    };
    // A bar by simulated work: prefill pages, then requests issued of
    // the workload's total, with ETA; a spinner when the workload does not know its total.
    let bar = if progress_on(quiet) {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(work_bar_style());
        b.set_prefix(format!("{} prefill", cfg.protocol.name));
        b.enable_steady_tick(std::time::Duration::from_millis(200));
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let progress: Option<Box<dyn FnMut(world::run::Progress)>> = if bar.is_hidden() {
        None
    } else {
        let b = bar.clone();
        let name = cfg.protocol.name.clone();
        let mut measuring = false;
        Some(Box::new(move |p| match p {
            world::run::Progress::Prefill { done, total } => {
                b.set_length(total);
                b.set_position(done);
            }
            world::run::Progress::Measure { done, total } => {
                if !measuring {
                    measuring = true;
                    b.set_prefix(format!("{name} requests"));
                    b.reset_eta();
                }
                b.set_length(total.unwrap_or(done).max(done));
                b.set_position(done);
            }
        }))
    };
    let r = world::run::run_with_progress(&cfg, &opts, progress);
    bar.finish_and_clear();
    // A streamed trace is validated as it is replayed, so a bad line can end a run that has
    // begun recording its commands: the partial recording is no result, and goes.
    if let (Err(world::WorldError::Workload(_)), Some(p)) = (&r, &opts.record_trace) {
        let _ = std::fs::remove_file(p);
    }
    let out = r.map_err(|e| match &e {
        // A request the protocol cannot honour is the input's fault.
        world::WorldError::Device { error, .. } if study::input_fault(error) => bad(e),
        world::WorldError::Device { .. } => Fail(1, e.to_string()),
        _ => bad(e),
    })?;
    let summary = report::run_summary(&out.metrics);
    if json.as_ref().is_some_and(|p| p.as_os_str() == "-") {
        eprint!("{summary}");
    } else {
        print!("{summary}");
    }
    write_json(json, &out.metrics)
}

/// An output destination, checked before anything runs (a bad path
/// used to fail only after the run): a file that can be created, or `-` for stdout.
#[derive(Clone)]
enum Out {
    Stdout,
    File(PathBuf),
}

impl Out {
    fn check(p: &Option<PathBuf>) -> Result<Option<Out>, Fail> {
        let Some(p) = p else { return Ok(None) };
        if p.as_os_str() == "-" {
            return Ok(Some(Out::Stdout));
        }
        if p.is_dir() {
            return Err(bad(format!("{}: is a directory, not a file", p.display())));
        }
        let existed = p.exists();
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(p)
            .map_err(|e| bad(format!("{}: cannot write here: {e}", p.display())))?;
        if !existed {
            let _ = std::fs::remove_file(p);
        }
        Ok(Some(Out::File(p.clone())))
    }

    fn write(&self, text: &str) -> Result<(), Fail> {
        match self {
            Out::Stdout => {
                use std::io::Write;
                std::io::stdout()
                    .write_all(text.as_bytes())
                    .map_err(|e| Fail(2, format!("standard output: {e}")))
            }
            Out::File(p) => {
                std::fs::write(p, text).map_err(|e| Fail(2, format!("{}: {e}", p.display())))
            }
        }
    }
}

/// The style of a bar by simulated work: what, count of total, rate, ETA.
fn work_bar_style() -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template(
        "{prefix} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} (ETA {eta})",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
}

/// Whether progress bars may draw: not with --quiet, and only on a terminal.
fn progress_on(quiet: bool) -> bool {
    use std::io::IsTerminal;
    !quiet && std::io::stderr().is_terminal()
}

fn cmd_study(a: &ConfigArgs, o: &StudyArgs, sweep: bool, quiet: bool) -> Result<(), Fail> {
    let protocols = study::parse_protocols(&o.protocols).map_err(bad)?;
    let json = Out::check(&o.json)?;
    let csv = Out::check(&o.csv)?;
    let mut src = ConfigSource {
        preset: a.preset.clone(),
        file: a.config.clone(),
        sets: Vec::new(),
    };
    let mut grid = Vec::new();
    for s in &a.sets {
        if sweep {
            let (k, vs) = study::parse_sweep_set(s).map_err(bad)?;
            if vs.len() > 1 {
                grid.push((k, vs));
                continue;
            }
        }
        src.sets.push(s.clone());
    }
    if let Some(seed) = a.seed {
        src.sets.push(format!("seed={seed}"));
    }
    if sweep && grid.is_empty() {
        return Err(bad(
            "sweep: give at least one --set key=a,b,... with two or more values (or use compare)",
        ));
    }
    let points = study::plan(&src, &grid, &protocols).map_err(bad)?;
    let prepared: Vec<study::Prepared> = points
        .into_iter()
        .map(|p| study::prepare(p, !o.no_adapt))
        .collect();
    if let Some(m) = study::first_invalid(&prepared) {
        return Err(bad(m));
    }
    let (jobs, note) = study::jobs_for(&prepared, o.jobs.unwrap_or(0));
    if let Some(n) = note {
        eprintln!("note: {n}");
    }
    let bar = if progress_on(quiet) {
        let b = indicatif::ProgressBar::new(prepared.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {pos}/{len} points, ETA {eta} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let done = |r: &report::results::Record| {
        bar.set_message(format!("{} {}", r.row.protocol, r.row.status));
        bar.inc(1);
    };
    let records = study::run_points(prepared, jobs, &done).map_err(|e| Fail(2, e))?;
    bar.finish_and_clear();
    let table = report::results::table(&records);
    let to_stdout = matches!(json, Some(Out::Stdout)) || matches!(csv, Some(Out::Stdout));
    let head = study_header(&records);
    if to_stdout {
        eprint!("{head}{table}");
    } else {
        print!("{head}{table}");
    }
    if let Some(j) = json {
        j.write(&report::results::to_json(&records).map_err(|e| Fail(2, e))?)?;
    }
    if let Some(c) = csv {
        c.write(&report::results::to_csv(&records).map_err(|e| Fail(2, e))?)?;
    }
    Ok(())
}

/// The lines above a compare or sweep table: the workload and seed, or, when the points'
/// workloads differ, one line per distinct workload naming the swept values it runs under;
/// then every swept key with all its values.
fn study_header(records: &[report::results::Record]) -> String {
    let Some(first) = records
        .iter()
        .find(|r| r.row.status == "ok")
        .or(records.first())
    else {
        return String::new();
    };
    let mut swept: Vec<(String, Vec<String>)> = Vec::new();
    for r in records {
        for (k, v) in &r.swept {
            let v = report::results::value_text(v);
            match swept.iter_mut().find(|(kk, _)| kk == k) {
                Some((_, vs)) if !vs.contains(&v) => vs.push(v),
                Some(_) => {}
                None => swept.push((k.clone(), vec![v])),
            }
        }
    }
    // Adapted points differ by their adaptation (said in their reasons), not by the study.
    // Each distinct (workload, seed) of the points that ran as configured, in grid order,
    // with the swept values of its points.
    let mut groups: Vec<(String, u64, Vec<&report::results::Record>)> = Vec::new();
    for r in records.iter().filter(|r| r.row.status == "ok") {
        match groups
            .iter_mut()
            .find(|(w, s, _)| *w == r.row.workload && *s == r.row.seed)
        {
            Some((_, _, rs)) => rs.push(r),
            None => groups.push((r.row.workload.clone(), r.row.seed, vec![r])),
        }
    }
    let mut head = if groups.len() > 1 {
        let mut h = format!("workloads ({} across the points):\n", groups.len());
        for (w, seed, rs) in &groups {
            // The swept keys that tell this workload's points apart: those whose values
            // here are not all the key's values.
            let mut which = Vec::new();
            for (k, all) in &swept {
                let mut vs: Vec<String> = Vec::new();
                for r in rs {
                    if let Some((_, v)) = r.swept.iter().find(|(kk, _)| kk == k) {
                        let v = report::results::value_text(v);
                        if !vs.contains(&v) {
                            vs.push(v);
                        }
                    }
                }
                if !vs.is_empty() && vs.len() < all.len() {
                    which.push(format!("{k} = {}", vs.join(", ")));
                }
            }
            let at = if which.is_empty() {
                String::new()
            } else {
                format!("{}: ", which.join("; "))
            };
            h.push_str(&format!("  {at}{w}, seed {seed}\n"));
        }
        h
    } else {
        format!(
            "workload: {}, seed {}\n",
            first.row.workload, first.row.seed
        )
    };
    if !swept.is_empty() {
        let parts: Vec<String> = swept
            .iter()
            .map(|(k, vs)| format!("{k} = {}", vs.join(", ")))
            .collect();
        head.push_str(&format!("swept: {}\n", parts.join("; ")));
    }
    head
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
        // Per logical page, every acked value in ack order (`None`: trimmed).
        let mut acked: std::collections::BTreeMap<u32, Vec<Option<u64>>> = Default::default();
        // A writer killed mid-line leaves a last line without its newline: it never finished
        // logging that ack, so it is not a claim.
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
                    "{}:{}: expected 'lpn tag' or 'lpn -'",
                    p.display(),
                    i + 1
                )));
            };
            let l: u32 = l
                .parse()
                .map_err(|_| bad(format!("{}:{}: bad lpn", p.display(), i + 1)))?;
            let t: Option<u64> = if t == "-" {
                None
            } else {
                Some(
                    t.parse()
                        .map_err(|_| bad(format!("{}:{}: bad tag", p.display(), i + 1)))?,
                )
            };
            acked.entry(l).or_default().push(t);
        }
        // A page must read its last acked value, or a value written after it whose ack was
        // never logged (in flight at the kill): a tag above every tag acked for the page
        // that is not itself one of them. Tags grow with issue order; under serializable
        // isolation a transaction that wrote a page earlier may commit later, so a later
        // *logged* ack with a smaller tag is still the one that must win, which this
        // honours (it compares with the last ack in log order, not the largest tag).
        let mut lost = 0;
        for (l, vals) in &acked {
            let last = vals.last().copied().flatten();
            let known = |x: u64| vals.contains(&Some(x));
            let newest = vals.iter().flatten().copied().max().unwrap_or(0);
            let ok = match (vals.last(), contents.get(*l as usize)) {
                (Some(Some(t)), Some(ssd::ReadOutcome::Tag(x))) => {
                    x == t || (*x > newest && !known(*x))
                }
                (Some(None), Some(ssd::ReadOutcome::Unmapped)) => true,
                (Some(None), Some(ssd::ReadOutcome::Tag(x))) => *x > newest && !known(*x),
                _ => false,
            };
            if !ok {
                if lost < 5 {
                    let what = last.map_or("trimmed".to_string(), |t| format!("tag {t}"));
                    eprintln!(
                        "lpn {l}: acked {what}, reads {:?}",
                        contents.get(*l as usize)
                    );
                }
                lost += 1;
            }
        }
        let last = &acked;
        println!("ack log: {} pages checked, {lost} lost", last.len());
        if lost > 0 {
            return Err(Fail(1, format!("{lost} acked writes lost")));
        }
    }
    write_json(json, &rep)
}

/// `reproduce`'s progress: its "[k/n] label" lines drive a bar with the count and an ETA;
/// any other line is printed above the bar. Without a draw target (not a terminal) every
/// line goes to stderr as it is; with `--quiet` nothing is written.
struct RunBar {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
    /// Where plain lines go instead of stderr (tests only).
    captured: Option<std::sync::Mutex<Vec<String>>>,
}

impl RunBar {
    fn new(target: Option<indicatif::ProgressDrawTarget>, quiet: bool) -> RunBar {
        let bar = target.filter(|_| !quiet).map(|t| {
            let b = indicatif::ProgressBar::with_draw_target(Some(0), t);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {pos}/{len} runs, ETA {eta} {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            b
        });
        RunBar {
            bar,
            quiet,
            captured: None,
        }
    }

    /// "[k/n] label" (as `reproduce::Progress` writes it) → position k of n; a new batch
    /// (k = 1 or another n) restarts the bar.
    fn parse(m: &str) -> Option<(u64, u64, &str)> {
        let (kn, label) = m.strip_prefix('[')?.split_once(']')?;
        let (k, n) = kn.split_once('/')?;
        Some((k.parse().ok()?, n.parse().ok()?, label.trim()))
    }

    fn line(&self, m: &str) {
        if self.quiet {
            return;
        }
        let Some(b) = &self.bar else {
            match &self.captured {
                Some(c) => c.lock().unwrap_or_else(|e| e.into_inner()).push(m.into()),
                None => eprintln!("{m}"),
            }
            return;
        };
        match RunBar::parse(m) {
            Some((k, n, label)) => {
                if b.length() != Some(n) || k == 1 {
                    b.reset();
                    b.set_length(n);
                }
                b.set_position(k);
                b.set_message(label.to_string());
            }
            None => b.println(m),
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// The terminal's claims table: at most this many columns wide (REPORT.md and claims.json
/// hold every text in full).
const TERMINAL_COLUMNS: usize = 120;

/// What `reproduce` prints on stdout: the per-paper summary on both axes, then one line per
/// claim (id, measured, both axes as words), each table within `TERMINAL_COLUMNS`.
fn reproduce_terminal(outputs: &[(String, reproduce::Output)]) -> String {
    let mut s = report::Table::new(vec![
        "paper",
        "claims",
        "d:agrees",
        "d:disagrees",
        "d:n/m",
        "m:within 2×",
        "m:off",
        "m:qual.",
        "m:n/m",
        "explained",
        "unexplained",
    ]);
    let sums = reproduce::summaries(outputs);
    for p in &sums {
        s.row(p.row());
    }
    let mut out = String::from(
        "summary per paper (d: direction, m: magnitude; qual.: the paper gives no number; n/m: not modelled):\n",
    );
    out.push_str(&s.render_within(TERMINAL_COLUMNS));
    for p in sums
        .iter()
        .filter(|p| p.paper != "all" && !p.unexplained.is_empty())
    {
        out.push_str(&format!(
            "{}: {} unexplained disagreement(s) (listed in REPORT.md)\n",
            p.paper,
            p.unexplained.len()
        ));
    }
    out.push('\n');
    let mut t = report::Table::new(vec!["id", "measured", "direction", "magnitude"]);
    for (_, o) in outputs {
        for c in &o.claims {
            t.row(vec![
                c.id.clone(),
                c.measured.clone(),
                c.verdict.direction_text().to_string(),
                c.verdict.magnitude_text(),
            ]);
        }
    }
    out.push_str(&t.render_within(TERMINAL_COLUMNS));
    out
}

fn cmd_reproduce(
    papers: &[String],
    quick: bool,
    out: &std::path::Path,
    quiet: bool,
    jobs: usize,
    engine: &str,
) -> Result<(), Fail> {
    let mut list: Vec<String> = Vec::new();
    for p in papers {
        match p.as_str() {
            "all" => list.extend([
                "txflash".to_string(),
                "lighttx".to_string(),
                "flagcommit".to_string(),
                "ipa".to_string(),
                "pcmlogging".to_string(),
            ]),
            "txflash" | "lighttx" | "flagcommit" | "ipa" | "pcmlogging" => list.push(p.clone()),
            other => {
                return Err(bad(format!(
                    "unknown paper '{other}' (known: txflash, lighttx, flagcommit, ipa, pcmlogging, all)"
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
    if engine == "ray" {
        if jobs != 0 {
            return Err(bad(
                "--jobs sets the local engine's threads; with --engine ray, Ray places the points by its cluster's CPUs and memory",
            ));
        }
        let outputs = reproduce_on_ray(&list, scale, quiet)?;
        return reproduce_report(out, &outputs, scale, wall);
    }
    // The experiments report "[k/n] label" as each run finishes; a bar gives the ETA.
    // Every paper's points are counted first, so the total is right from the start.
    let bar = RunBar::new(
        progress_on(quiet).then(indicatif::ProgressDrawTarget::stderr),
        quiet,
    );
    let progress = |m: &str| bar.line(m);
    let mut progress = reproduce::Progress::new(jobs, &progress);
    progress.preplan(reproduce::planned_points(&list, scale));
    // Every paper at once on the same workers: the costliest waiting point first, both
    // cores busy to the end (reproduce::run_papers).
    let outputs = reproduce::run_papers(&list, scale, &progress).map_err(|e| Fail(1, e))?;
    bar.finish();
    reproduce_report(out, &outputs, scale, wall)
}

/// Writes a reproduction's report files and prints its summary.
fn reproduce_report(
    out: &std::path::Path,
    outputs: &[(String, reproduce::Output)],
    scale: reproduce::Scale,
    wall: std::time::Instant,
) -> Result<(), Fail> {
    reproduce::write(out, outputs, scale, wall.elapsed().as_secs_f64()).map_err(|e| Fail(2, e))?;
    print!("{}", reproduce_terminal(outputs));
    println!(
        "report: {} and {}",
        out.join("REPORT.md").display(),
        out.join("REPORT.html").display()
    );
    Ok(())
}

/// `reproduce --engine ray`: the Python package's Ray driver (`python -m commitlab._ray`)
/// runs every point as a Ray task, round by round (`reproduce::remote`), and writes their
/// results; the papers' claims are then computed here from those results, as the local
/// engine computes them from its own.
fn reproduce_on_ray(
    papers: &[String],
    scale: reproduce::Scale,
    quiet: bool,
) -> Result<Vec<(String, reproduce::Output)>, Fail> {
    // A paper whose points cannot travel is refused before Python or Ray start.
    reproduce::remote::round(papers, scale, &reproduce::remote::Remote::new()).map_err(bad)?;
    let python = std::env::var("COMMITLAB_PYTHON").unwrap_or_else(|_| "python3".into());
    let dir = std::env::temp_dir().join(format!("commitlab-ray-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| bad(format!("{}: {e}", dir.display())))?;
    let results = dir.join("results.json");
    let mut cmd = std::process::Command::new(&python);
    cmd.args(["-m", "commitlab._ray", "reproduce", &papers.join(",")])
        .arg(if scale == reproduce::Scale::Quick {
            "quick"
        } else {
            "full"
        })
        .arg(&results);
    if quiet {
        cmd.arg("--quiet");
    }
    let status = cmd.status().map_err(|e| {
        bad(format!(
            "--engine ray runs `{python} -m commitlab._ray` (set COMMITLAB_PYTHON to choose the Python): {e}"
        ))
    })?;
    if !status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(bad(format!(
            "--engine ray: `{python} -m commitlab._ray` failed ({status}); its message is above (the package installs with `pip install ./python`, Ray with `pip install ray`)"
        )));
    }
    let text =
        std::fs::read_to_string(&results).map_err(|e| bad(format!("{}: {e}", results.display())));
    let _ = std::fs::remove_dir_all(&dir);
    let remote = reproduce::remote::Remote::new();
    reproduce::remote::results_from_json(&remote, &text?).map_err(bad)?;
    match reproduce::remote::round(papers, scale, &remote) {
        Ok(Some(outputs)) => Ok(outputs),
        Ok(None) => Err(bad(format!(
            "--engine ray: {} points have no result: the Python package's commitlab plans other points than this binary; install it from this source (pip install ./python)",
            remote.take_pending().len()
        ))),
        Err(e) => Err(Fail(1, e)),
    }
}

fn cmd_config(
    a: &ConfigArgs,
    explain: &Option<String>,
    reference: bool,
    main_job: bool,
) -> Result<(), Fail> {
    if reference {
        print!("{}", world::config_doc::markdown());
        return Ok(());
    }
    if let Some(k) = explain {
        print!("{}", world::config_doc::explain(k).map_err(bad)?);
        return Ok(());
    }
    if main_job {
        let mut sets = a.sets.clone();
        if let Some(s) = a.seed {
            sets.push(format!("seed={s}"));
        }
        let src = ConfigSource {
            preset: a.preset.clone(),
            file: a.config.clone(),
            sets,
        };
        let c = Config::load_under(world::presets::MAIN_JOB, &src).map_err(bad)?;
        print!("{}", c.to_toml());
        return Ok(());
    }
    load(a, None, &[]).map(|c| print!("{}", c.to_toml()))
}

/// A `--host` help line naming every registered recovery strategy
/// (`host::strategy::REGISTRY`), so a new strategy appears without editing the text.
pub(crate) fn host_help(head: &str, tail: &str) -> String {
    format!("{head} ({}) {tail}", host::strategy::names().join(", "))
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
            host,
            workload,
        } => {
            let flags = host_image::RunFlags {
                protocol,
                trace,
                trace_format,
                record,
                json,
                image,
                ack_log,
                workload,
            };
            match host {
                Some(h) => host_image::cmd_host_run(cfg, h, &flags),
                None if workload.is_some() => Err(Fail(
                    2,
                    "--workload picks the DBMS host's workload (host.workload) and needs --host S; a device run's workload is the [workload] section".into(),
                )),
                None => host_image::check_device_run(cfg, &flags).and_then(|()| {
                    cmd_run(
                        cfg,
                        protocol,
                        trace,
                        trace_format.as_deref().unwrap_or("disksim"),
                        record,
                        json,
                        image,
                        ack_log,
                        cli.quiet,
                    )
                }),
            }
        }
        Cmd::Compare { cfg, out } => cmd_study(cfg, out, false, cli.quiet),
        Cmd::Sweep { cfg, out } => cmd_study(cfg, out, true, cli.quiet),
        Cmd::Crash(a) => crash::cmd_crash(a, cli.quiet),
        Cmd::Soak(a) => crash::cmd_soak(a),
        Cmd::Sqlite { cmd } => sql_cmd::cmd_sqlite(cmd),
        Cmd::Bench {
            quick,
            size_gib,
            device_only,
            json,
        } => cmd_bench(*quick, *size_gib, *device_only, json),
        Cmd::TraceStats { cfg, trace, json } => trace_stats::cmd_trace_stats(cfg, trace, json),
        Cmd::Recover {
            image,
            verify_acks,
            json,
            host,
        } => host_image::cmd_recover(image, host, verify_acks, json),
        Cmd::Reproduce {
            papers,
            quick,
            out,
            jobs,
            engine,
        } => cmd_reproduce(papers, *quick, out, cli.quiet, *jobs, engine),
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
                            "{p:<11} {:>6.1} GiB, {} planes, {} KiB pages, {} pages/block, {}",
                            g.capacity_bytes() as f64 / (1u64 << 30) as f64,
                            g.pus(),
                            g.page_bytes / 1024,
                            g.pages_per_block,
                            toml::Value::try_from(c.nand.cell)
                                .ok()
                                .and_then(|v| v.as_str().map(String::from))
                                .unwrap_or_default()
                        )
                    }
                    Err(e) => println!("{p:<11} {e}"),
                }
            }
            Ok(())
        }
        Cmd::Config {
            cfg,
            explain,
            reference,
            main_job,
        } => cmd_config(cfg, explain, *reference, *main_job),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail(code, msg)) => {
            // An empty message: stdout was closed (`crash … | head`); end quietly.
            if !msg.is_empty() {
                eprintln!("error: {msg}");
            }
            ExitCode::from(code)
        }
    }
}

fn cmd_host_run(
    a: &ConfigArgs,
    strategy: &str,
    protocol: &Option<String>,
    workload: &Option<String>,
    trace: &[String],
    json: &Option<PathBuf>,
    record: &Option<PathBuf>,
) -> Result<(), Fail> {
    let mut extra = vec![
        "workload.kind=\"host\"".to_string(),
        format!("host.strategy=\"{strategy}\""),
    ];
    if let Some(p) = protocol {
        extra.push(format!("protocol.name=\"{p}\""));
    }
    if let Some(w) = workload {
        extra.push(format!("host.workload={}", toml::Value::String(w.clone())));
    }
    extra.extend(trace.iter().cloned());
    let cfg = load(a, None, &extra)?;
    host_image::check_host_trace(&cfg, !trace.is_empty())?;
    check_used(a, &cfg)?;
    // An unwritable trace path is bad input, found before the run rather than after it.
    if record.as_ref().is_some_and(|p| p.as_os_str() != "-") {
        Out::check(record)?;
    }
    let sizing = match geometry_set_by(a)? {
        Some(by) => world::host_run::Sizing::Fixed(by),
        None => world::host_run::Sizing::Auto,
    };
    let (m, note) =
        world::host_run::run_host_sized(&cfg, record.as_deref(), &sizing).map_err(|e| match e {
            world::WorldError::Device { .. } | world::WorldError::Io(_) => Fail(1, e.to_string()),
            other => bad(other),
        })?;
    if let Some(n) = note {
        println!("{n}");
    }
    print_host_metrics(&m);
    write_json(json, &m)
}

/// The summary a host run prints.
fn print_host_metrics(m: &world::host_run::HostMetrics) {
    println!(
        "host {} on {}: {}\ncommitted {} aborted {} restarted {} in {:.3} s simulated: {:.1} txn/s\ntxn time mean {:.3} ms p99 {:.3} ms; commit response mean {:.3} ms p99 {:.3} ms\nlock waits {} deadlocks {} buffer hit ratio {:.3}; log {} B in {} page writes; GC share {:.3}",
        m.strategy,
        m.protocol,
        m.workload,
        m.txns_committed,
        m.txns_aborted,
        m.txns_restarted,
        m.sim_time_ns as f64 / 1e9,
        m.throughput_per_s,
        m.txn_time_ns.mean / 1e6,
        m.txn_time_ns.p99 as f64 / 1e6,
        m.commit_latency_ns.mean / 1e6,
        m.commit_latency_ns.p99 as f64 / 1e6,
        m.lock_waits,
        m.deadlocks,
        m.buffer_hit_ratio,
        m.log_bytes,
        m.log_pages,
        m.gc_share
    );
}

pub(crate) fn cmd_host_crash(
    a: &ConfigArgs,
    strategy: &str,
    protocol: &str,
    schedules: Option<u64>,
    state: Option<u64>,
    max_in_flight: usize,
    double: bool,
    run_on: bool,
) -> Result<(), Fail> {
    ssd::protocol::lookup(protocol).map_err(bad)?;
    if schedules == Some(0) {
        return Err(Fail(2, "--schedules must be at least 1".into()));
    }
    let base = world::host_run::host_crash_config_for(strategy, protocol, a.update.as_deref());
    let cfg = load(
        a,
        Some(base),
        &[
            format!("protocol.name=\"{protocol}\""),
            format!("host.strategy=\"{strategy}\""),
        ],
    )?;
    check_used(a, &cfg)?;
    // The database sizes the device as in `run --host`, unless the geometry was set.
    let sizing = match geometry_set_by(a)? {
        Some(by) => world::host_run::Sizing::Fixed(by),
        None => world::host_run::Sizing::Auto,
    };
    let (cfg, note) = world::host_run::size_host(&cfg, &sizing).map_err(bad)?;
    if let Some(n) = note {
        println!("{n}");
    }
    let mode = match schedules {
        Some(n) => host::check::Mode::Random { schedules: n },
        None => host::check::Mode::Exhaustive { max_in_flight },
    };
    let rec = world::host_run::record_host(&cfg).map_err(|e| match e {
        world::WorldError::Config(_) => bad(e),
        other => Fail(1, format!("recording the host run failed: {other}")),
    })?;
    let rep = if run_on {
        // Refused before anything runs: a strategy whose restart cannot run on (exit 2).
        if let Some((key, reason)) = host::check::run_on_refusal(&rec.cfg) {
            return Err(Fail(2, format!("--run-on: {key}: {reason}")));
        }
        host::check::check_run_on(&rec, mode, cfg.seed, state).map_err(|e| Fail(2, e))?
    } else {
        world::host_run::check_host_with(&rec, mode, cfg.seed, state, double).map_err(bad)?
    };
    let replay = |k: u64| {
        let mut cmd = format!(
            "commitlab crash --host {} --protocol {} --seed {}",
            quote(strategy),
            quote(protocol),
            cfg.seed
        );
        match schedules {
            Some(n) => cmd.push_str(&format!(" --schedules {n}")),
            None => cmd.push_str(" --exhaustive"),
        }
        if double {
            cmd.push_str(" --double");
        }
        if run_on {
            cmd.push_str(" --run-on");
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
        if let Some(u) = &a.update {
            cmd.push_str(&format!(" --update {}", quote(u)));
        }
        cmd.push_str(&format!(" --state {k}"));
        cmd
    };
    if let (Some(k), 0) = (state, rep.states) {
        return Err(Fail(
            2,
            format!("--state {k}: this run has no crash state {k} (states are numbered from 0)"),
        ));
    }
    for v in rep
        .first
        .iter()
        .take(if state.is_some() { usize::MAX } else { 1 })
    {
        if state.is_none() {
            println!("first violation (seed={}):", cfg.seed);
        }
        println!(
            "state {} at T={}: {} in flight, persisted {:?}, torn {:?}{}",
            v.state.index,
            v.state.t,
            v.state.in_flight.len(),
            v.state.persisted,
            v.state.torn,
            torn_log(&v.state)
        );
        for (d, s) in v.inside.iter().enumerate() {
            println!(
                "  then inside the {} recovery at T={} (its state {}): {} in flight, persisted {:?}, torn {:?}{}",
                if d == 0 { "first" } else { "second" },
                s.t,
                s.index,
                s.in_flight.len(),
                s.persisted,
                s.torn,
                torn_log(s)
            );
        }
        if let Some(s) = &v.run_on {
            println!(
                "  then recovered, ran on, and crashed again at T={} of that run (its state {}): {} in flight, persisted {:?}, torn {:?}",
                s.t,
                s.index,
                s.in_flight.len(),
                s.persisted,
                s.torn
            );
        }
        if v.findings.is_empty() {
            println!("  no violation");
        }
        for f in v.findings.iter().take(5) {
            println!("  {f}");
        }
        if state.is_none() {
            println!("replay: {}", replay(v.state.index));
        }
    }
    println!(
        "host run: {} commits, {} operations recorded, most in flight at once: {}",
        rep.commits, rep.ops, rep.max_in_flight_seen
    );
    if !rec.metrics.strategy_counters.is_empty() {
        let c: Vec<String> = rec
            .metrics
            .strategy_counters
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        println!("host run counters: {}", c.join(", "));
    }
    if double {
        println!(
            "of them inside recovery: {} (most media operations one recovery issued: {})",
            rep.states_in_recovery, rep.recovery_ops_max
        );
    }
    if run_on {
        println!(
            "of them after recover and run on: {} (most media operations one restart and run on issued: {}; restarts that voided log pages beyond the end: {})",
            rep.states_after_run_on, rep.run_on_ops_max, rep.run_on_voided
        );
    }
    println!(
        "crash states checked: {}, violations: {}",
        rep.states, rep.violations
    );
    if rep.violations > 0 {
        return Err(Fail(
            1,
            format!(
                "{} crash states violate the durability contract of host {strategy} on {protocol}",
                rep.violations
            ),
        ));
    }
    Ok(())
}

fn cmd_bench(
    quick: bool,
    size_gib: Option<u32>,
    device_only: bool,
    json: &Option<PathBuf>,
) -> Result<(), Fail> {
    use world::bench::{FULL_GIB, MAX_GIB, QUICK_GIB};
    let gib = size_gib.unwrap_or(if quick { QUICK_GIB } else { FULL_GIB });
    if !(1..=MAX_GIB).contains(&gib) {
        return Err(Fail(
            2,
            format!("--size-gib must be 1 to {MAX_GIB}, got {gib}"),
        ));
    }
    Out::check(json)?;
    let b = world::bench::run_bench_gib(gib).map_err(|e| Fail(1, e.to_string()))?;
    let mut v = serde_json::to_value(&b).unwrap_or_default();
    if !device_only {
        bench_host_cases(quick, &mut v)?;
    }
    // The whole process's peak (the device bench's, the host cases' and what the process
    // kept between them), read at the end; the device phase's beside it.
    if let Some(o) = v.as_object_mut() {
        o.insert("device_peak_rss_bytes".into(), b.peak_rss_bytes.into());
        o.insert(
            "peak_rss_bytes".into(),
            world::bench::peak_rss_bytes().into(),
        );
    }
    println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    write_json(json, &v)
}

/// `bench`'s host cases, added to its JSON.
fn bench_host_cases(quick: bool, v: &mut serde_json::Value) -> Result<(), Fail> {
    // The host case: its key beside the device bench's.
    // TPC-C at 20 warehouses, wal over none, 512 frames; and the bank source as before.
    let h = world::host_run::host_bench(quick).map_err(|e| Fail(1, format!("host bench: {e}")))?;
    let hb = world::host_run::host_bank_bench(quick)
        .map_err(|e| Fail(1, format!("host bank bench: {e}")))?;
    let (oop, ipa) = world::host_run::host_ipa_bench(quick)
        .map_err(|e| Fail(1, format!("host IPA bench: {e}")))?;
    let pcm = world::host_run::host_pcm_bench(quick)
        .map_err(|e| Fail(1, format!("host PCMLogging bench: {e}")))?;
    if let Some(o) = v.as_object_mut() {
        // A PCMLogging point's CPU time.
        o.insert(
            "host_pcm_txns_per_cpu_s".into(),
            pcm.host_txns_per_cpu_s.into(),
        );
        o.insert("host_pcm_cpu_s".into(), pcm.cpu_s.into());
        // IPA's bookkeeping against out-of-place on one workload.
        o.insert(
            "host_oop_txns_per_cpu_s".into(),
            oop.host_txns_per_cpu_s.into(),
        );
        o.insert(
            "host_ipa_txns_per_cpu_s".into(),
            ipa.host_txns_per_cpu_s.into(),
        );
        o.insert(
            "host_ipa_over_oop".into(),
            (ipa.host_txns_per_cpu_s / oop.host_txns_per_cpu_s.max(1e-9)).into(),
        );
        o.insert("host_txns_per_cpu_s".into(), h.host_txns_per_cpu_s.into());
        o.insert("host".into(), serde_json::to_value(&h).unwrap_or_default());
        o.insert(
            "host_bank_txns_per_cpu_s".into(),
            hb.host_txns_per_cpu_s.into(),
        );
        o.insert(
            "host_bank".into(),
            serde_json::to_value(&hb).unwrap_or_default(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::RunBar;
    use indicatif::{InMemoryTerm, ProgressDrawTarget};

    /// `reproduce` on a terminal shows points done of the total with an
    /// ETA, and its other lines above the bar. Drawn into an in-memory terminal (a real
    /// reproduction takes too long for a unit test; the CLI only wires this to stderr).
    #[test]
    fn reproduce_progress_draws_count_and_eta_on_a_terminal() {
        let term = InMemoryTerm::new(10, 120);
        let bar = RunBar::new(
            Some(ProgressDrawTarget::term_like(Box::new(term.clone()))),
            false,
        );
        bar.line("reproducing txflash (quick, 2 jobs)");
        bar.line("[1/4] fig5-none (1 s elapsed, ETA 3 s)");
        bar.line("[2/4] fig5-tc (2 s elapsed, ETA 2 s)");
        if let Some(b) = &bar.bar {
            b.tick();
        }
        let shown = term.contents();
        assert!(shown.contains("reproducing txflash"), "{shown}");
        assert!(shown.contains("2/4 runs, ETA"), "{shown}");
        assert!(shown.contains("fig5-tc"), "{shown}");
        // A new batch restarts the count.
        bar.line("[1/3] fig6-scc (3 s elapsed, ETA 6 s)");
        if let Some(b) = &bar.bar {
            b.tick();
        }
        let shown = term.contents();
        assert!(shown.contains("1/3 runs"), "{shown}");
        bar.finish();
        assert!(!term.contents().contains("1/3 runs"), "{}", term.contents());
    }

    /// `-q` is quiet: no "[k/N]" lines and no other progress lines, on a terminal or not
    /// (before, without a terminal every line went to stderr whatever `-q` said).
    #[test]
    fn reproduce_progress_is_silent_with_quiet() {
        let capture = |quiet: bool| {
            let mut bar = RunBar::new(None, quiet);
            bar.captured = Some(std::sync::Mutex::new(Vec::new()));
            bar.line("reproducing txflash (quick, 2 jobs)");
            bar.line("[1/4] fig5-none (1 s elapsed, ETA 3 s)");
            bar.captured.take().unwrap().into_inner().unwrap()
        };
        assert_eq!(capture(false).len(), 2);
        assert!(capture(true).is_empty());
        let term = InMemoryTerm::new(10, 120);
        let bar = RunBar::new(
            Some(ProgressDrawTarget::term_like(Box::new(term.clone()))),
            true,
        );
        bar.line("[1/4] fig5-none (1 s elapsed, ETA 3 s)");
        assert!(bar.bar.is_none());
        assert!(term.contents().is_empty(), "{}", term.contents());
    }

    /// Both axes as words, and no line of the terminal's tables wider than 120 columns,
    /// however long a claim's measured text is.
    #[test]
    fn reproduce_terminal_prints_both_axes_as_words_within_120_columns() {
        let claim = |id: &str, v: reproduce::Verdict| reproduce::Claim {
            paper: "txflash".into(),
            id: id.into(),
            claim: "c".into(),
            paper_value: "+1.5 %".into(),
            measured: "a measured text far longer than any terminal is wide, ".repeat(4),
            verdict: v,
            note: "n".into(),
        };
        let out = reproduce::Output {
            claims: vec![
                claim("txflash-a", reproduce::Verdict::change(0.015, 0.828)),
                claim("txflash-b", reproduce::Verdict::change(0.2, 0.25)),
            ],
            ..reproduce::Output::default()
        };
        let text = super::reproduce_terminal(&[("txflash".into(), out)]);
        for l in text.lines() {
            assert!(
                l.chars().count() <= 120,
                "{} columns: {l}",
                l.chars().count()
            );
        }
        assert!(text.contains("off (×55.2)"), "{text}");
        assert!(text.contains("within 2× (×1.25)"), "{text}");
        assert!(text.contains("1 unexplained"), "{text}");
    }

    #[test]
    fn reproduce_progress_parses_only_counted_lines() {
        assert_eq!(RunBar::parse("[3/7] a b"), Some((3, 7, "a b")));
        assert_eq!(RunBar::parse("reproducing lighttx"), None);
        assert_eq!(RunBar::parse("[x/7] a"), None);
        assert_eq!(RunBar::parse("[3 of 7] a"), None);
    }
}

/// A host crash state's torn operation on the log device (`host.log_device = "separate"`),
/// as printed after the data device's; empty with one device.
fn torn_log(s: &host::check::CrashState) -> String {
    match s.torn_log {
        Some(t) => format!(", log device torn {t:?}"),
        None => String::new(),
    }
}
