//! `commitlab crash` flags a new user meets: `--exhaustive`
//! means something (with `--schedules N` it runs both modes), a preset or config file that
//! replaces crash's small configuration says so before anything runs, and progress bars
//! draw on a terminal only and never with `--quiet`.

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

#[test]
fn exhaustive_is_the_default_and_with_schedules_runs_both_modes() {
    // One timing profile keeps it fast.
    let plain = run(&["crash", "--protocol", "none", "--timing", "configured"]);
    let explicit = run(&[
        "crash",
        "--protocol",
        "none",
        "--timing",
        "configured",
        "--exhaustive",
    ]);
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain.stderr));
    assert_eq!(text(&plain.stdout), text(&explicit.stdout));
    assert!(!text(&plain.stdout).contains("random:"));

    let random = run(&[
        "crash",
        "--protocol",
        "none",
        "--timing",
        "configured",
        "--schedules",
        "5",
    ]);
    assert!(!text(&random.stdout).contains("timing configured"));
    let both = run(&[
        "crash",
        "--protocol",
        "none",
        "--timing",
        "configured",
        "--exhaustive",
        "--schedules",
        "5",
    ]);
    assert_eq!(both.status.code(), Some(0), "{}", text(&both.stderr));
    let out = text(&both.stdout);
    assert!(out.contains("timing configured:"), "{out}");
    assert!(out.contains("random: 5 schedules"), "{out}");
    // The total is the exhaustive states plus the random ones.
    let total = |o: &str| -> u64 {
        let l = o
            .lines()
            .find(|l| l.starts_with("crash states checked:"))
            .unwrap();
        l.split([':', ',']).nth(1).unwrap().trim().parse().unwrap()
    };
    assert_eq!(
        total(&out),
        total(&text(&plain.stdout)) + total(&text(&random.stdout))
    );

    let o = run(&[
        "crash",
        "--protocol",
        "none",
        "--exhaustive",
        "--schedules",
        "5",
        "--state",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("not both"), "{}", text(&o.stderr));
}

