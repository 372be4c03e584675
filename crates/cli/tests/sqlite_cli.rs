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
