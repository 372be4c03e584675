//! `commitlab crash` and `commitlab soak`: the crash checker's command line.
//!
//! `crash` checks one protocol (`--protocol`) or every registered one (`--all`, in parallel
//! on all cores). Exhaustive checking runs every timing profile of
//! `check::timing::ADVERSARIAL` unless `--timing` pins one; random checking (`--schedules
//! N`) draws a timing profile per batch of [`BATCH`] schedules from the seed, records one
//! run per batch and streams the schedules (nothing is allocated per schedule); `--schedules`
//! and `--min-states` are bounded by [`SCHEDULES_MAX`] (longer campaigns: `soak`). A timing
//! profile whose recording fails is reported and the others are still checked; the run
//! then exits 2 if the failure was bad input (a request the protocol cannot honour, a
//! workload that does not fit the device before any crash), else 1. `--double` also crashes
//! inside recovery. Every failure prints the seed and a replay command that pins the
//! timing profile (`--timing SPEC`).
//!
//! `soak` runs random double-crash schedules over every protocol on all cores until a
//! target count, keeping its progress in a state file so a killed soak resumes where it
//! stopped, and prints states per second.
//!
//! Exit codes: 0 clean, 1 a violation (or a protocol that fails its workload), 2 bad input,
//! 141 stdout closed early (`crash … | head`): output stops quietly.

use crate::{load, quote, ConfigArgs, Fail};
use check::timing::{Timing, ADVERSARIAL};
use check::{CheckReport, Mode, Options, RecordError, Recording};
use clap::Args;
use rayon::prelude::*;
use std::io::Write;
use std::path::PathBuf;
use world::Config;

mod variants;

/// Random schedules per recording (per timing profile).
pub const BATCH: u64 = 512;

/// The most random schedules (or `--min-states`) one `crash` run accepts: 2^32, days of
/// checking at the checker's rate; longer campaigns are `commitlab soak`'s, which keeps
/// its progress in a state file.
pub const SCHEDULES_MAX: u64 = 1 << 32;

/// The exit code of a run whose stdout was closed (128 + SIGPIPE, as a shell reports it).
pub const CLOSED_STDOUT: u8 = 141;

/// Writes a line to stdout; a closed stdout ends the program quietly.
/// The end of a summary over many checks (protocols, variants): the states-checked line, the
/// fewest states one `unit` got (a failure below `--min-states`), and exit 1 naming every
/// failing one.
pub(crate) fn summary_end(
    checked: &str,
    unit: &str,
    fewest: Option<(u64, String)>,
    min_states: Option<u64>,
    mut failed: Vec<String>,
) -> Result<(), Fail> {
    say(checked)?;
    if let Some((n, l)) = &fewest {
        say(&format!("fewest crash states of one {unit}: {n} ({l})"))?;
        if let Some(m) = min_states.filter(|m| n < m) {
            failed.push(format!("{l} (only {n} of --min-states {m} crash states)"));
        }
    }
    if !failed.is_empty() {
        return Err(Fail(
            1,
            format!("crash violations in: {}", failed.join(", ")),
        ));
    }
    Ok(())
}

pub fn say(s: &str) -> Result<(), Fail> {
    let mut o = std::io::stdout().lock();
    writeln!(o, "{s}")
        .and_then(|_| o.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => Fail(CLOSED_STDOUT, String::new()),
            _ => Fail(2, format!("stdout: {e}")),
        })
}

#[derive(Args, Clone)]
pub struct CrashArgs {
    #[command(flatten)]
    pub cfg: ConfigArgs,
    /// The protocol to check: one of none, tc, scc, bpcc, cfc, afc, lighttx, aw, mhl-d,
    /// mhl-m.
    #[arg(long, required_unless_present_any = ["all", "host", "variants"], conflicts_with = "all")]
    pub protocol: Option<String>,
    /// Check every registered protocol (in parallel): exhaustively over the timing profiles,
    /// plus `--schedules N` random schedules each when given.
    #[arg(long)]
    pub all: bool,
    /// Check every safety variant instead (in parallel, as --all): the non-default position
    /// of each option that switches a protocol's crash-safety mechanism
    /// (`check::variants`), exhaustively plus `--schedules N` random schedules each; with
    /// --protocol P only P's variants.
    #[arg(long, conflicts_with_all = ["all", "host", "state", "shape"])]
    pub variants: bool,
    /// Enumerate every crash state for each timing profile. The default without
    /// --schedules; with --schedules N it runs both, exhaustive then N random states (as
    /// --all always does). Replay commands of exhaustive states spell it out.
    #[arg(long)]
    pub exhaustive: bool,
    /// Check N seeded random crash states instead (timing drawn per batch of 512).
    #[arg(long)]
    pub schedules: Option<u64>,
    /// Keep drawing random batches (after `--schedules N`, or after the exhaustive check
    /// when `--schedules` is not given) until the protocol's crash states, exhaustive plus
    /// random plus inside recovery, reach this many: CI's per-protocol floor.
    #[arg(long, conflicts_with_all = ["state", "host"])]
    pub min_states: Option<u64>,
    /// Evaluate only this state (to replay a failure) and describe it: `K`, or `K.J` for
    /// state J inside the recovery of state K (exhaustive --double).
    #[arg(long)]
    pub state: Option<String>,
    /// Exhaustive mode refuses configurations with more operations in progress at once.
    #[arg(long, default_value_t = 10)]
    pub max_in_flight: usize,
    /// Also crash inside recovery (every recovery operation exhaustively; in random mode a
    /// crash in the first recovery and sometimes one in the second).
    #[arg(long)]
    pub double: bool,
    /// Pin one timing profile: a name (configured, slow-host, slow-channel, slow-erase,
    /// jitter, late-acks, wild-jitter) or a spec such as host=4,channel=2,jitter=600000.
    #[arg(long)]
    pub timing: Option<String>,
    /// A workload shape (default, long-tx, hot-rewrite, abort-gc, erase-race,
    /// trim-in-flight, near-full, checkpoints, no-summaries).
    #[arg(long)]
    pub shape: Option<String>,
    #[arg(long, conflicts_with_all = ["all", "timing", "shape"], help = crate::host_help(
        "Crash-check a DBMS host run with this recovery strategy",
        "over `--protocol` (default none) instead of a device-level workload; `all` checks every strategy × protocol pair (and wal × update strategy) in parallel: exhaustively on the tiny run and --schedules N (default 1000) random states on a larger one"
    ))]
    pub host: Option<String>,
    /// With --host: recover, run on, crash again. After each first crash state's restart
    /// is judged, the restart writes its results back, the engine runs a fresh batch of
    /// transactions on the recovered medium, and a second crash (exhaustively over the
    /// restart's write-back and the first instants of the run after it, or one random
    /// state) is judged from the recovered database. Strategies whose restart cannot run on
    /// are refused (exit 2; with --host all, listed as refused).
    #[arg(long, requires = "host", conflicts_with = "double")]
    pub run_on: bool,
}

