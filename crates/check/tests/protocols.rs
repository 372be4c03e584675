//! The crash checker on every registered protocol, one table: zero violations exhaustively on
//! the small configuration, exhaustively on other configurations (no summary pages, mapping
//! checkpoints, NOP 2, many aborts), on random schedules over larger devices, and across a
//! crash, recovery, more traffic and a second crash.
//!
//! Each protocol gets the same tests (`per_protocol!` below); what a protocol runs for each
//! of them is the default unless one of the tables (`exhaustive_small`, `exhaustive_other`,
//! `random_larger`, `double_crash!`) gives it a row of its own, with the reason. A protocol
//! added to the registry fails `every_registered_protocol_has_its_tests` until it is listed in
//! `per_protocol!`, and then runs the defaults. Tests that only make sense for one protocol
//! (scripted schedules, regressions at a state) stay in that protocol's file.

mod scripted;

mod common;

use commitlab_check::*;
use common::*;
use workload::txn::Isolation;

/// One checked run: the configuration, how many random schedules (exhaustive when `None`),
/// the checker's seed, and the fewest states it must reach.
struct Run {
    cfg: world::Config,
    schedules: Option<u64>,
    check_seed: u64,
    min_states: u64,
    /// Whether at least two device operations must be in flight at some crash point.
    overlap: bool,
}

impl Run {
    fn exhaustive(cfg: world::Config, min_states: u64) -> Run {
        let check_seed = cfg.seed;
        Run {
            cfg,
            schedules: None,
            check_seed,
            min_states,
            overlap: false,
        }
    }

    fn random(cfg: world::Config, schedules: u64) -> Run {
        let check_seed = cfg.seed;
        Run {
            cfg,
            schedules: Some(schedules),
            check_seed,
            min_states: schedules,
            overlap: false,
        }
    }

    fn check_seed(mut self, seed: u64) -> Run {
        self.check_seed = seed;
        self
    }

    fn overlapping(mut self) -> Run {
        self.overlap = true;
        self
    }

    fn go(&self, protocol: &str) {
        let rec = record(&self.cfg).unwrap();
        let mode = match self.schedules {
            None => Mode::Exhaustive { max_in_flight: 8 },
            Some(schedules) => Mode::Random { schedules },
        };
        let rep = check(&rec, mode, self.check_seed, None).unwrap();
        assert_clean(&rep, &rec);
        match self.schedules {
            None => assert!(rep.states > self.min_states, "{protocol}: {rep:?}"),
            Some(s) => assert_eq!(rep.states, s, "{protocol}: {rep:?}"),
        }
        if self.overlap {
            assert!(
                rep.max_in_flight_seen >= 2,
                "{protocol}: operations overlap on both planes: {rep:?}"
            );
        }
    }
}

fn with(protocol: &str, f: impl FnOnce(&mut world::Config)) -> world::Config {
    let mut c = small_config(protocol);
    f(&mut c);
    c
}

/// The isolation level the small configuration must run a protocol under, where a test
/// once pinned it (the most permissive one the protocol supports).
fn expected_isolation(protocol: &str) -> Option<Isolation> {
    match protocol {
        "tc" | "mhl-m" => Some(Isolation::Serializable),
        "aw" => Some(Isolation::Strict),
        _ => None,
    }
}

/// Exhaustive on the small configuration. Default: more than 2,000 states, with
/// operations overlapping.
fn exhaustive_small(protocol: &str) -> Vec<Run> {
    let bf = |on: bool| with(protocol, |c| c.protocol.block_flags = on);
    match protocol {
        // With and without the block-based flag technique (§3.4; on by default).
        "cfc" | "afc" => vec![
            Run::exhaustive(bf(false), 2_000).overlapping(),
            Run::exhaustive(bf(true), 2_000),
        ],
        // 1851 states since log heads move between units (fewer GC copies than the 2,000+
        // before). Also the regression for the first recording on this configuration
        // (seed 1), which ran out of space: a log head's unit had no free block (its pages
        // now spill to the striped host stream), and GC had given up on a unit before zone
        // sliding released blocks in it (zone sliding now asks GC to look again).
        "mhl-d" => vec![Run::exhaustive(small_config(protocol), 1_500).overlapping()],
        _ => vec![Run::exhaustive(small_config(protocol), 2_000).overlapping()],
    }
}

