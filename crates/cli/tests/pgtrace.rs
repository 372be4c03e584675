//! The PostgreSQL TPC-C page-access trace shipped in examples/traces: it replays through
//! every registered host recovery strategy (`run --host S --trace F`) and, converted to
//! device transactions, through the device protocols (`--trace-format pages`); bad input is
//! refused with exit 2 and a message naming the file and line or the key.

use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_commitlab"))
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

fn shipped() -> String {
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/traces/pg-tpcc.trace.gz");
    assert!(p.exists(), "{} is missing", p.display());
    p.to_str().unwrap().to_string()
}

fn committed(stdout: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("committed"))
        .unwrap_or_else(|| panic!("no 'committed' line in:\n{stdout}"));
    line.split_whitespace()
        .find_map(|w| w.trim_end_matches(',').parse().ok())
        .unwrap()
}

#[test]
fn the_shipped_trace_replays_through_every_host_strategy() {
    let trace = shipped();
    for s in host::strategy::names() {
        // What each strategy needs of the device, whatever its workload: device-tx an
        // atomic protocol; Flag Commit's extended schemes a record area in each flash page
        // (and, with it, a device sized by hand: one data copy per version slot).
        let extra: &[&str] = match s {
            "device-tx" => &["--protocol", "lighttx"],
            "flagcommit-ex" | "cfc-ex" | "afc-ex" => &[
                "--set",
                "nand.append_bytes=8",
                "--set",
                "nand.blocks_per_plane=1600",
            ],
            _ => &[],
        };
        let mut args = vec![
            "run",
            "--host",
            s,
            "--trace",
            &trace,
            "--set",
            "host.transactions=150",
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        let out = text(&o.stdout);
        assert!(
            o.status.success(),
            "{s}: exit {:?}\n{out}\n{}",
            o.status.code(),
            text(&o.stderr)
        );
        assert!(out.contains("page-access trace"), "{s}: {out}");
        // Every transaction of the trace ends: the recorded aborts roll back, the rest commit.
        assert!(committed(&out) >= 140, "{s}: {out}");
    }
}

#[test]
fn host_replay_is_deterministic() {
    let trace = shipped();
    let args = [
        "run",
        "--host",
        "wal",
        "--trace",
        &trace,
        "--set",
        "host.transactions=300",
    ];
    let a = run(&args);
    let b = run(&args);
    assert!(a.status.success(), "{}", text(&a.stderr));
    let strip = |o: &Output| {
        text(&o.stdout)
            .lines()
            .filter(|l| !l.contains("wall"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn the_shipped_trace_replays_as_device_transactions() {
    let trace = shipped();
    for p in ssd::REGISTRY.iter().map(|p| p.name) {
        let mut args = vec![
            "run",
            "--trace",
            &trace,
            "--trace-format",
            "pages",
            "--protocol",
            p,
            "--set",
            "workload.prefill=0",
            "--set",
            "nand.blocks_per_plane=192",
        ];
        if p.starts_with("mhl") {
            // one transaction per log head
            args.extend_from_slice(&["--set", "workload.trace.concurrency=8"]);
        }
        let o = run(&args);
        if p == "none" {
            // The trace's aborted transactions cannot be honoured without atomicity.
            assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
            assert!(
                text(&o.stderr).contains("cannot abort"),
                "{}",
                text(&o.stderr)
            );
            continue;
        }
        assert!(
            o.status.success(),
            "{p}: {}\n{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        assert!(text(&o.stdout).contains("page-access trace"), "{p}");
    }
}

#[test]
fn trace_stats_compares_with_the_generator() {
    let o = run(&["trace-stats", "--trace", &shipped()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for want in [
        "reads : writes",
        "accesses to hottest 1 % of pages",
        "new-order: share of txns",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
}

#[test]
fn bad_trace_input_exits_2_naming_what_is_wrong() {
    let dir = std::env::temp_dir().join(format!("commitlab-pgtrace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.trace");
    std::fs::write(
        &bad,
        "commitlab-pagetrace 1\nrel 0 t heap 4\ntxn 1 payment\nr 1 0 9\ncommit 1\n",
    )
    .unwrap();
    let bad = bad.to_str().unwrap();
    let trace = shipped();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", "--host", "wal", "--trace", bad],
            "bad.trace:4: block 9 is beyond relation t",
        ),
        (
            vec!["run", "--host", "wal", "--trace", "/nonexistent/x.trace"],
            "/nonexistent/x.trace",
        ),
        (
            vec![
                "run",
                "--host",
                "wal",
                "--trace",
                &trace,
                "--workload",
                "tpcc",
            ],
            "host.workload is \"tpcc\"",
        ),
        (
            vec![
                "run",
                "--host",
                "wal",
                "--trace",
                &trace,
                "--trace-format",
                "txn",
            ],
            "--trace-format txn",
        ),
        (
            vec!["run", "--host", "wal", "--trace-format", "pages"],
            "no --trace",
        ),
        (
            vec![
                "run",
                "--host",
                "wal",
                "--trace",
                &trace,
                "--set",
                "host.transactions=100000000",
            ],
            "host.transactions",
        ),
        (
            vec!["run", "--host", "wal", "--workload", "trace"],
            "host.trace.path",
        ),
        (
            vec!["run", "--trace", bad, "--trace-format", "pages"],
            "bad.trace:4:",
        ),
        (vec!["trace-stats", "--trace", bad], "bad.trace:4:"),
    ];
    for (args, want) in cases {
        let o = run(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: want '{want}' in: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A device the user sized too small for the trace's database: the refusal names the trace as
/// what sizes the database (a generator names its `max_txns`; a trace has none).
#[test]
fn a_device_too_small_for_the_trace_names_the_trace() {
    let trace = shipped();
    let o = run(&[
        "crash",
        "--host",
        "wal",
        "--protocol",
        "none",
        "--trace",
        &trace,
        "--schedules",
        "1",
        "--set",
        "nand.blocks_per_plane=16",
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}\n{}", text(&o.stdout));
    assert!(!err.contains("max_txns"), "{err}");
    assert!(err.contains("trace"), "{err}");
}