/// What checking one protocol produced.
#[derive(Default)]
struct Outcome {
    lines: Vec<String>,
    exhaustive_states: u64,
    random_states: u64,
    nested_states: u64,
    violations: u64,
    ops_max: usize,
    in_flight_max: usize,
    wall_s: f64,
    /// Recordings that failed (their timing profile named in the message); the other
    /// profiles are still checked. The exit code is the worst of them (2 for bad input).
    record_failures: Vec<Fail>,
}

fn record_err(protocol: &str, t: &Timing) -> impl Fn(RecordError) -> Fail {
    let spec = t.spec();
    let protocol = protocol.to_string();
    move |e| match e {
        RecordError::Input(s) => Fail(2, s),
        RecordError::Device(s) => Fail(
            1,
            format!("{protocol}: recording the run (timing {spec}) failed: {s}"),
        ),
    }
}

/// The configuration `crash` checks for `protocol`.
fn crash_config(a: &CrashArgs, protocol: &str) -> Result<Config, Fail> {
    ssd::protocol::lookup(protocol).map_err(crate::bad)?;
    let mut base = check::small_config(protocol);
    if let Some(s) = &a.shape {
        check::shapes::apply(s, &mut base).map_err(crate::bad)?;
    }
    let cfg = load(
        &a.cfg,
        Some(base),
        &[format!("protocol.name=\"{protocol}\"")],
    )?;
    cfg.validate().map_err(crate::bad)?;
    Ok(cfg)
}

fn parse_state(s: &str) -> Result<Vec<u64>, Fail> {
    let path: Result<Vec<u64>, _> = s.split('.').map(|p| p.parse::<u64>()).collect();
    match path {
        Ok(p) if !p.is_empty() && p.len() <= 2 => Ok(p),
        _ => Err(Fail(
            2,
            format!(
                "--state {s}: expected a state number K or K.J (state J inside the recovery of K)"
            ),
        )),
    }
}

/// The common part of every replay command.
fn replay_prefix(a: &CrashArgs, protocol: &str, seed: u64) -> String {
    let mut cmd = format!(
        "commitlab crash --protocol {} --seed {seed}",
        quote(protocol)
    );
    if let Some(c) = &a.cfg.config {
        cmd.push_str(&format!(" --config {}", quote(&c.display().to_string())));
    }
    if let Some(p) = &a.cfg.preset {
        cmd.push_str(&format!(" --preset {}", quote(p)));
    }
    if let Some(s) = &a.shape {
        cmd.push_str(&format!(" --shape {}", quote(s)));
    }
    for s in &a.cfg.sets {
        cmd.push_str(&format!(" --set {}", quote(s)));
    }
    if a.double {
        cmd.push_str(" --double");
    }
    cmd
}

fn describe_violations(
    out: &mut Outcome,
    rec: &Recording,
    rep: &CheckReport,
    seed: u64,
    replay: &dyn Fn(&check::Violation) -> String,
    replaying: bool,
) {
    for (n, v) in rep.first.iter().enumerate() {
        if !replaying && n > 0 {
            break;
        }
        if !replaying {
            out.lines.push(format!("first violation (seed={seed}):"));
        }
        out.lines
            .push(check::describe(rec, &v.state).trim_end().to_string());
        if !v.nested_text.is_empty() {
            out.lines.push(v.nested_text.trim_end().to_string());
        }
        if v.findings.is_empty() {
            out.lines.push("  no violation".into());
        }
        for f in v.findings.iter().take(5) {
            match f.lpn {
                Some(l) => out.lines.push(format!("  lpn {}: {}", l.0, f.what)),
                None => out.lines.push(format!("  {}", f.what)),
            }
        }
        if !replaying {
            out.lines.push(format!("replay: {}", replay(v)));
        }
    }
}

