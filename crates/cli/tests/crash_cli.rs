//! `commitlab crash` input handling: bad configuration exits 2 as `run`
//! does, random schedules stream, a huge geometry is refused before it is built, a txn trace
//! may reuse a TxId after its COMMIT, and a closed stdout ends the run quietly. Also the
//! replay commands of timing-perturbed and double-crash failures.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_commitlab"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

fn assert_exit(o: &Output, code: i32, want: &str) {
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(code), "stdout: {out}\nstderr: {err}");
    assert!(err.contains(want), "expected '{want}' in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_configuration_exits_2_like_run() {
    // Each of these exited 1 ("a check failed") before: they are bad input.
    assert_exit(
        &run(&[
            "crash",
            "--protocol",
            "lighttx",
            "--schedules",
            "5",
            "--set",
            "workload.kind=\"seqwriter\"",
            "--set",
            "workload.seqwriter.sync_pages=0",
        ]),
        2,
        "sync_pages must be in",
    );
    assert_exit(
        &run(&[
            "crash",
            "--protocol",
            "none",
            "--schedules",
            "5",
            "--set",
            "nand.blocks_per_plane=3",
        ]),
        2,
        "ftl.gc_threshold",
    );
    assert_exit(
        &run(&["crash", "--protocol", "none", "--timing", "warp=9"]),
        2,
        "unknown key 'warp'",
    );
    assert_exit(
        &run(&["crash", "--protocol", "none", "--shape", "zigzag"]),
        2,
        "unknown workload shape",
    );
    assert_exit(
        &run(&["crash", "--protocol", "none", "--state", "1.x"]),
        2,
        "expected a state number",
    );
}

