//! What a new user meets first: the main job, one output schema, bad input
//! refused before running with exit 2, help texts, output paths, sweeps, the configuration
//! reference.

use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_commitlab"))
        .args(args)
        .output()
        .unwrap()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("commitlab-ux-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}
fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Exit 2 with a sentence containing `want`, no Rust debug text, nothing run.
fn assert_input_error(o: &Output, want: &str) {
    assert_eq!(
        o.status.code(),
        Some(2),
        "stdout {}\nstderr {}",
        out(o),
        err(o)
    );
    let e = err(o);
    assert!(e.contains(want), "expected '{want}' in: {e}");
    for debug in ["TxId(", "Lpn(", "{ tx", "panicked"] {
        assert!(!e.contains(debug), "debug text '{debug}' in: {e}");
    }
}

/// Items 1, 2, 7: with no arguments, compare runs transactions with aborts on every
/// protocol; none and aw are adapted and say how; the table leads with committed/aborted,
/// tx/s, commit latency and WA.
#[test]
fn the_main_job_shows_transactions_for_every_protocol() {
    let d = tmpdir("main");
    let csv = d.join("c.csv");
    let json = d.join("c.json");
    let o = run(&[
        "compare",
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let t = out(&o);
    let head = t.lines().nth(1).unwrap();
    let cols = [
        "protocol",
        "status",
        "committed",
        "aborted",
        "tx/s",
        "commit ms",
        "WA",
    ];
    let pos: Vec<usize> = cols.iter().map(|c| head.find(c).unwrap()).collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{head}");
    let mut r = csv::Reader::from_path(&csv).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 10);
    for row in &rows {
        let p = &row[col("protocol")];
        let committed: u64 = row[col("committed")].parse().unwrap();
        assert!(committed > 0, "{p} committed nothing");
        let tps: f64 = row[col("throughput_per_s")].parse().unwrap();
        assert!(tps > 0.0, "{p}");
        let aborted: u64 = row[col("aborted")].parse().unwrap();
        match p {
            "none" => {
                assert_eq!(&row[col("status")], "adapted");
                assert_eq!(aborted, 0);
            }
            "aw" => {
                assert_eq!(&row[col("status")], "adapted");
                assert_eq!(&row[col("isolation")], "strict");
            }
            _ => {
                assert_eq!(&row[col("status")], "ok", "{p}: {}", &row[col("reason")]);
                assert!(aborted > 0, "{p} aborted nothing");
            }
        }
        let erases: u64 = row[col("nand_erases")].parse().unwrap();
        assert!(erases > 0, "{p}: GC must be active");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 10);
    assert_eq!(v[1]["config"]["workload"]["kind"], "txn");
    assert_eq!(v[1]["seed"], 1);
}

/// `--set workload.kind=txn` stopped at aw with no output; `--no-adapt` now
/// lists it as unsupported and the rest still run and are written.
#[test]
fn a_protocol_that_cannot_run_is_a_row_and_the_rest_are_written() {
    let d = tmpdir("unsup");
    let csv = d.join("c.csv");
    let o = run(&[
        "compare",
        "--no-adapt",
        "--protocols",
        "scc, aw ,lighttx",
        "--set",
        "workload.txn.transactions=200",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[2].starts_with("aw,unsupported,"), "{}", lines[2]);
    assert!(lines[2].contains("isolation"), "{}", lines[2]);
    assert!(lines[3].starts_with("lighttx,ok,"), "{}", lines[3]);
    assert!(out(&o).contains("aw unsupported:"), "{}", out(&o));
}

/// Bad input found only at run time exited 1 with Rust debug text after the
/// prefill. Each of the three examples is now refused up front with exit 2.
#[test]
fn input_the_protocol_cannot_honour_is_refused_before_running() {
    assert_input_error(
        &run(&[
            "run",
            "--protocol",
            "tc",
            "--set",
            "workload.synthetic.trim_ratio=0.1",
        ]),
        "protocol tc does not support TRIM",
    );
    assert_input_error(
        &run(&[
            "run",
            "--protocol",
            "mhl-d",
            "--set",
            "workload.kind=txn",
            "--set",
            "workload.txn.concurrency=64",
        ]),
        "protocol.log_heads = 8",
    );
    // `none` on a transactional trace with ABORT: found while replaying (the trace is not
    // read ahead), still exit 2 and in words.
    let d = tmpdir("abort");
    let t = d.join("a.txn");
    std::fs::write(&t, "0 1 BEGIN - - -\n0 1 W 5 1 -\n0 1 ABORT - - -\n").unwrap();
    let o = run(&[
        "run",
        "--protocol",
        "none",
        "--trace",
        t.to_str().unwrap(),
        "--trace-format",
        "txn",
    ]);
    assert_input_error(&o, "protocol none cannot abort");
    assert!(err(&o).contains("ABORT of tx 1"), "{}", err(&o));
    assert_input_error(
        &run(&[
            "run",
            "--protocol",
            "none",
            "--set",
            "workload.kind=txn",
            "--set",
            "workload.txn.abort_ratio=0.1",
        ]),
        "cannot abort",
    );
}

/// The error about transaction sizes misstated the rule (it said they "do not
/// fit"; the rule is half the pages addressed).
#[test]
fn the_no_page_conflict_rule_is_stated_as_it_is() {
    assert_input_error(
        &run(&[
            "run",
            "--set",
            "workload.kind=txn",
            "--set",
            "workload.txn.size_max=2000",
        ]),
        "at most half of the",
    );
}

/// Protocol names are all checked before anything runs, output paths before
/// the run, and `-` means standard output.
#[test]
fn names_and_paths_are_checked_first_and_dash_is_stdout() {
    let o = run(&["compare", "--protocols", "tc,scc,bogus"]);
    assert_input_error(&o, "unknown protocol 'bogus'");
    assert!(out(&o).is_empty(), "nothing may run: {}", out(&o));
    let o = run(&["compare", "--csv", "/nonexistent-dir/x.csv"]);
    assert_input_error(&o, "/nonexistent-dir/x.csv");
    assert!(out(&o).is_empty());
    let o = run(&[
        "compare",
        "--protocols",
        "scc",
        "--set",
        "workload.txn.transactions=100",
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v[0]["protocol"], "scc");
    assert!(!std::path::Path::new("-").exists());
    let d = tmpdir("runjson");
    let o = run(&[
        "run",
        "--set",
        "workload.synthetic.requests=500",
        "--json",
        d.to_str().unwrap(),
    ]);
    assert_input_error(&o, "is a directory");
}

/// Every flag has help text and `--protocol` lists the names.
#[test]
fn every_flag_has_help_text() {
    // Every subcommand `commitlab --help` lists (so a new one is covered), and the top level.
    let top = out(&run(&["--help"]));
    let commands: Vec<String> = top
        .split("Commands:")
        .nth(1)
        .unwrap_or("")
        .split("Options:")
        .next()
        .unwrap_or("")
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 11, "{commands:?}");
    for c in &commands {
        let line = top
            .lines()
            .find(|l| l.split_whitespace().next() == Some(c))
            .unwrap();
        assert!(
            line.split_whitespace().count() > 1,
            "{c} has no description"
        );
    }
    let mut cmds: Vec<&str> = commands.iter().map(String::as_str).collect();
    cmds.push("");
    for cmd in cmds {
        let args: Vec<&str> = [cmd, "--help"]
            .into_iter()
            .filter(|a| !a.is_empty())
            .collect();
        let o = run(&args);
        assert!(o.status.success(), "{cmd}");
        let text = out(&o);
        let options = text.split("Options:").nth(1).unwrap_or("");
        for line in options.lines() {
            let l = line.trim();
            if !l.starts_with('-') {
                continue;
            }
            // clap puts the help after two spaces on the flag's line, or on the next line;
            // a flag without help leaves only padding after it (found when `soak --minutes`
            // lost its doc comment and the older check, "contains two spaces", passed).
            let flag_only = l.split_once("  ").is_none_or(|(_, h)| h.trim().is_empty());
            if flag_only {
                let next = options
                    .lines()
                    .skip_while(|x| x != &line)
                    .nth(1)
                    .unwrap_or("");
                assert!(
                    !next.trim().is_empty() && !next.trim_start().starts_with('-'),
                    "{cmd}: no help for {l}"
                );
            }
        }
    }
    for cmd in ["run", "crash", "compare"] {
        let text = out(&run(&[cmd, "--help"]));
        for p in [
            "none", "tc", "scc", "bpcc", "cfc", "afc", "lighttx", "aw", "mhl-d", "mhl-m",
        ] {
            assert!(text.contains(p), "{cmd} --help does not name {p}");
        }
    }
    let text = out(&run(&["protocols"]));
    assert_eq!(text.lines().count(), 10);
}

/// `presets` printed `Slc` where `config` says `slc`.
#[test]
fn presets_print_config_spellings() {
    let o = run(&["presets"]);
    let t = out(&o);
    assert!(t.contains(", slc") && t.contains(", mlc"), "{t}");
    assert!(!t.contains("Slc") && !t.contains("Mlc"), "{t}");
}

/// Item 5 of "what to build": a grid × protocols, one tidy row per point with a column per
/// swept key; single-valued sets apply to every point.
#[test]
fn sweep_writes_one_row_per_point_with_a_column_per_key() {
    let d = tmpdir("sweep");
    let csv = d.join("s.csv");
    let o = run(&[
        "sweep",
        "--set",
        "ftl.gc_policy=greedy,cost-benefit",
        "--set",
        "workload.txn.abort_ratio=0, 0.1",
        "--set",
        "workload.txn.transactions=150",
        "--protocols",
        "scc,lighttx",
        "--jobs",
        "2",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let mut r = csv::Reader::from_path(&csv).unwrap();
    let h = r.headers().unwrap().clone();
    assert_eq!(&h[0], "ftl.gc_policy");
    assert_eq!(&h[1], "workload.txn.abort_ratio");
    assert_eq!(&h[2], "protocol");
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 8);
    assert_eq!(&rows[0][0], "greedy");
    assert_eq!(&rows[7][0], "cost-benefit");
    assert_eq!(&rows[7][1], "0.1");
    assert_eq!(&rows[7][2], "lighttx");
    let aborted = h.iter().position(|c| c == "aborted").unwrap();
    assert_eq!(&rows[0][aborted], "0");
    assert_eq!(&rows[1][aborted], "0");
    assert_ne!(&rows[2][aborted], "0");
    assert_input_error(
        &run(&["sweep", "--set", "ftl.gc_policy=greedy"]),
        "two or more values",
    );
    assert_input_error(
        &run(&[
            "sweep",
            "--set",
            "ftl.gc_threshold=0.05,0.95",
            "--protocols",
            "scc",
        ]),
        "ftl.gc_threshold",
    );
}

/// `compare`/`sweep` across host strategies and protocols. Each point runs
/// the host engine (before: every host point was "unsupported: runs through
/// world::host_run"); a pair the strategy refuses is a row with its reason.
#[test]
fn sweep_runs_host_strategies_side_by_side() {
    let d = tmpdir("sweep-host");
    let csv = d.join("h.csv");
    let o = run(&[
        "sweep",
        "--set",
        "workload.kind=\"host\"",
        "--set",
        "host.workload=\"tpcb\"",
        "--set",
        "host.transactions=200",
        "--set",
        "host.strategy=wal,device-tx",
        "--protocols",
        "none,cfc",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let mut r = csv::Reader::from_path(&csv).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|x| x == name).unwrap();
    let (st, committed) = (col("status"), col("committed"));
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    let cell = |strategy: &str, protocol: &str| {
        rows.iter()
            .find(|x| &x[0] == strategy && &x[1] == protocol)
            .unwrap_or_else(|| panic!("no row {strategy}/{protocol}"))
            .clone()
    };
    for (s, p) in [("wal", "none"), ("device-tx", "cfc")] {
        let row = cell(s, p);
        assert_eq!(&row[st], "ok", "{s}/{p}: {row:?}");
        assert_eq!(&row[committed], "200", "{s}/{p}: {row:?}");
    }
    for (s, p) in [("wal", "cfc"), ("device-tx", "none")] {
        assert_eq!(&cell(s, p)[st], "unsupported", "{s}/{p}");
    }
    let _ = std::fs::remove_dir_all(d);
}

/// Item 4 of "what to build": `config --explain KEY`.
#[test]
fn config_explains_keys() {
    let o = run(&["config", "--explain", "nand.cell"]);
    assert!(o.status.success());
    assert!(out(&o).contains("allowed: slc, mlc"), "{}", out(&o));
    assert_input_error(
        &run(&["config", "--explain", "nand.bogus"]),
        "unknown configuration key",
    );
    // What compare runs, printed; a preset replaces the device, not the workload.
    let o = run(&["config", "--main-job", "--preset", "txflash"]);
    assert!(o.status.success(), "{}", err(&o));
    let t = out(&o);
    assert!(
        t.contains("kind = \"txn\"") && t.contains("abort_ratio = 0.05"),
        "{t}"
    );
    assert!(t.contains("blocks_per_plane = 4096"), "{t}");
}

/// Finding 8: TRACES.md suggested `time_scale = 1/70`, which is rejected. Every `--set` in
/// the README's and TRACES.md's examples must be accepted.
#[test]
fn every_set_in_the_docs_is_accepted() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut n = 0;
    for doc in ["README.md", "docs/TRACES.md"] {
        let text = std::fs::read_to_string(format!("{root}/{doc}")).unwrap();
        // A sweep's `--set key=a,b` is a grid, not one value (README.md's sweep lines run
        // as written in readme.rs).
        for line in text
            .lines()
            .filter(|l| l.contains("commitlab ") && !l.contains("commitlab sweep"))
        {
            let words: Vec<&str> = line.split_whitespace().collect();
            for w in words.windows(2).filter(|w| w[0] == "--set") {
                let set = w[1].replace('\'', "");
                if set.contains("...") || set.starts_with("key") {
                    continue;
                }
                let o = run(&["config", "--set", &set]);
                assert!(o.status.success(), "{doc}: --set {set}: {}", err(&o));
                n += 1;
            }
        }
        assert!(!text.contains("`1/70` to"), "{doc} still suggests 1/70");
    }
    assert!(n >= 4, "found only {n} examples");
}

/// The README pointed to a doc that did not exist. Every `docs/….md` it names
/// exists.
#[test]
fn the_readme_points_only_to_docs_that_exist() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let mut n = 0;
    for (i, _) in readme.match_indices("docs/") {
        let tail = &readme[i..];
        let end = tail.find(".md").map(|e| e + 3);
        let Some(end) = end.filter(|&e| !tail[..e].contains(char::is_whitespace)) else {
            continue;
        };
        let doc = &tail[..end];
        assert!(
            std::path::Path::new(&format!("{root}/{doc}")).exists(),
            "README names {doc}, which does not exist"
        );
        n += 1;
    }
    assert!(n >= 4, "found only {n} doc references");
}