/// Checks one protocol as `a` says.
fn check_protocol(
    a: &CrashArgs,
    protocol: &str,
    exhaustive: bool,
    schedules: Option<u64>,
    bar: &Bar,
) -> Result<Outcome, Fail> {
    let wall = std::time::Instant::now();
    let cfg = crash_config(a, protocol)?;
    let seed = cfg.seed;
    let only = a.state.as_deref().map(parse_state).transpose()?;
    if only.as_ref().is_some_and(|p| p.len() > 1) && (schedules.is_some() || !a.double) {
        return Err(Fail(
            2,
            "--state K.J names a crash inside recovery: it needs --double and exhaustive mode (random schedules replay their recovery crashes from K alone)".into(),
        ));
    }
    let pinned = a
        .timing
        .as_deref()
        .map(Timing::parse)
        .transpose()
        .map_err(crate::bad)?;
    let mut out = Outcome::default();
    if exhaustive {
        let profiles: Vec<(String, Timing)> = match (&a.timing, &pinned) {
            (Some(name), Some(t)) => vec![(name.clone(), t.clone())],
            // Replaying a state without --timing means the configured timing.
            _ if only.is_some() => vec![("configured".into(), Timing::default())],
            _ => ADVERSARIAL
                .iter()
                .map(|(n, s)| (n.to_string(), Timing::parse(s).expect("built-in profile")))
                .collect(),
        };
        for (name, t) in &profiles {
            let mut c = cfg.clone();
            t.apply(&mut c);
            let rec = match check::record(&c).map_err(record_err(protocol, t)) {
                Ok(rec) => rec,
                Err(f) => {
                    out.lines
                        .push(format!("timing {name}: recording failed: {}", f.1));
                    out.record_failures.push(f);
                    continue;
                }
            };
            let mut o = Options::new(
                Mode::Exhaustive {
                    max_in_flight: a.max_in_flight,
                },
                seed,
            );
            o.only = only.clone();
            o.double = a.double;
            let rep = check::check_with(&rec, &o, &mut bar.tick()).map_err(|e| Fail(2, e))?;
            bar.recording_done();
            if let Some(k) = &a.state {
                if rep.states == 0 {
                    return Err(Fail(2, format!("--state {k}: this run has no crash state {k} (states are numbered from 0; run without --state to count them)")));
                }
            }
            let prefix = replay_prefix(a, protocol, seed);
            let replay = |v: &check::Violation| {
                format!(
                    "{prefix} --exhaustive --timing {} --state {}",
                    quote(name),
                    v.path(false)
                )
            };
            describe_violations(&mut out, &rec, &rep, seed, &replay, only.is_some());
            out.lines.push(format!(
                "timing {name}: operations recorded: {}, crash states: {} ({} inside recovery, at most {} recovery operations), violations: {}",
                rep.ops, rep.states, rep.nested_states, rep.recovery_ops_max, rep.violations
            ));
            out.exhaustive_states += rep.states;
            out.nested_states += rep.nested_states;
            out.violations += rep.violations;
            out.ops_max = out.ops_max.max(rep.ops);
            out.in_flight_max = out.in_flight_max.max(rep.max_in_flight_seen);
        }
    }
    if schedules.is_some() || a.min_states.is_some() {
        let n = schedules.unwrap_or(0);
        let floor = a.min_states.unwrap_or(0);
        let first_k = only.as_ref().map(|p| p[0]);
        if let Some(k) = first_k {
            if k >= n {
                return Err(Fail(2, format!("--state {k}: this run has no crash state {k} (--schedules {n} numbers them 0..{n})")));
            }
        }
        // One recording per batch of schedules, each with its own timing profile (or one
        // recording for all, with --timing). With `--min-states`, batches go on past `n`
        // (schedule numbers continue, so every state keeps its replay command) until the
        // floor is reached; the loop below stops them.
        let batches: Box<dyn Iterator<Item = (u64, u64, Timing)>> = match (&pinned, first_k) {
            (Some(t), Some(k)) => Box::new(std::iter::once((k, 1, t.clone()))),
            (Some(t), None) if floor == 0 => Box::new(std::iter::once((0, n, t.clone()))),
            (Some(t), None) => {
                let t = t.clone();
                Box::new((0..).map(move |b| {
                    let lo = b * BATCH;
                    (
                        lo,
                        if lo < n { BATCH.min(n - lo) } else { BATCH },
                        t.clone(),
                    )
                }))
            }
            (None, Some(k)) => Box::new(std::iter::once((k, 1, Timing::draw(seed, k / BATCH)))),
            (None, None) => Box::new((0..).map(move |b| {
                let lo = b * BATCH;
                (
                    lo,
                    if lo < n { BATCH.min(n - lo) } else { BATCH },
                    Timing::draw(seed, b),
                )
            })),
        };
        let mut profiles = 0u64;
        let mut drawn = 0u64;
        for (lo, count, t) in batches {
            if first_k.is_none() && lo >= n && out.exhaustive_states + out.random_states >= floor {
                break;
            }
            let mut c = cfg.clone();
            t.apply(&mut c);
            let rec = match check::record(&c).map_err(record_err(protocol, &t)) {
                Ok(rec) => rec,
                Err(f) => {
                    out.lines.push(format!(
                        "schedules {lo}..{}: recording failed: {}",
                        lo + count,
                        f.1
                    ));
                    out.record_failures.push(f);
                    // The remaining batches would draw other profiles; a failing recording
                    // is reported once, with the ones that ran.
                    break;
                }
            };
            profiles += 1;
            let mut o = Options::new(Mode::Random { schedules: count }, seed);
            o.first_schedule = lo;
            o.only = first_k.map(|k| vec![k]);
            o.double = a.double;
            let rep = check::check_with(&rec, &o, &mut bar.tick()).map_err(|e| Fail(2, e))?;
            bar.recording_done();
            let spec = t.spec();
            let prefix = replay_prefix(a, protocol, seed);
            let upto = (lo + count).max(n);
            let replay = |v: &check::Violation| {
                format!(
                    "{prefix} --schedules {upto} --timing {} --state {}",
                    quote(&spec),
                    v.path(true)
                )
            };
            if first_k.is_some() {
                out.lines.push(format!("timing profile: {spec}"));
            }
            if out.violations == 0 || first_k.is_some() {
                describe_violations(&mut out, &rec, &rep, seed, &replay, first_k.is_some());
            }
            out.random_states += rep.states;
            out.nested_states += rep.nested_states;
            out.violations += rep.violations;
            out.ops_max = out.ops_max.max(rep.ops);
            out.in_flight_max = out.in_flight_max.max(rep.max_in_flight_seen);
            drawn += count;
            if rep.states == 0 && lo >= n {
                // A run with no crash states cannot reach any floor.
                break;
            }
        }
        out.lines.push(format!(
            "random: {drawn} schedules over {profiles} timing profiles, {} crash states",
            out.random_states
        ));
    }
    out.wall_s = wall.elapsed().as_secs_f64();
    if !out.record_failures.is_empty() {
        let code = out.record_failures.iter().map(|f| f.0).max().unwrap_or(1);
        return Err(Fail(
            code,
            format!(
                "{}\n{protocol}: {} recording(s) failed (seed={seed}): {}",
                out.lines.join("\n"),
                out.record_failures.len(),
                out.record_failures[0].1
            ),
        ));
    }
    Ok(out)
}

/// The crash progress bar: recordings (protocol × timing profile, and
/// each batch of random schedules) done of their total, with ETA, and crash states checked
/// so far. The exhaustive states of a recording are counted only as they are enumerated, so
/// the bar's unit is the recording; the state count is the message. Hidden when stderr is
/// not a terminal or with --quiet.
pub struct Bar {
    bar: indicatif::ProgressBar,
    states: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Bar {
    fn new(quiet: bool, recordings: u64) -> Bar {
        let bar = if crate::progress_on(quiet) {
            let b = indicatif::ProgressBar::new(recordings);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "crash [{elapsed_precise}] {wide_bar} {pos}/{len} recordings, {msg} (ETA {eta})",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b.set_message("0 crash states");
            b.enable_steady_tick(std::time::Duration::from_millis(250));
            b
        } else {
            indicatif::ProgressBar::hidden()
        };
        Bar {
            bar,
            states: Default::default(),
        }
    }

    /// A `stop` callback for `check::check_with` that counts states (never stops).
    fn tick(&self) -> impl FnMut(&CheckReport) -> bool + '_ {
        let mut last = 0u64;
        move |rep| {
            if !self.bar.is_hidden() {
                let seen = rep.states + rep.nested_states;
                let step = seen.saturating_sub(last);
                let n = self
                    .states
                    .fetch_add(step, std::sync::atomic::Ordering::Relaxed)
                    + step;
                last = last.max(seen);
                if n.is_multiple_of(64) {
                    self.bar.set_message(format!("{n} crash states"));
                }
            }
            false
        }
    }