/// Exhaustive on other configurations. Default: no summary pages, mapping checkpoints
/// every 40 writes in one-block windows.
fn exhaustive_other(protocol: &str) -> Vec<Run> {
    match protocol {
        // TC, SCC and BPCC refuse mapping checkpoints (they recover by scanning the whole
        // device, TxFlash §4): no summaries, half the transactions aborted, and a host
        // interface that takes time so that concurrent transactions' writes interleave.
        "tc" | "scc" | "bpcc" => vec![Run::exhaustive(
            with(protocol, |c| {
                c.ftl.summary_pages = false;
                c.workload.txn.abort_ratio = 0.5;
                c.ftl.interface_mbps = 400;
                c.seed = 3;
            }),
            1_000,
        )],
        // NOP 2 (flags programmed into pages already written, §3.3) and mapping
        // checkpoints, with and without block flags; CFC keeps summary pages with NOP 2
        // (without them: cfc.rs's dangling-link regression).
        "cfc" | "afc" => {
            let mut runs = Vec::new();
            for bf in [false, true] {
                runs.push(Run::exhaustive(
                    with(protocol, |c| {
                        c.protocol.block_flags = bf;
                        c.nand.nop = 2;
                        c.ftl.summary_pages = protocol != "afc";
                    }),
                    0,
                ));
                runs.push(Run::exhaustive(
                    with(protocol, |c| {
                        c.protocol.block_flags = bf;
                        c.ftl.checkpoint_interval = 40;
                        c.ftl.checkpoint_window_blocks = 1;
                    }),
                    0,
                ));
            }
            runs
        }
        _ => vec![Run::exhaustive(
            with(protocol, |c| {
                c.ftl.summary_pages = false;
                c.ftl.checkpoint_interval = 40;
                c.ftl.checkpoint_window_blocks = 1;
            }),
            0,
        )],
    }
}

/// Random schedules on larger devices. Default: `common::larger` (4 planes of 24 blocks,
/// 400 transactions, half aborted) with seed 5, 1,000 schedules.
fn random_larger(protocol: &str) -> Vec<Run> {
    match protocol {
        // No transactions: more and deeper synthetic requests instead.
        "none" => vec![Run::random(
            with(protocol, |c| {
                c.nand.planes_per_die = 4;
                c.nand.blocks_per_plane = 24;
                c.workload.synthetic.requests = 2_000;
                c.workload.synthetic.queue_depth = 8;
            }),
            300,
        )
        .check_seed(5)],
        // Commit records live outside the exported capacity; a hot half keeps them
        // short-lived. A slower interface interleaves the six concurrent transactions.
        "tc" => vec![Run::random(
            with(protocol, |c| {
                c.nand.planes_per_die = 4;
                c.nand.blocks_per_plane = 24;
                c.ftl.interface_mbps = 200;
                c.workload.txn.transactions = 400;
                c.workload.txn.concurrency = 6;
                c.workload.txn.span = 0.5;
                c.seed = 8;
            }),
            600,
        )],
        "scc" | "bpcc" => vec![Run::random(
            with(protocol, |c| {
                c.nand.planes_per_die = 4;
                c.nand.blocks_per_plane = 24;
                c.workload.txn.transactions = 400;
                c.workload.txn.abort_ratio = 0.5;
                c.workload.txn.concurrency = 6;
            }),
            600,
        )
        .check_seed(11)],
        // NOP 2, with and without block flags; AFC without summary pages too.
        "cfc" | "afc" => [false, true]
            .into_iter()
            .map(|bf| {
                Run::random(
                    larger(protocol, 2, |c| {
                        c.protocol.block_flags = bf;
                        c.nand.nop = 2;
                        c.ftl.summary_pages = protocol != "afc";
                    }),
                    300,
                )
            })
            .collect(),
        // A three-block window; eight planes, long checkpoint intervals, six transactions.
        "lighttx" => vec![
            Run::random(
                larger(protocol, 5, |c| c.ftl.checkpoint_window_blocks = 3),
                1_000,
            ),
            Run::random(
                larger(protocol, 6, |c| {
                    c.nand.planes_per_die = 8;
                    c.ftl.checkpoint_interval = 300;
                    c.workload.txn.concurrency = 6;
                }),
                1_000,
            ),
        ],
        // Long checkpoint intervals: the log chains grow long before a checkpoint ends them.
        "aw" => [5, 6]
            .into_iter()
            .map(|seed| {
                Run::random(
                    larger(protocol, seed, |c| c.ftl.checkpoint_interval = 300),
                    1_000,
                )
            })
            .collect(),
        "mhl-m" => [(5, 3), (6, 6)]
            .into_iter()
            .map(|(seed, conc)| {
                Run::random(
                    larger(protocol, seed, |c| c.workload.txn.concurrency = conc),
                    1_000,
                )
            })
            .collect(),
        "mhl-d" => vec![Run::random(
            larger(protocol, 5, |c| c.workload.txn.concurrency = 6),
            1_000,
        )],
        _ => vec![Run::random(larger(protocol, 5, |_| {}), 1_000)],
    }
}