#[test]
fn a_huge_geometry_is_refused_before_it_is_built() {
    // It used to be refused after 33 s and 1.6 GB, by a root record that did not fit.
    let t = Instant::now();
    let o = run(&[
        "crash",
        "--protocol",
        "lighttx",
        "--schedules",
        "10",
        "--set",
        "nand.channels=65536",
    ]);
    assert_exit(&o, 2, "pages");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

#[test]
fn the_largest_schedule_count_is_refused_with_the_soak_named() {
    // --schedules 2^64-1 once allocated the whole plan up front (4.7 GB and growing), then
    // ran until killed. A run is capped at 2^32 schedules; longer campaigns are `soak`'s,
    // which keeps its progress in a state file.
    let o = bin()
        .args([
            "crash",
            "--protocol",
            "none",
            "--schedules",
            "18446744073709551615",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("at most 4294967296"), "{err}");
    assert!(err.contains("commitlab soak"), "{err}");
}

#[test]
fn a_txn_trace_may_reuse_a_txid_after_its_commit() {
    let dir = std::env::temp_dir().join(format!("commitlab-crash-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("reuse.trace");
    // docs/TRACES.md: a txid names a transaction from its BEGIN to its COMMIT/ABORT; the
    // same number may begin again afterwards.
    std::fs::write(
        &trace,
        "0 7 BEGIN - - -\n0 7 W 1 2 -\n0 7 COMMIT - - -\n0 7 BEGIN - - -\n0 7 W 1 1 -\n0 7 W 3 1 -\n0 7 COMMIT - - -\n0 8 BEGIN - - -\n0 8 W 5 1 -\n0 8 ABORT - - -\n0 8 BEGIN - - -\n0 8 W 5 1 -\n0 8 COMMIT - - -\n",
    )
    .unwrap();
    let path = format!("workload.trace.path=\"{}\"", trace.display());
    for p in ["lighttx", "tc", "cfc"] {
        let o = run(&[
            "crash",
            "--protocol",
            p,
            "--set",
            "workload.kind=\"trace\"",
            "--set",
            &path,
            "--set",
            "workload.trace.format=\"txn\"",
            "--timing",
            "configured",
        ]);
        assert!(
            o.status.success(),
            "{p}: {}\n{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        assert!(text(&o.stdout).contains("violations: 0"));
    }
}

#[test]
fn a_closed_stdout_ends_quietly() {
    // `crash … | head -1`: the reader goes away after one line.
    let mut child = bin()
        .args(["crash", "--protocol", "none", "--schedules", "200"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = text(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.is_empty(), "{err}");
    assert_eq!(o.status.code(), Some(141));
}

#[test]
fn random_failures_replay_with_their_timing_profile() {
    // Doubles on lighttx once found a crash inside recovery's GC that lost acked
    // data; whichever protocol fails, the printed replay must reproduce the violation alone.
    // On a clean protocol this only checks the counts.
    let o = run(&[
        "crash",
        "--protocol",
        "lighttx",
        "--schedules",
        "600",
        "--double",
        "--seed",
        "1",
    ]);
    let out = text(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with("crash states checked:"))
        .unwrap_or_else(|| panic!("{out}\n{}", text(&o.stderr)));
    let n: u64 = line
        .split(&[':', ','][..])
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(n > 600, "doubles add states inside recovery: {line}");
    if let Some(r) = out.lines().find_map(|l| l.strip_prefix("replay: ")) {
        assert!(r.contains("--timing "), "{r}");
        let args: Vec<&str> = r.split_whitespace().skip(1).collect();
        let args: Vec<String> = args
            .iter()
            .map(|a| a.trim_matches('\'').to_string())
            .collect();
        let o2 = bin().args(&args).output().unwrap();
        assert_eq!(o2.status.code(), Some(1), "{}", text(&o2.stdout));
        assert!(text(&o2.stdout).contains("inside recovery"));
    }
}

#[test]
fn all_protocols_and_soak_run() {
    let o = run(&[
        "crash",
        "--all",
        "--timing",
        "configured",
        "--set",
        "workload.txn.transactions=10",
        "--set",
        "workload.synthetic.requests=40",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", text(&o.stderr));
    for p in [
        "none", "tc", "scc", "bpcc", "cfc", "afc", "lighttx", "aw", "mhl-d", "mhl-m",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{p} "))),
            "{p}: {out}"
        );
    }
    let dir = std::env::temp_dir().join(format!("commitlab-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("soak.json");
    let _ = std::fs::remove_file(&state);
    let soak = |n: &str| {
        run(&[
            "soak",
            "--protocols",
            "none,cfc",
            "--schedules",
            n,
            "--state-file",
            state.to_str().unwrap(),
            "--set",
            "workload.txn.transactions=10",
            "--set",
            "workload.synthetic.requests=40",
        ])
    };
    let o = soak("1024");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("states/s"), "{}", text(&o.stdout));
    let first: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let done = first["schedules"].as_u64().unwrap();
    assert!(done >= 1024, "{first}");
    // A second soak with a higher target resumes from the state file.
    let o = soak(&(done + 1).to_string());
    assert!(
        text(&o.stdout).contains("resuming from"),
        "{}",
        text(&o.stdout)
    );
    let second: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert!(second["schedules"].as_u64().unwrap() > done);
    assert!(second["next_unit"].as_u64().unwrap() > first["next_unit"].as_u64().unwrap());
}

#[test]
fn min_states_tops_every_protocol_up_with_random_batches() {
    // CI's floor (>= 100,000 crash states per protocol): after the exhaustive
    // check, random batches of 512 schedules continue until the protocol's total reaches
    // --min-states; the --all table shows each protocol's total.
    let o = run(&[
        "crash",
        "--all",
        "--timing",
        "configured",
        "--min-states",
        "1500",
        "--set",
        "workload.txn.transactions=10",
        "--set",
        "workload.synthetic.requests=40",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", text(&o.stderr));
    let header = out.lines().find(|l| l.starts_with("protocol")).unwrap();
    assert!(header.contains("total"), "{header}");
    for p in [
        "none", "tc", "scc", "bpcc", "cfc", "afc", "lighttx", "aw", "mhl-d", "mhl-m",
    ] {
        let row = out
            .lines()
            .find(|l| l.starts_with(&format!("{p} ")))
            .unwrap_or_else(|| panic!("{p}: {out}"));
        let cols: Vec<u64> = row
            .split_whitespace()
            .skip(1)
            .filter_map(|c| c.parse().ok())
            .collect();
        // exhaustive, random, inside recovery, total, violations
        let (exh, random, total) = (cols[0], cols[1], cols[3]);
        assert_eq!(exh + random, total, "{row}");
        assert!(total >= 1500, "{row}");
        assert!(
            random > 0,
            "the tiny workload has fewer exhaustive states: {row}"
        );
        // Batches stop once the floor is reached: at most one batch's worth too many
        // (a double-crash batch may add its states inside recovery too).
        assert!(exh >= 1500 || total < 1500 + 512 * 4, "{row}");
    }
    let fewest = out
        .lines()
        .find_map(|l| l.strip_prefix("fewest crash states of one protocol: "))
        .unwrap_or_else(|| panic!("{out}"));
    let n: u64 = fewest.split_whitespace().next().unwrap().parse().unwrap();
    assert!(n >= 1500, "{fewest}");
}

/// `soak --draw-seed` draws a fresh seed per run and prints it first with the command that
/// repeats the soak; `--hosts` adds the host cells (each batch a fresh host recording);
/// `--draw-seed` with `--seed` is refused.
#[test]
fn soak_draws_a_fresh_seed_and_covers_host_cells() {
    let dir = std::env::temp_dir().join(format!("commitlab-soak-draw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let soak = |state: &str| {
        run(&[
            "soak",
            "--draw-seed",
            "--hosts",
            "--protocols",
            "none",
            "--schedules",
            "1",
            "--state-file",
            dir.join(state).to_str().unwrap(),
        ])
    };
    let seed_of = |o: &Output| {
        let out = text(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{out}\n{}", text(&o.stderr));
        let first = out.lines().next().unwrap_or_default().to_string();
        assert!(
            first.starts_with("soak seed ") && first.contains("(drawn)"),
            "{first}"
        );
        assert!(
            first.contains("repeat with: commitlab soak --seed "),
            "{first}"
        );
        first
            .trim_start_matches("soak seed ")
            .split(' ')
            .next()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    let (a, b) = (soak("a.json"), soak("b.json"));
    assert_ne!(seed_of(&a), seed_of(&b), "two runs drew the same seed");
    // The state file counts host cells beside the protocol.
    let st = std::fs::read_to_string(dir.join("a.json")).unwrap();
    assert!(st.contains("\"host wal/none/out-of-place\""), "{st}");
    assert_exit(
        &run(&["soak", "--draw-seed", "--seed", "3", "--protocols", "none"]),
        2,
        "--draw-seed and --seed",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