    fn recording_done(&self) {
        self.bar.inc(1);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Recordings one protocol's check makes: a timing profile each when exhaustive, a batch
/// of random schedules each.
fn recordings(a: &CrashArgs, exhaustive: bool, schedules: Option<u64>) -> u64 {
    let profiles = if a.timing.is_some() || a.state.is_some() {
        1
    } else {
        ADVERSARIAL.len() as u64
    };
    let random = match schedules {
        Some(_) if a.state.is_some() || a.timing.is_some() => 1,
        Some(n) => n.div_ceil(BATCH),
        None => 0,
    };
    u64::from(exhaustive) * profiles + random
}

/// A preset or a configuration file replaces crash's small base configuration (device
/// and workload) instead of layering over it: say so, once, before
/// anything runs.
fn note_replaced_base(a: &ConfigArgs, protocol: &str) -> Result<(), Fail> {
    let what = match (&a.preset, &a.config) {
        (Some(p), _) => format!("--preset {p}"),
        (None, Some(c)) => format!("--config {}", c.display()),
        (None, None) => return Ok(()),
    };
    let small = check::small_config(protocol);
    let cfg = load(
        a,
        Some(small.clone()),
        &[format!("protocol.name=\"{protocol}\"")],
    )?;
    eprintln!(
        "note: {what} replaces the crash checker's small configuration ({} pages, {} workload) with its own ({} pages, {} workload); exhaustive checking of a large device may refuse it (too many operations in flight) and random checking runs its whole workload per batch. To keep the small device and change one setting, use --set instead.",
        small.nand.geometry().pages(),
        small.workload.kind_name(),
        cfg.nand.geometry().pages(),
        cfg.workload.kind_name(),
    );
    Ok(())
}

pub fn cmd_crash(a: &CrashArgs, quiet: bool) -> Result<(), Fail> {
    // A protocol name in any case (`TC`), as the registry spells it from here on.
    let mut owned = a.clone();
    if let Some(p) = &a.protocol {
        owned.protocol = Some(ssd::protocol::canonical(p).map_err(crate::bad)?.to_string());
    }
    let a = &owned;
    crate::host_image::check_crash_flags(a)?;
    for (flag, n) in [("--schedules", a.schedules), ("--min-states", a.min_states)] {
        if n.is_some_and(|n| n > SCHEDULES_MAX) {
            return Err(Fail(
                2,
                format!(
                    "{flag} {}: at most {SCHEDULES_MAX} (2^32) per run; for longer campaigns use `commitlab soak`, which keeps its progress in a state file",
                    n.unwrap_or_default()
                ),
            ));
        }
    }
    if a.host.as_deref() == Some("all") {
        return cmd_host_matrix(a, quiet);
    }
    if let Some(h) = &a.host {
        let protocol = a.protocol.as_deref().unwrap_or("none");
        let state = match &a.state {
            None => None,
            Some(k) => Some(
                k.parse::<u64>()
                    .map_err(|_| Fail(2, format!("--state {k}: a host crash state is a number")))?,
            ),
        };
        return crate::cmd_host_crash(
            &a.cfg,
            h,
            protocol,
            a.schedules,
            state,
            a.max_in_flight,
            a.double,
            a.run_on,
        );
    }
    note_replaced_base(&a.cfg, a.protocol.as_deref().unwrap_or("none"))?;
    if a.schedules == Some(0) {
        return Err(Fail(2, "--schedules must be at least 1".into()));
    }
    if let Some(t) = &a.timing {
        Timing::parse(t).map_err(crate::bad)?;
    }
    if let Some(s) = &a.shape {
        check::shapes::apply(s, &mut Config::default()).map_err(crate::bad)?;
    }
    if a.exhaustive && a.schedules.is_some() && a.state.is_some() {
        return Err(Fail(
            2,
            "--state replays one state of one mode: use --exhaustive or --schedules N, not both"
                .into(),
        ));
    }
    if a.variants {
        return variants::cmd_variants(a, quiet);
    }
    if a.all {
        if a.state.is_some() {
            return Err(Fail(
                2,
                "--state replays one protocol's state: use --protocol".into(),
            ));
        }
        let names = ssd::protocol::names();
        let bar = Bar::new(quiet, names.len() as u64 * recordings(a, true, a.schedules));
        let results: Vec<(String, Result<Outcome, Fail>)> = names
            .par_iter()
            .map(|p| (p.to_string(), check_protocol(a, p, true, a.schedules, &bar)))
            .collect();
        bar.finish();
        let mut t = report::Table::new(vec![
            "protocol",
            "exhaustive",
            "random",
            "inside recovery",
            "total",
            "violations",
            "seconds",
        ]);
        let mut bad_input = None;
        let mut failed = Vec::new();
        let mut total = 0u64;
        let mut fewest: Option<(u64, String)> = None;
        for (p, r) in results {
            match r {
                Ok(o) => {
                    for l in &o.lines {
                        if o.violations > 0 || l.starts_with("timing") || l.starts_with("random") {
                            say(&format!("{p}: {l}"))?;
                        }
                    }
                    let states = o.exhaustive_states + o.random_states;
                    total += states;
                    if fewest.as_ref().map_or(true, |(n, _)| states < *n) {
                        fewest = Some((states, p.clone()));
                    }
                    t.row(vec![
                        p.clone(),
                        o.exhaustive_states.to_string(),
                        o.random_states.to_string(),
                        o.nested_states.to_string(),
                        states.to_string(),
                        o.violations.to_string(),
                        format!("{:.1}", o.wall_s),
                    ]);
                    if o.violations > 0 {
                        failed.push(p);
                    }
                }
                Err(Fail(2, m)) => bad_input = Some(m),
                Err(Fail(c, m)) => {
                    say(&format!("{p}: {m}"))?;
                    failed.push(p);
                    if c == CLOSED_STDOUT {
                        return Err(Fail(c, m));
                    }
                }
            }
        }
        if let Some(m) = bad_input {
            return Err(Fail(2, m));
        }
        say(t.render().trim_end())?;
        let checked = format!(
            "crash states checked: {total}, protocols failing: {}",
            failed.len()
        );
        return summary_end(&checked, "protocol", fewest, a.min_states, failed);
    }
    let protocol = a.protocol.as_deref().unwrap_or_default();
    let exhaustive = a.schedules.is_none() || a.exhaustive;
    let bar = Bar::new(quiet, recordings(a, exhaustive, a.schedules));
    let o = check_protocol(a, protocol, exhaustive, a.schedules, &bar);
    bar.finish();
    let o = o?;
    for l in &o.lines {
        say(l)?;
    }
    say(&format!(
        "operations recorded: {}, most in flight at once: {}",
        o.ops_max, o.in_flight_max
    ))?;
    say(&format!(
        "crash states checked: {}, violations: {}",
        o.exhaustive_states + o.random_states,
        o.violations
    ))?;
    if o.violations > 0 && a.state.is_none() {
        return Err(Fail(
            1,
            format!(
                "{} crash states violate the durability contract of {protocol}",
                o.violations
            ),
        ));
    }
    if o.violations > 0 {
        return Err(Fail(1, "the state violates the durability contract".into()));
    }
    Ok(())
}

#[derive(Args, Clone)]
pub struct SoakArgs {
    #[command(flatten)]
    pub cfg: ConfigArgs,
    /// Comma-separated protocols (default: every registered protocol).
    #[arg(long, value_delimiter = ',')]
    pub protocols: Vec<String>,
    /// Stop after this many schedules in total (each a crash, a crash inside its recovery,
    /// and sometimes one inside the next recovery).
    #[arg(long, default_value_t = 10_000_000)]
    pub schedules: u64,
    /// Progress file: a soak started with an existing file resumes from it.
    #[arg(long, default_value = "soak.state.json")]
    pub state_file: PathBuf,
    /// Stop after this many minutes (the state file keeps the progress).
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Draw a fresh seed for this soak instead of `--seed` (printed first, with the
    /// command that repeats the soak and the one that resumes it): each run explores
    /// other schedules, timing draws and host workloads than the last.
    #[arg(long)]
    pub draw_seed: bool,
    /// Also soak the DBMS host: every cell of `crash --host all` that is not refused
    /// (recovery strategy × protocol × update strategy), random crash states on its larger
    /// run, a fresh recording (seed + batch) per batch.
    #[arg(long)]
    pub hosts: bool,
}

/// Random crash states per host batch of a soak (`soak --hosts`).
pub const HOST_BATCH: u64 = 1000;

/// A seed no earlier soak used, from the operating system's randomness (the standard
/// library's hash keys) and the clock: printed, so the soak it starts can be repeated.
fn draw_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.write_u128(now);
    h.write_u32(std::process::id());
    // Seeds stay below 2^53 so that every tool that reads them as numbers keeps them exact.
    h.finish() >> 11
}

/// One host cell of a soak, with the configuration arguments that reproduce it.
struct SoakHost {
    cell: Cell,
    args: ConfigArgs,
    cfg: Config,
}

impl SoakHost {
    fn name(&self) -> String {
        let (s, p, u, e) = self.cell;
        format!(
            "host {s}/{p}/{u}{}",
            e.map(|e| format!("/{e}")).unwrap_or_default()
        )
    }
}

/// The host cells a soak covers: the larger run of every `crash --host all` cell whose
/// configuration is accepted and whose run records (the others are refused there too).
fn soak_hosts(cfg: &ConfigArgs) -> Vec<SoakHost> {
    host_cells()
        .into_par_iter()
        .filter_map(|cell| {
            let (strategy, protocol, update, external) = cell;
            let base = world::host_run::host_crash_config_for(strategy, protocol, Some(update));
            let mut args = cfg.clone();
            args.update = Some(update.to_string());
            if external.is_some() {
                args.sets.extend(
                    world::host_run::HOST_CRASH_EMULATED
                        .iter()
                        .map(|s| s.to_string()),
                );
            }
            args.sets.extend(
                world::host_run::HOST_CRASH_LARGER
                    .iter()
                    .map(|s| s.to_string()),
            );
            let c = load(
                &args,
                Some(base),
                &[
                    format!("protocol.name=\"{protocol}\""),
                    format!("host.strategy=\"{strategy}\""),
                ],
            )
            .ok()?;
            world::host_run::record_host(&c).ok()?;
            Some(SoakHost { cell, args, cfg: c })
        })
        .collect()
}

/// Batch `b` of a soak's host cell: a fresh recording with seed `seed + b`, `HOST_BATCH`
/// random crash states; the replay command of its first violation.
fn soak_host_batch(h: &SoakHost, seed: u64, b: u64) -> Result<(CheckReport, Option<String>), Fail> {
    let mut cfg = h.cfg.clone();
    cfg.seed = seed.wrapping_add(b);
    let mode = host::check::Mode::Random {
        schedules: HOST_BATCH,
    };
    let rep = match check_cell_with(&cfg, mode, false, false) {
        Ok(r) => r,
        Err(CellError::Refused(e)) | Err(CellError::Failed(e)) => {
            return Err(Fail(1, format!("{} seed {}: {e}", h.name(), cfg.seed)))
        }
    };
    let (strategy, protocol, update, _) = h.cell;
    let replay = rep.first.first().map(|v| {
        let mut cmd = format!(
            "commitlab crash --host {strategy} --protocol {protocol} --update {update} --seed {} --schedules {HOST_BATCH}",
            cfg.seed
        );
        for s in &h.args.sets {
            cmd.push_str(&format!(" --set {}", quote(s)));
        }
        if let Some(c) = &h.args.config {
            cmd.push_str(&format!(" --config {}", quote(&c.display().to_string())));
        }
        if let Some(p) = &h.args.preset {
            cmd.push_str(&format!(" --preset {}", quote(p)));
        }
        cmd.push_str(&format!(" --state {}", v.state.index));
        cmd
    });
    // The device-level report's shape: states and violations are what the soak adds up.
    Ok((
        CheckReport {
            states: rep.states,
            violations: rep.violations,
            ..Default::default()
        },
        replay,
    ))
}

#[derive(serde::Serialize, serde::Deserialize, Default)]
struct SoakState {
    seed: u64,
    protocols: Vec<String>,
    /// The host cells soaked (`--hosts`), by name; empty without.
    #[serde(default)]
    hosts: Vec<String>,
    batch: u64,
    /// Work units done: unit u is batch u / P of protocol u % P.
    next_unit: u64,
    schedules: u64,
    states: u64,
    nested_states: u64,
    violations: u64,
    wall_s: f64,
    /// Per protocol: [schedules, states, violations].
    per_protocol: std::collections::BTreeMap<String, [u64; 3]>,
    /// Replay commands of the first violations.
    failures: Vec<String>,
}

pub fn cmd_soak(a: &SoakArgs) -> Result<(), Fail> {
    let protocols: Vec<String> = if a.protocols.is_empty() {
        ssd::protocol::names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        a.protocols.clone()
    };
    if a.draw_seed && a.cfg.seed.is_some() {
        return Err(Fail(
            2,
            "--draw-seed and --seed exclude each other: the drawn seed replaces --seed".into(),
        ));
    }
    let mut cfg_args = a.cfg.clone();
    if a.draw_seed {
        cfg_args.seed = Some(draw_seed());
    }
    let mut cfgs = Vec::new();
    let args = CrashArgs {
        cfg: cfg_args.clone(),
        protocol: None,
        all: false,
        exhaustive: false,
        schedules: None,
        state: None,
        max_in_flight: 10,
        double: true,
        timing: None,
        shape: None,
        variants: false,
        min_states: None,
        host: None,
        run_on: false,
    };
    note_replaced_base(&a.cfg, &protocols[0])?;
    for p in &protocols {
        cfgs.push(crash_config(&args, p)?);
    }
    let seed = cfgs[0].seed;
    let hosts = if a.hosts {
        soak_hosts(&cfg_args)
    } else {
        Vec::new()
    };
    let host_names: Vec<String> = hosts.iter().map(SoakHost::name).collect();
    // The seed first, with the command that repeats this soak: a failure is replayed with
    // the command printed beside it, the whole soak with this one.
    let mut again = format!("commitlab soak --seed {seed}");
    if !a.protocols.is_empty() {
        again.push_str(&format!(" --protocols {}", quote(&protocols.join(","))));
    }
    if a.hosts {
        again.push_str(" --hosts");
    }
    again.push_str(&format!(" --schedules {}", a.schedules));
    if let Some(m) = a.minutes {
        again.push_str(&format!(" --minutes {m}"));
    }
    if let Some(c) = &a.cfg.config {
        again.push_str(&format!(" --config {}", quote(&c.display().to_string())));
    }
    if let Some(p) = &a.cfg.preset {
        again.push_str(&format!(" --preset {}", quote(p)));
    }
    for s in &a.cfg.sets {
        again.push_str(&format!(" --set {}", quote(s)));
    }
    say(&format!(
        "soak seed {seed}{}: {} protocols, {} host cells; repeat with: {again} --state-file NEW",
        if a.draw_seed { " (drawn)" } else { "" },
        protocols.len(),
        hosts.len()
    ))?;
    let mut st = match std::fs::read_to_string(&a.state_file) {
        Ok(text) => {
            let st: SoakState = serde_json::from_str(&text).map_err(|e| {
                Fail(
                    2,
                    format!("{}: not a soak state file: {e}", a.state_file.display()),
                )
            })?;
            if st.seed != seed
                || st.protocols != protocols
                || st.hosts != host_names
                || st.batch != BATCH
            {
                return Err(Fail(2, format!(
                    "{}: the soak there used seed {}, protocols {} and {} host cells; resume with the same --seed, --protocols and --hosts, or use another --state-file",
                    a.state_file.display(), st.seed, st.protocols.join(","), st.hosts.len()
                )));
            }
            say(&format!(
                "resuming from {}: {} schedules, {} states done",
                a.state_file.display(),
                st.schedules,
                st.states
            ))?;
            st
        }
        Err(_) => SoakState {
            seed,
            protocols: protocols.clone(),
            hosts: host_names.clone(),
            batch: BATCH,
            ..Default::default()
        },
    };
    let threads = rayon::current_num_threads() as u64;
    let wall = std::time::Instant::now();
    let start_states = st.states;
    let start_wall = st.wall_s;
    let np = protocols.len() as u64;
    // Unit u is batch u / n of item u % n: the protocols, then the host cells.
    let n = np + hosts.len() as u64;
    while st.schedules < a.schedules {
        if a.minutes
            .is_some_and(|m| wall.elapsed().as_secs_f64() > m * 60.0)
        {
            break;
        }
        let units: Vec<u64> = (st.next_unit..st.next_unit + threads * 2).collect();
        let results: Vec<Result<(CheckReport, Option<String>), Fail>> = units
            .par_iter()
            .map(|&u| {
                let b = u / n;
                if u % n >= np {
                    return soak_host_batch(&hosts[(u % n - np) as usize], seed, b);
                }
                let pi = (u % n) as usize;
                let t = Timing::draw(seed, b);
                let mut c = cfgs[pi].clone();
                t.apply(&mut c);
                let rec = check::record(&c).map_err(record_err(&protocols[pi], &t))?;
                let mut o = Options::new(Mode::Random { schedules: BATCH }, seed);
                o.first_schedule = b * BATCH;
                o.double = true;
                let rep = check::check_with(&rec, &o, &mut |_| false).map_err(|e| Fail(2, e))?;
                let replay = rep.first.first().map(|v| {
                    format!(
                        "{} --schedules {} --timing {} --state {}",
                        replay_prefix(&args, &protocols[pi], seed),
                        (b + 1) * BATCH,
                        quote(&t.spec()),
                        v.path(true)
                    )
                });
                Ok((rep, replay))
            })
            .collect();
        for (r, &u) in results.into_iter().zip(&units) {
            let (rep, replay) = r?;
            let (item, schedules) = match (u % n).checked_sub(np) {
                None => (protocols[(u % n) as usize].clone(), BATCH),
                Some(h) => (host_names[h as usize].clone(), HOST_BATCH),
            };
            let e = st.per_protocol.entry(item).or_default();
            e[0] += schedules;
            e[1] += rep.states;
            e[2] += rep.violations;
            st.schedules += schedules;
            st.states += rep.states;
            st.nested_states += rep.nested_states;
            st.violations += rep.violations;
            if let Some(r) = replay {
                if st.failures.len() < 50 {
                    say(&format!("violation: {r}"))?;
                    st.failures.push(r);
                }
            }
        }
        st.next_unit += units.len() as u64;
        st.wall_s = start_wall + wall.elapsed().as_secs_f64();
        let tmp = a.state_file.with_extension("tmp");
        let text = serde_json::to_string_pretty(&st).map_err(|e| Fail(2, e.to_string()))?;
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &a.state_file))
            .map_err(|e| Fail(2, format!("{}: {e}", a.state_file.display())))?;
        let rate = (st.states - start_states) as f64 / wall.elapsed().as_secs_f64().max(1e-9);
        say(&format!(
            "soak: {} schedules, {} crash states ({} inside recovery), {rate:.0} states/s on {threads} threads, violations: {}",
            st.schedules, st.states, st.nested_states, st.violations
        ))?;
    }
    if st.violations > 0 {
        return Err(Fail(
            1,
            format!(
                "{} crash states violate (soak seed {seed}; replay commands above and in {})",
                st.violations,
                a.state_file.display()
            ),
        ));
    }
    Ok(())
}

