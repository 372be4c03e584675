//! `commitlab crash` flags a new user meets (issue 10, findings 5 and 8): `--exhaustive`
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