fn run_all(protocol: &str, runs: Vec<Run>) {
    assert!(!runs.is_empty(), "{protocol}: no runs");
    for r in runs {
        assert_eq!(r.cfg.protocol.name, protocol);
        r.go(protocol);
    }
}

fn check_exhaustive_small(protocol: &str) {
    if let Some(level) = expected_isolation(protocol) {
        assert_eq!(small_config(protocol).workload.txn.isolation, level);
    }
    run_all(protocol, exhaustive_small(protocol));
}

fn double_config(protocol: &str, seed: u64, summaries: bool) -> world::Config {
    with(protocol, |c| {
        c.seed = seed;
        c.ftl.summary_pages = summaries;
        c.workload.txn.abort_ratio = 0.4;
        if protocol == "tc" {
            c.workload.txn.span = 0.5;
        }
    })
}

/// Crash, recover, keep running (commits overlapping later writes, aborts), crash again.
fn double_crash(protocol: &str, shared: bool) {
    let cfg = double_config(protocol, 1, true);
    let (states, bad) = scripted::double_crash(&cfg, 5, 12, 150, shared);
    assert!(states >= 1_800, "{protocol}: {states}");
    assert_eq!(bad, 0, "{bad} of {states} second-crash states violate");
}

/// The long version of the double-crash check (`cargo test -p commitlab-check --release
/// --test protocols -- --ignored`).
fn double_crash_long(protocol: &str, shared: bool) {
    for seed in 1..=8 {
        for summaries in [true, false] {
            let cfg = double_config(protocol, seed, summaries);
            let (states, bad) = scripted::double_crash(&cfg, seed, 40, 300, shared);
            eprintln!(
                "{protocol} seed {seed} summaries {summaries}: {states} states, {bad} violations"
            );
            assert_eq!(bad, 0, "{bad} of {states} second-crash states violate");
        }
    }
}

/// The protocols whose double crash runs through `scripted::double_crash` (crash, recover,
/// scripted random traffic, crash the second segment at random), and whether their second
/// segment's transactions share pages. The others' double crashes (crashes inside
/// recovery, and crash-recover-run-crash over generated workloads) are double.rs and
/// `commitlab crash --double`.
macro_rules! double_crash {
    ($($m:ident => ($name:literal, $shared:literal)),* $(,)?) => {
        $(
            mod $m {
                #[test]
                fn crash_recover_run_crash_again() {
                    super::double_crash($name, $shared);
                }

                #[test]
                #[ignore]
                fn crash_recover_run_crash_again_long() {
                    super::double_crash_long($name, $shared);
                }
            }
        )*

        /// The protocols `double_crash!` gives tests.
        const DOUBLE: &[&str] = &[$($name),*];
    };
}

double_crash! {
    // Concurrent transactions sharing pages: the commit records recovery keeps must still
    // prove every committed version after the second crash. The second segment writes the
    // lower half of the pages; so does the first (span 0.5), or live commit records
    // (outside the exported capacity) would fill this tiny device.
    tc_double => ("tc", true),
    // What recovery rebuilds (uncommitted intentions still to be erased, version
    // counters) must keep the second crash safe too.
    scc_double => ("scc", false),
    bpcc_double => ("bpcc", false),
}

macro_rules! per_protocol {
    ($($m:ident => $name:literal),* $(,)?) => {
        $(
            mod $m {
                #[test]
                fn exhaustive_on_the_small_device() {
                    super::check_exhaustive_small($name);
                }

                #[test]
                fn exhaustive_on_other_configurations() {
                    super::run_all($name, super::exhaustive_other($name));
                }

                #[test]
                fn random_schedules_on_larger_devices() {
                    super::run_all($name, super::random_larger($name));
                }
            }
        )*

        /// The protocols `per_protocol!` gives tests.
        const LISTED: &[&str] = &[$($name),*];
    };
}

per_protocol! {
    none => "none",
    tc => "tc",
    scc => "scc",
    bpcc => "bpcc",
    cfc => "cfc",
    afc => "afc",
    lighttx => "lighttx",
    aw => "aw",
    mhl_d => "mhl-d",
    mhl_m => "mhl-m",
}

#[test]
fn every_registered_protocol_has_its_tests() {
    let registered = ssd::protocol::names();
    let missing: Vec<_> = registered.iter().filter(|p| !LISTED.contains(p)).collect();
    assert!(
        missing.is_empty(),
        "add {missing:?} to per_protocol! in crates/check/tests/protocols.rs"
    );
    for p in LISTED {
        assert!(registered.contains(p), "{p} is not registered");
    }
    for p in DOUBLE {
        assert!(registered.contains(p), "{p} is not registered");
    }
}