/// One strategy × protocol × update cell of `crash --host all`.
struct HostCell {
    strategy: &'static str,
    protocol: &'static str,
    update: &'static str,
    /// The PCM strategies' external store, when the cell sets one.
    external: Option<&'static str>,
    /// Refused at validation (unsupported pair), with the reason.
    refused: Option<String>,
    exhaustive: u64,
    random: u64,
    violations: u64,
    /// The replay command of the first violation.
    replay: Option<String>,
    /// The run itself failed (not a crash violation).
    failed: Option<String>,
    wall_s: f64,
}

enum CellError {
    Refused(String),
    Failed(String),
}

/// Records the host run `cfg` describes and crash-checks it.
#[cfg(test)]
fn check_cell(
    cfg: &Config,
    mode: host::check::Mode,
) -> Result<host::check::CheckReport, CellError> {
    check_cell_with(cfg, mode, false, false)
}

/// As `check_cell`; with `double`, crashes inside recovery too; with `run_on`, recover, run
/// on and crash again instead (`host::check::check_run_on`).
fn check_cell_with(
    cfg: &Config,
    mode: host::check::Mode,
    double: bool,
    run_on: bool,
) -> Result<host::check::CheckReport, CellError> {
    if run_on {
        if let Some((key, reason)) = host::check::run_on_refusal(&cfg.host) {
            return Err(CellError::Refused(format!("{key}: {reason}")));
        }
    }
    let rec = match world::host_run::record_host(cfg) {
        Ok(r) => r,
        Err(world::WorldError::Config(e)) => return Err(CellError::Refused(e)),
        Err(e) => {
            return Err(CellError::Failed(format!(
                "recording the host run failed: {e}"
            )))
        }
    };
    if run_on {
        return host::check::check_run_on(&rec, mode, cfg.seed, None).map_err(CellError::Failed);
    }
    world::host_run::check_host_with(&rec, mode, cfg.seed, None, double)
        .map_err(|e| CellError::Failed(e.to_string()))
}

