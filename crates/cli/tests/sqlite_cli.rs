//! `commitlab sqlite`: every flag honoured or refused with exit 2, determinism, and the
//! crash command's verdicts.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_commitlab"))
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn refused(args: &[&str], want: &str) {
    let o = run(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
}

const SMALL: [&str; 4] = ["--transactions", "20", "--rows", "20"];

#[test]
fn bad_input_is_refused_with_exit_2_naming_the_problem() {
    let mut a = vec!["sqlite", "run", "--mode", "journal"];
    a.extend(SMALL);
    refused(&a, "sqlite.mode");
    let mut a = vec!["sqlite", "run", "--mode", "batch", "--protocol", "none"];
    a.extend(SMALL);
    refused(&a, "sqlite.mode");
    let mut a = vec!["sqlite", "run", "--protocol", "nosuch"];
    a.extend(SMALL);
    refused(&a, "nosuch");
    let mut a = vec!["sqlite", "run", "--page-size", "8192"];
    a.extend(SMALL);
    refused(&a, "sqlite.page_size");
    let mut a = vec!["sqlite", "run", "--workload", "tpcz"];
    a.extend(SMALL);
    refused(&a, "--workload");
    refused(
        &[
            "sqlite",
            "run",
            "--rows",
            "2000",
            "--db-pages",
            "10",
            "--journal-pages",
            "100",
            "--wal-pages",
            "10",
        ],
        "larger than the device",
    );
    refused(&["sqlite", "compare", "--protocols", "none"], "--protocols");
    refused(
        &["sqlite", "run", "--set", "workload.kind=\"txn\""],
        "workload.* does not apply",
    );
    refused(
        &["sqlite", "crash", "--protocol", "tc", "--update", "ipa"],
        "--update",
    );
    refused(
        &[
            "sqlite",
            "crash",
            "--protocol",
            "tc",
            "--mode",
            "batch",
            "--plant",
            "nope",
        ],
        "--plant",
    );
}

#[test]
fn same_seed_same_json() {
    let mut a = vec![
        "sqlite",
        "run",
        "--protocol",
        "cfc",
        "--mode",
        "batch",
        "--json",
        "-",
    ];
    a.extend(SMALL);
    let x = run(&a);
    let y = run(&a);
    assert!(x.status.success(), "{}", text(&x));
    assert_eq!(x.stdout, y.stdout);
    assert!(String::from_utf8_lossy(&x.stdout).contains("\"batch_commits\": 20"));
}

#[test]
fn crash_reports_clean_runs_and_catches_a_planted_bug() {
    let o = run(&[
        "sqlite",
        "crash",
        "--protocol",
        "none",
        "--mode",
        "wal",
        "--transfers",
        "3",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(" 0 violations"), "{}", text(&o));
    let o = run(&[
        "sqlite",
        "crash",
        "--protocol",
        "scc",
        "--mode",
        "batch",
        "--transfers",
        "3",
        "--plant",
        "ack-commit-early",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("seed=1 replay: commitlab sqlite crash"),
        "{}",
        text(&o)
    );
}

fn speedtest1_source() -> Option<String> {
    let p = std::env::var("COMMITLAB_SPEEDTEST1_SOURCE").unwrap_or_else(|_| {
        format!(
            "{}/../../target/speedtest1/speedtest1.c",
            env!("CARGO_MANIFEST_DIR")
        )
    });
    if std::path::Path::new(&p).is_file() {
        Some(p)
    } else {
        let msg = format!(
            "skipped: speedtest1.c not found at {p} (run scripts/fetch-speedtest1.sh, or set COMMITLAB_SPEEDTEST1_SOURCE)"
        );
        println!("{msg}");
        eprintln!("{msg}");
        None
    }
}

#[test]
fn speedtest1_runs_and_refuses_by_name() {
    let Some(src) = speedtest1_source() else {
        return;
    };
    fn with<'a>(src: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut a = vec!["sqlite", "speedtest1", "--source", src];
        a.extend_from_slice(extra);
        a
    }
    let st = |extra: &[&'static str]| with(&src, extra);
    refused(&st(&["--mode", "delete", "--threads", "2"]), "--threads");
    refused(&st(&["--mode", "delete", "--journal", "wal"]), "--mode");
    // commitlab's options after speedtest1's would be speedtest1's: refused, not ignored.
    refused(
        &st(&["--mode", "delete", "--size", "2", "--protocol", "bpcc"]),
        "commitlab's own options go before speedtest1's",
    );
    refused(
        &st(&["--protocol", "none", "--mode", "batch"]),
        "sqlite.mode",
    );
    refused(
        &[
            "sqlite",
            "speedtest1",
            "--source",
            "/nonexistent/speedtest1.c",
        ],
        "fetch-speedtest1",
    );
    let o = run(&st(&[
        "--protocol",
        "bpcc",
        "--mode",
        "batch",
        "--size",
        "2",
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("TOTAL"), "{out}");
    assert!(out.contains("integrity_check: ok"), "{out}");
    assert!(out.contains("sqlite batch over bpcc (speedtest1"), "{out}");
}

#[test]
fn compare_runs_journal_modes_over_other_protocols_and_speedtest1() {
    let o = run(&[
        "sqlite",
        "compare",
        "--modes",
        "delete,wal",
        "--journal-protocols",
        "none,bpcc",
        "--protocols",
        "lighttx",
        "--transactions",
        "20",
        "--rows",
        "20",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    for row in [
        "delete    none",
        "delete    bpcc",
        "wal       none",
        "wal       bpcc",
        "batch     lighttx",
    ] {
        assert!(out.contains(row), "{row}: {out}");
    }
    refused(
        &["sqlite", "compare", "--journal-protocols", "nosuch"],
        "--journal-protocols",
    );
    refused(
        &["sqlite", "compare", "--size", "3"],
        "--workload speedtest1",
    );
    let Some(src) = speedtest1_source() else {
        return;
    };
    let o = run(&[
        "sqlite",
        "compare",
        "--workload",
        "speedtest1",
        "--size",
        "2",
        "--source",
        &src,
        "--modes",
        "delete",
        "--protocols",
        "bpcc",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("delete    none"), "{out}");
    assert!(out.contains("batch     bpcc"), "{out}");
}