#[test]
fn a_preset_or_config_that_replaces_the_small_configuration_says_so() {
    // The note comes before anything runs (here the run is refused right after it).
    let o = run(&[
        "crash",
        "--protocol",
        "tc",
        "--preset",
        "txflash",
        "--schedules",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(
        e.contains("note: --preset txflash replaces the crash checker's small configuration"),
        "{e}"
    );
    assert!(e.contains("use --set instead"), "{e}");

    let d = std::env::temp_dir().join(format!("commitlab-crashflags-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("small.toml");
    std::fs::write(
        &f,
        "[nand]\nchannels = 1\nplanes_per_die = 2\nblocks_per_plane = 12\npages_per_block = 8\npage_bytes = 512\n\
         [workload]\nprefill = 0.0\n[workload.synthetic]\nrequests = 40\n",
    )
    .unwrap();
    let o = run(&[
        "crash",
        "--protocol",
        "none",
        "--config",
        f.to_str().unwrap(),
        "--schedules",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("note: --config"),
        "{}",
        text(&o.stderr)
    );
    // Without a preset or file: no note.
    let o = run(&["crash", "--protocol", "none", "--schedules", "3"]);
    assert!(!text(&o.stderr).contains("note:"), "{}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(d);
}

/// Progress bars: never when stderr is not a terminal (these tests capture it), and on a
/// terminal (`script` gives the command one) unless `--quiet`.
#[test]
fn progress_bars_draw_on_a_terminal_only_and_not_with_quiet() {
    let bin = env!("CARGO_BIN_EXE_commitlab");
    let piped = run(&["crash", "--protocol", "none", "--schedules", "600"]);
    assert!(!text(&piped.stderr).contains("recordings"));
    let piped = run(&["run"]);
    assert!(!text(&piped.stderr).contains("requests ["));
    let tty = |cmd: &str| -> Option<String> {
        let o = Command::new("script")
            .args(["-qec", cmd, "/dev/null"])
            .output()
            .ok()?;
        Some(text(&o.stdout))
    };
    let Some(shown) = tty(&format!("{bin} crash --protocol none --schedules 1200")) else {
        eprintln!("skipped the terminal half: no `script` (util-linux) here");
        return;
    };
    assert!(shown.contains("recordings"), "crash on a terminal: {shown}");
    let quiet = tty(&format!(
        "{bin} crash --quiet --protocol none --schedules 1200"
    ))
    .unwrap();
    assert!(!quiet.contains("recordings"), "{quiet}");
    let shown = tty(&format!(
        "{bin} run --set workload.synthetic.requests=200000"
    ))
    .unwrap();
    assert!(shown.contains("requests ["), "run on a terminal: {shown}");
    let quiet = tty(&format!(
        "{bin} run -q --set workload.synthetic.requests=200000"
    ))
    .unwrap();
    assert!(!quiet.contains("requests ["), "{quiet}");
    // compare and sweep: points done of total.
    let small = "--set workload.txn.transactions=100 --set nand.blocks_per_plane=32";
    let shown = tty(&format!("{bin} compare --protocols none,tc {small}")).unwrap();
    assert!(
        shown.contains("points, ETA"),
        "compare on a terminal: {shown}"
    );
    let quiet = tty(&format!("{bin} compare -q --protocols none,tc {small}")).unwrap();
    assert!(!quiet.contains("points, ETA"), "{quiet}");
    let piped = run(&[
        "compare",
        "--protocols",
        "none",
        "--set",
        "workload.txn.transactions=100",
        "--set",
        "nand.blocks_per_plane=32",
    ]);
    assert!(!text(&piped.stderr).contains("points, ETA"));
}

/// Exit codes and bounds: `crash` refuses the bad input `run` refuses with exit 2 (a txn
/// trace with TRIM on lighttx or ABORT on none; a workload that runs out of space while it
/// is recorded, before any crash, naming the keys to change), and `--schedules` is bounded
/// instead of running until killed. Each exited 1 (or ran forever) before.
#[test]
fn crash_refuses_bad_input_with_exit_2() {
    let d = std::env::temp_dir().join(format!("commitlab-crash-exit-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let trace = |name: &str, body: &str| {
        let p = d.join(name);
        std::fs::write(&p, body).unwrap();
        p.to_str().unwrap().to_string()
    };
    let trim = trace(
        "trim.txn",
        "0 1 BEGIN - - -\n0 1 W 3 1 -\n0 1 COMMIT - - -\n0 - T 3 1 -\n",
    );
    let abort = trace(
        "abort.txn",
        "0 1 BEGIN - - -\n0 1 W 3 1 -\n0 1 ABORT - - -\n",
    );
    for (protocol, path) in [("lighttx", &trim), ("aw", &trim), ("none", &abort)] {
        for mode in [&["--timing", "configured"][..], &["--schedules", "3"][..]] {
            let mut args = vec![
                "crash",
                "--protocol",
                protocol,
                "--set",
                "workload.kind=\"trace\"",
                "--set",
                "workload.trace.format=\"txn\"",
                "--set",
                "workload.prefill=0",
            ];
            let set = format!("workload.trace.path=\"{path}\"");
            args.extend(["--set", &set]);
            args.extend(mode);
            let o = run(&args);
            assert_eq!(
                o.status.code(),
                Some(2),
                "{protocol} {mode:?}: {}",
                text(&o.stderr)
            );
            assert!(!text(&o.stderr).contains("panicked"));
        }
    }
    // Out of space before any crash: every timing profile is tried and reported, and the
    // message names the keys. (Four transactions of up to 80 pages at once on a 16-block
    // plane; 20–40 pages once ran out too, before AW kept its free-block reserve.)
    let o = run(&[
        "crash",
        "--protocol",
        "aw",
        "--set",
        "workload.txn.size_min=40",
        "--set",
        "workload.txn.size_max=80",
        "--set",
        "workload.txn.transactions=40",
        "--set",
        "workload.txn.concurrency=4",
        "--set",
        "nand.blocks_per_plane=16",
    ]);
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("workload.prefill"), "{e}");
    assert!(e.contains("timing slow-host: recording failed"), "{e}");
    assert!(e.contains("timing jitter: recording failed"), "{e}");

    for flag in ["--schedules", "--min-states"] {
        let o = run(&["crash", "--protocol", "none", flag, "18446744073709551615"]);
        assert_eq!(o.status.code(), Some(2), "{flag}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("soak"), "{}", text(&o.stderr));
    }
    let o = run(&[
        "crash",
        "--host",
        "wal",
        "--schedules",
        "18446744073709551615",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

/// `run --host` checks its `--record` path before the run, like every output path.
#[test]
fn host_run_refuses_an_unwritable_record_path_first() {
    let o = run(&[
        "run",
        "--host",
        "wal",
        "--record",
        "no-such-dir/x.txn",
        "--set",
        "host.transactions=5",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("no-such-dir"),
        "{}",
        text(&o.stderr)
    );
}

/// A database whose insert regions (`host.tpcc.max_txns`) outgrow any device is refused from
/// the schema's page counts, before the per-page loaded map is built: `max_txns = 2^32`
/// took 15.7 s and 1.5 GB before its refusal. On the default device the host run sizes the
/// device to the database, finds none it can build, and names the keys that shrink it.
#[test]
fn an_oversized_tpcc_database_is_refused_at_once() {
    let o = run(&[
        "run",
        "--host",
        "wal",
        "--set",
        "host.workload=\"tpcc\"",
        "--set",
        "host.tpcc.warehouses=1",
        "--set",
        "host.tpcc.max_txns=4294967296",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains(
            "shrink the database (host.tpcc.warehouses, host.tpcc.items, host.tpcc.max_txns"
        ),
        "{}",
        text(&o.stderr)
    );
}