/// One cell of the matrix (`world::host_run::CrashCell`).
type Cell = world::host_run::CrashCell;

/// The cells of `crash --host all` (`world::host_run::crash_cells`).
fn host_cells() -> Vec<Cell> {
    world::host_run::crash_cells()
}

fn host_cell(a: &CrashArgs, cell: Cell, random: u64) -> HostCell {
    let (strategy, protocol, update, external) = cell;
    let t0 = std::time::Instant::now();
    let mut out = HostCell {
        strategy,
        protocol,
        update,
        external,
        refused: None,
        exhaustive: 0,
        random: 0,
        violations: 0,
        replay: None,
        failed: None,
        wall_s: 0.0,
    };
    let base = world::host_run::host_crash_config_for(strategy, protocol, Some(update));
    let mut args = a.cfg.clone();
    args.update = Some(update.to_string());
    if external.is_some() {
        args.sets.extend(
            world::host_run::HOST_CRASH_EMULATED
                .iter()
                .map(|s| s.to_string()),
        );
    }
    let mut phases: Vec<(Vec<String>, host::check::Mode)> = vec![(
        Vec::new(),
        host::check::Mode::Exhaustive {
            max_in_flight: a.max_in_flight,
        },
    )];
    if random > 0 {
        phases.push((
            world::host_run::HOST_CRASH_LARGER
                .iter()
                .map(|s| s.to_string())
                .collect(),
            host::check::Mode::Random { schedules: random },
        ));
    }
    for (sets, mode) in phases {
        let mut args = args.clone();
        args.sets.extend(sets);
        let cfg = match load(
            &args,
            Some(base.clone()),
            &[
                format!("protocol.name=\"{protocol}\""),
                format!("host.strategy=\"{strategy}\""),
            ],
        ) {
            Ok(c) => c,
            Err(Fail(_, e)) => {
                out.refused = Some(e);
                break;
            }
        };
        // The random phase also crashes inside recovery (one crash in the first recovery,
        // sometimes one in the second): cheap, and the exhaustive phase stays single.
        let double = matches!(mode, host::check::Mode::Random { .. }) && !a.run_on;
        let rep = match check_cell_with(&cfg, mode, double, a.run_on) {
            Ok(r) => r,
            Err(CellError::Refused(e)) => {
                out.refused = Some(e);
                break;
            }
            Err(CellError::Failed(e)) => {
                out.failed = Some(e);
                break;
            }
        };
        match mode {
            host::check::Mode::Exhaustive { .. } => out.exhaustive += rep.states,
            host::check::Mode::Random { .. } => out.random += rep.states,
        }
        out.violations += rep.violations;
        if let (None, Some(v)) = (&out.replay, rep.first.first()) {
            let mut cmd = format!(
                "commitlab crash --host {strategy} --protocol {protocol} --update {update} --seed {}",
                cfg.seed
            );
            match mode {
                host::check::Mode::Exhaustive { .. } => cmd.push_str(" --exhaustive"),
                host::check::Mode::Random { schedules } if a.run_on => {
                    cmd.push_str(&format!(" --schedules {schedules}"))
                }
                host::check::Mode::Random { schedules } => {
                    cmd.push_str(&format!(" --schedules {schedules} --double"))
                }
            }
            if a.run_on {
                cmd.push_str(" --run-on");
            }
            for s in &args.sets {
                cmd.push_str(&format!(" --set {}", quote(s)));
            }
            if let Some(c) = &args.config {
                cmd.push_str(&format!(" --config {}", quote(&c.display().to_string())));
            }
            if let Some(p) = &args.preset {
                cmd.push_str(&format!(" --preset {}", quote(p)));
            }
            cmd.push_str(&format!(" --state {}", v.state.index));
            out.replay = Some(cmd);
        }
    }
    out.wall_s = t0.elapsed().as_secs_f64();
    out
}

