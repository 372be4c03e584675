//! Every setting honoured or refused, and suggestions for near misses: a key the chosen run
//! never reads is refused with exit 2 naming what would read it (`world::usage`), in `run`,
//! `run --host`, `crash --host`, `compare` and `sweep`; host strategies compared side by
//! side with `workload.kind = "host"`; protocol names in any case; misspellings suggested.

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

fn refused(o: &Output, want: &[&str]) {
    let e = text(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(2),
        "stdout {}\nstderr {e}",
        text(&o.stdout)
    );
    for w in want {
        assert!(e.contains(w), "expected '{w}' in: {e}");
    }
    assert!(!e.contains("config: config:"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn host_settings_outside_a_host_run_are_refused_naming_the_host_run() {
    refused(
        &run(&["run", "--set", "host.strategy=\"wal\""]),
        &["host.strategy", "--host S"],
    );
    refused(
        &run(&[
            "compare",
            "--set",
            "host.strategy=\"wal\"",
            "--protocols",
            "tc",
        ]),
        &["host.strategy", "workload.kind = \"host\""],
    );
    refused(
        &run(&[
            "sweep",
            "--set",
            "host.buffer_frames=8,16",
            "--protocols",
            "tc",
        ]),
        &["host.buffer_frames", "--host S"],
    );
}

#[test]
fn device_workload_settings_in_a_host_run_are_refused() {
    refused(
        &run(&[
            "run",
            "--host",
            "wal",
            "--set",
            "workload.txn.concurrency=2",
        ]),
        &["workload.txn.concurrency", "host.workload"],
    );
    refused(
        &run(&["run", "--set", "workload.txn.concurrency=2"]),
        &["workload.kind = \"txn\""],
    );
    refused(
        &run(&["crash", "--host", "wal", "--set", "host.tpcc.warehouses=2"]),
        &["host.tpcc.warehouses", "host.workload = \"tpcc\""],
    );
    refused(
        &run(&[
            "run",
            "--host",
            "pcmlogging",
            "--set",
            "nand.channels=2",
            "--set",
            "host.transactions=10",
        ]),
        &["nand.channels", "host.pcm.external = \"emulated\""],
    );
}

#[test]
fn compare_runs_host_strategies_side_by_side() {
    let o = run(&[
        "compare",
        "--set",
        "workload.kind=\"host\"",
        "--set",
        "host.transactions=30",
        "--protocols",
        "none,lighttx",
        "--csv",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = text(&o.stdout);
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.contains("lighttx") && csv.contains(",ok,"), "{csv}");
}

#[test]
fn protocol_names_in_any_case_and_near_misses() {
    let o = run(&[
        "compare",
        "--protocols",
        "TC, LightTx",
        "--set",
        "workload.txn.transactions=20",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let t = text(&o.stdout);
    assert!(t.contains("lighttx") && t.contains("tc"), "{t}");
    refused(
        &run(&["compare", "--protocols", "lightx"]),
        &["did you mean lighttx?"],
    );
    refused(
        &run(&["run", "--protocol", "lightx"]),
        &["did you mean lighttx?"],
    );
    refused(
        &run(&["crash", "--protocol", "bpc", "--schedules", "1"]),
        &["did you mean bpcc?"],
    );
    let o = run(&["crash", "--protocol", "BPCC", "--schedules", "20"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

#[test]
fn misspellings_are_suggested() {
    refused(
        &run(&["config", "--explain", "nand.chanels"]),
        &["did you mean nand.channels"],
    );
    let o = run(&["config", "--explain", "nand.chanels"]);
    assert!(
        !text(&o.stderr).contains("host.ipa.n"),
        "{}",
        text(&o.stderr)
    );
    // A recovery or update strategy one letter off is suggested, and the error says
    // "config:" once.
    for args in [
        &["run", "--host", "walx"][..],
        &["crash", "--host", "walx", "--protocol", "none"][..],
    ] {
        let o = run(args);
        refused(&o, &["walx", "did you mean wal?"]);
        assert!(
            !text(&o.stderr).contains("config: config:"),
            "{}",
            text(&o.stderr)
        );
    }
    refused(
        &run(&["run", "--host", "wal", "--update", "ipx"]),
        &["did you mean ipa?"],
    );
    let d = std::env::temp_dir().join(format!("commitlab-usage-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let msr = d.join("hm_0.csv");
    std::fs::write(
        &msr,
        "128166372003061629,hm,0,Write,7014609920,24576,41286\n",
    )
    .unwrap();
    refused(
        &run(&["run", "--trace", msr.to_str().unwrap()]),
        &["hm_0.csv:1", "--trace-format msr"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `crash --host` sizes the device to the database as `run --host` does, unless the
/// geometry was set (then the refusal names the keys).
#[test]
fn host_crash_sizes_the_device_to_the_database() {
    let o = run(&[
        "crash",
        "--host",
        "wal",
        "--protocol",
        "none",
        "--set",
        "host.workload=\"tpcb\"",
        "--set",
        "host.tpcb.accounts_per_branch=20000",
        "--set",
        "host.transactions=10",
        "--schedules",
        "20",
    ]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}\n{}", text(&o.stderr));
    assert!(
        out.lines()
            .next()
            .is_some_and(|l| l.starts_with("device: ") && l.contains("free space for GC")),
        "{out}"
    );
    refused(
        &run(&[
            "crash",
            "--host",
            "wal",
            "--protocol",
            "none",
            "--set",
            "host.workload=\"tpcb\"",
            "--set",
            "host.tpcb.accounts_per_branch=20000",
            "--set",
            "nand.channels=1",
            "--schedules",
            "20",
        ]),
        &["--set nand.channels", "host.tpcb.branches"],
    );
}

#[test]
fn compare_help_shows_how_to_compare_host_strategies() {
    let o = run(&["compare", "--help"]);
    let t = text(&o.stdout);
    assert!(
        t.contains("workload.kind='\"host\"'") && t.contains("host.strategy"),
        "{t}"
    );
}

/// The workload line speaks the configuration's names, not Rust's (`Uniform`,
/// `NoPageConflict`), and a sweep's header names every swept key with all its values.
#[test]
fn workload_line_and_sweep_header_describe_every_point() {
    let o = run(&[
        "run",
        "--set",
        "workload.kind=\"txn\"",
        "--set",
        "workload.txn.transactions=20",
        "--set",
        "workload.txn.isolation=\"no-page-conflict\"",
    ]);
    let t = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        t.contains("no-page-conflict isolation") && t.contains("uniform addresses"),
        "{t}"
    );
    for debug in ["Uniform", "NoPageConflict", "Exponential"] {
        assert!(!t.contains(debug), "{debug} in {t}");
    }
    let o = run(&[
        "sweep",
        "--set",
        "workload.txn.transactions=20,30",
        "--set",
        "workload.txn.size_max=4,8",
        "--protocols",
        "tc",
    ]);
    let t = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        t.contains("swept: workload.txn.transactions = 20, 30; workload.txn.size_max = 4, 8"),
        "{t}"
    );
    // Every point's workload is described, each with the swept values it runs under.
    assert!(t.contains("workloads (4 across the points):"), "{t}");
    for (n, max) in [(20, 4), (20, 8), (30, 4), (30, 8)] {
        let line = format!(
            "  workload.txn.transactions = {n}; workload.txn.size_max = {max}: txn: {n} transactions of 1-{max} pages"
        );
        assert!(t.contains(&line), "{line} not in {t}");
    }
    // A swept key that does not change the workload is not named on its lines.
    let o = run(&[
        "sweep",
        "--set",
        "workload.txn.transactions=20,30",
        "--set",
        "ftl.gc_policy=greedy,cost-benefit",
        "--protocols",
        "tc",
    ]);
    let t = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        t.contains("  workload.txn.transactions = 30: txn: 30 transactions"),
        "{t}"
    );
    assert!(!t.contains("ftl.gc_policy = greedy:"), "{t}");
    // An adapted point's workload differs by its adaptation only: not a varying workload.
    let o = run(&[
        "compare",
        "--protocols",
        "none,tc",
        "--set",
        "workload.txn.transactions=20",
    ]);
    let t = text(&o.stdout);
    assert!(t.starts_with("workload: txn:"), "{t}");
}

/// A request that fails after parsing (beyond the device, not folded) is named by the
/// trace file's line, comments and blank lines counted, not by its request number.
#[test]
fn trace_errors_name_the_file_line() {
    let d = std::env::temp_dir().join(format!("commitlab-usage-line-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("far.trace");
    std::fs::write(&f, "# a comment\n\n0 0 0 8 0\n1000 0 999999999 8 0\n").unwrap();
    refused(
        &run(&[
            "run",
            "--trace",
            f.to_str().unwrap(),
            "--set",
            "workload.trace.fold=false",
        ]),
        &["far.trace:4: request addresses page"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A transactional (`txn`) trace whose commands parse but do not fit together (a BEGIN of a
/// transaction already open) is named by the file's line, comments counted, not by the
/// command's number.
#[test]
fn txn_trace_errors_name_the_file_line() {
    let d = std::env::temp_dir().join(format!("commitlab-usage-txn-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("twice.txn");
    std::fs::write(
        &f,
        "# time_ns txid op lpn count flags\n\n0 1 BEGIN - - -\n0 1 W 0 1 -\n0 1 BEGIN - - -\n",
    )
    .unwrap();
    let o = run(&[
        "run",
        "--trace",
        f.to_str().unwrap(),
        "--trace-format",
        "txn",
    ]);
    refused(&o, &["twice.txn: line 5: BEGIN of"]);
    assert!(
        !text(&o.stderr).contains("command 3"),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}