/// The progress line of a finished `crash --host all` cell ("[k/n] strategy / protocol /
/// update: states, violations"), or none with `--quiet`.
fn matrix_progress(quiet: bool, k: usize, n: usize, c: Cell, r: &HostCell) -> Option<String> {
    if quiet {
        return None;
    }
    Some(format!(
        "[{k}/{n}] {} / {} / {}{}: {}",
        c.0,
        c.1,
        c.2,
        c.3.map(|e| format!(" / external {e}")).unwrap_or_default(),
        match (&r.refused, &r.failed) {
            (Some(_), _) => "refused".to_string(),
            (_, Some(_)) => "FAILED".to_string(),
            _ => format!(
                "{} + {} states, {} violations ({:.1} s)",
                r.exhaustive, r.random, r.violations, r.wall_s
            ),
        }
    ))
}

#[cfg(test)]
mod matrix_tests {
    use super::*;

    /// `crash --host all -q` writes no "[k/N]" lines (it wrote one per cell whatever `-q`
    /// said).
    #[test]
    fn the_host_matrix_is_quiet_with_quiet() {
        let r = HostCell {
            strategy: "wal",
            protocol: "none",
            update: "out-of-place",
            external: None,
            refused: None,
            exhaustive: 10,
            random: 5,
            violations: 0,
            replay: None,
            failed: None,
            wall_s: 0.1,
        };
        let c: Cell = ("wal", "none", "out-of-place", None);
        let line = matrix_progress(false, 1, 3, c, &r).unwrap();
        assert!(
            line.starts_with("[1/3] wal / none / out-of-place: 10 + 5 states"),
            "{line}"
        );
        assert_eq!(matrix_progress(true, 1, 3, c, &r), None);
    }
}

/// `crash --host all`: every supported strategy × protocol (× update strategy for `wal`)
/// crash-checked in parallel, exhaustively on the tiny host run and with `--schedules N`
/// random states (default 1,000) on a larger one (`HOST_CRASH_LARGER`); unsupported pairs are
/// listed as refused with the reason. Exit 1 on any violation or failed run.
pub fn cmd_host_matrix(a: &CrashArgs, quiet: bool) -> Result<(), Fail> {
    if a.state.is_some() {
        return Err(Fail(
            2,
            "--state replays one cell: give --host STRATEGY --protocol P instead of --host all"
                .into(),
        ));
    }
    let random = a.schedules.unwrap_or(1000);
    let cells = host_cells();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let n = cells.len();
    let results: Vec<HostCell> = cells
        .par_iter()
        .map(|&c| {
            let r = host_cell(a, c, random);
            let k = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if let Some(line) = matrix_progress(quiet, k, n, c, &r) {
                eprintln!("{line}");
            }
            r
        })
        .collect();
    let mut t = report::Table::new(vec![
        "strategy",
        "protocol",
        "update",
        "exhaustive",
        "random",
        "violations",
        "wall s",
    ]);
    let (mut checked, mut refused, mut states, mut bad) = (0, 0, 0u64, 0u64);
    // Refused cells, grouped by strategy and update: the protocols and the first reason.
    let mut refusals: Vec<(&str, &str, Vec<&str>, String)> = Vec::new();
    for r in &results {
        if let Some(why) = &r.refused {
            refused += 1;
            match refusals
                .iter_mut()
                .find(|(s, u, _, _)| *s == r.strategy && *u == r.update)
            {
                Some(g) => g.2.push(r.protocol),
                None => refusals.push((r.strategy, r.update, vec![r.protocol], why.clone())),
            }
            continue;
        }
        checked += 1;
        states += r.exhaustive + r.random;
        if r.failed.is_some() || r.violations > 0 {
            bad += 1;
        }
        t.row(vec![
            r.strategy.to_string(),
            r.protocol.to_string(),
            match r.external {
                Some(e) => format!("{} (external {e})", r.update),
                None => r.update.to_string(),
            },
            r.exhaustive.to_string(),
            r.random.to_string(),
            match &r.failed {
                Some(e) => format!("FAILED: {e}"),
                None => r.violations.to_string(),
            },
            format!("{:.1}", r.wall_s),
        ]);
    }
    say(t.render().trim_end())?;
    for (s, u, ps, why) in &refusals {
        say(&format!(
            "refused: {s} / {u} over {} (e.g. {})",
            ps.join(", "),
            why.trim_start_matches("config: ")
        ))?;
    }
    for r in &results {
        if let Some(c) = &r.replay {
            say(&format!(
                "first violation of {} / {} / {}: replay: {c}",
                r.strategy, r.protocol, r.update
            ))?;
        }
    }
    say(&format!(
        "host pairs checked: {checked}, refused: {refused}, crash states: {states}, pairs failing: {bad}"
    ))?;
    if bad > 0 {
        return Err(Fail(
            1,
            format!("{bad} host strategy × protocol pairs failed the crash check"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod host_matrix_tests {
    use super::*;

    /// The matrix's cells cover every registered strategy (aliases once) and every protocol,
    /// and wal with every update strategy.
    #[test]
    fn the_host_matrix_covers_every_strategy_protocol_and_update() {
        let cells = host_cells();
        for s in host::strategy::names() {
            if s != "flagcommit-ex" {
                for p in ssd::protocol::names() {
                    assert!(cells.contains(&(s, p, "out-of-place", None)), "{s} {p}");
                }
            }
        }
        for &u in host::update::NAMES {
            assert!(cells.contains(&("wal", "none", u, None)), "{u}");
        }
        for s in ["pcmlogging", "pcmlogging-page", "wal-pcm", "scmlogging"] {
            assert!(
                cells.contains(&(s, "none", "out-of-place", Some("emulated"))),
                "{s} over the emulated SSD"
            );
        }
    }

    /// The PCM strategies leave the flash device unused: any protocol but `none` is refused
    /// naming `protocol.name`, so the matrix does not repeat identical cells.
    #[test]
    fn pcm_strategies_refuse_device_protocols() {
        for s in ["pcmlogging", "pcmlogging-page", "wal-pcm", "scmlogging"] {
            let cfg = world::host_run::host_crash_config_for(s, "cfc", None);
            match check_cell(&cfg, host::check::Mode::Random { schedules: 1 }) {
                Err(CellError::Refused(e)) => assert!(e.contains("protocol.name"), "{s}: {e}"),
                _ => panic!("{s} over cfc was not refused"),
            }
        }
    }

    /// Planted bug: a wal run that acks commits before the log force is durable. A matrix
    /// cell runs through `check_cell`, which must report its violations.
    #[test]
    fn a_matrix_cell_reports_a_planted_early_commit_ack() {
        let mut cfg = world::host_run::host_crash_config_for("wal", "none", None);
        let mode = host::check::Mode::Exhaustive { max_in_flight: 10 };
        let clean = check_cell(&cfg, mode).ok().unwrap();
        assert!(clean.states > 1000 && clean.violations == 0);
        cfg.host.fault_early_commit_ack = true;
        let planted = check_cell(&cfg, mode).ok().unwrap();
        assert!(planted.violations > 0, "{} states", planted.states);
    }
}
