//! The DBMS host killed for real: `run --host S --image F --ack-log A` as a child process,
//! `kill -9` at seeded random points (a number of ack-log lines drawn per kill), then
//! `recover --host S --image F --verify-acks A` in another process: every acked transaction
//! present, nothing of an unissued one, in-flight ones all or nothing. And the flags a mode
//! does not use, refused with exit 2.
//!
//! More kills by hand: `HOST_KILLS=100 HOST_KILL_SEED=7 cargo test -p commitlab --test
//! host_kill -- --nocapture`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_commitlab"))
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("commitlab-hostkill-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> String {
    format!(
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn is_pcm(strategy: &str) -> bool {
    matches!(
        strategy,
        "pcmlogging" | "pcmlogging-page" | "wal-pcm" | "scmlogging"
    )
}

/// Transactions per run: a PCM strategy on the SATA SSD model runs several times faster
/// than a file-backed flash device, so its run is longer for kills to land inside it.
fn txns_of(strategy: &str) -> u64 {
    if is_pcm(strategy) {
        1500
    } else {
        600
    }
}

/// The run every kill starts: a small device in full data mode, a long bank workload. A PCM
/// strategy keeps its database in PCM and on Table 2's SATA SSD (a tier image; the flash
/// device's keys are refused for it), with checkpoints often enough for wal-pcm's and
/// scmlogging's logs.
fn run_args(strategy: &str, protocol: &str, img: &Path, acks: &Path, txns: u64) -> Vec<String> {
    if is_pcm(strategy) {
        let mut a: Vec<String> = [
            "run",
            "--host",
            strategy,
            "--protocol",
            protocol,
            "--image",
            img.to_str().unwrap(),
            "--ack-log",
            acks.to_str().unwrap(),
            "--set",
            "host.bank.accounts=4000",
            "--set",
            "host.pcm.external=\"ssd\"",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if strategy != "pcmlogging" {
            for kv in [
                "host.pcm.checkpoint_interval_ms=1",
                "host.pcm.pcm_bytes=1048576",
            ] {
                a.push("--set".into());
                a.push(kv.into());
            }
        }
        a.push("--set".into());
        a.push(format!("host.transactions={txns}"));
        return a;
    }
    let mut a: Vec<String> = [
        "run",
        "--host",
        strategy,
        "--protocol",
        protocol,
        "--image",
        img.to_str().unwrap(),
        "--ack-log",
        acks.to_str().unwrap(),
        "--set",
        "nand.data_mode=\"full\"",
        "--set",
        "nand.blocks_per_plane=24",
        "--set",
        "host.bank.accounts=4000",
        "--set",
        "host.buffer_frames=16",
        "--set",
        "host.log_pages=512",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push("--set".into());
    a.push(format!("host.transactions={txns}"));
    if strategy.starts_with("cfc") || strategy.starts_with("afc") {
        a.push("--set".into());
        a.push("nand.append_bytes=4".into());
    }
    a
}

fn lines(p: &Path) -> usize {
    std::fs::read(p)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}

/// `kills` kills of `strategy` over `protocol`; returns (kills that hit a running process,
/// acked transactions verified in total).
fn kill_and_verify(strategy: &str, protocol: &str, kills: u32, seed: u64) -> (u32, u64) {
    let d = tmpdir(&format!("{strategy}-{protocol}"));
    let (img, acks) = (d.join("host.img"), d.join("acks.log"));
    let txns = txns_of(strategy);
    let mut rng = seed;
    let mut hit = 0;
    let mut acked = 0u64;
    for k in 0..kills {
        let _ = std::fs::remove_file(&acks);
        // Two lines per commit (issue, ack): kill somewhere in the first ~90 % of the run.
        let target = 1 + (splitmix(&mut rng) % (txns * 18 / 10)) as usize;
        let mut child = bin()
            .args(run_args(strategy, protocol, &img, &acks, txns))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        let mut exited = None;
        while lines(&acks) < target {
            if let Some(st) = child.try_wait().unwrap() {
                exited = Some(st);
                break;
            }
            assert!(
                start.elapsed().as_secs() < 300,
                "{strategy}/{protocol}: the run made no progress"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        match exited {
            // SIGKILL (`Child::kill` on Unix): the process ends wherever it is.
            None => {
                child.kill().unwrap();
                child.wait().unwrap();
                hit += 1;
            }
            Some(st) => {
                let o = child.wait_with_output().unwrap();
                assert!(
                    st.success(),
                    "{strategy}/{protocol}: the run failed: {}",
                    text(&o)
                );
            }
        }
        let o = bin()
            .args([
                "recover",
                "--host",
                strategy,
                "--image",
                img.to_str().unwrap(),
                "--verify-acks",
                acks.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let out = text(&o);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{strategy}/{protocol} kill {k} (seed {seed}, after {target} ack-log lines): {out}"
        );
        assert!(out.contains(" 0 findings"), "{out}");
        let n: u64 = out
            .split("ack log: ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        acked += n;
    }
    (hit, acked)
}

fn kills() -> (u32, u64) {
    let n = std::env::var("HOST_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let seed = std::env::var("HOST_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(21);
    (n, seed)
}

fn kill_cell(strategy: &str, protocol: &str) {
    let (n, seed) = kills();
    kill_cell_n(strategy, protocol, n, seed);
}

fn kill_cell_n(strategy: &str, protocol: &str, n: u32, seed: u64) {
    let (hit, acked) = kill_and_verify(strategy, protocol, n, seed);
    println!("{strategy}/{protocol}: {n} runs, {hit} killed mid-run, {acked} acked transactions verified, 0 lost");
    // Most kills land in a running process (the target is below the run's length).
    assert!(
        hit * 10 >= n * 8,
        "{strategy}/{protocol}: only {hit} of {n} kills hit a running process"
    );
    assert!(acked > 0);
}

#[test]
fn a_killed_wal_host_loses_no_acked_transaction() {
    kill_cell("wal", "none");
}

#[test]
fn a_killed_device_tx_host_over_bpcc_loses_no_acked_transaction() {
    kill_cell("device-tx", "bpcc");
}

#[test]
fn a_killed_cfc_ex_host_loses_no_acked_transaction() {
    kill_cell("cfc-ex", "none");
}

/// AFC_ex (Flag Commit §4.2 with AFC's flags) is the fourth strategy a file-backed run
/// accepts on the flash device (`flagcommit-ex` is another name for cfc-ex).
#[test]
fn a_killed_afc_ex_host_loses_no_acked_transaction() {
    kill_cell("afc-ex", "none");
}

/// PCMLogging (record level, its §3.3) keeps its database in PCM and on the HDD: the run's
/// image is a tier image both write through to (`media::tier_file`), and `recover --host`
/// restarts from the PCM and disk it rebuilds (Algorithm 3).
#[test]
fn a_killed_pcmlogging_host_loses_no_acked_transaction() {
    kill_cell("pcmlogging", "none");
}

/// The other PCM strategies write through to a tier image too: page-level PCMLogging
/// (§3.2), WAL with a PCM buffer and SCMLogging (§6's baselines). Two kills each (a fifth
/// of `HOST_KILLS`, at least two: the test's cost stays small).
#[test]
fn a_killed_pcm_baseline_host_loses_no_acked_transaction() {
    let (n, seed) = kills();
    for s in ["pcmlogging-page", "wal-pcm", "scmlogging"] {
        kill_cell_n(s, "none", (n / 5).max(2), seed);
    }
}

/// A tier image's verification has teeth too: with one acked transaction's lines dropped
/// from the ack log its effects are an unissued transaction's (exit 1); a flipped bit in a
/// record, or a whole record of garbage appended, is a corrupt image (exit 2).
#[test]
fn a_tier_image_is_judged_and_a_corrupt_one_refused() {
    let d = tmpdir("tier");
    let (img, acks) = (d.join("tier.img"), d.join("acks.log"));
    let o = bin()
        .args(run_args("pcmlogging", "none", &img, &acks, 200))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let recover = |img: &Path, acks: &Path| {
        bin()
            .args([
                "recover",
                "--host",
                "pcmlogging",
                "--image",
                img.to_str().unwrap(),
                "--verify-acks",
                acks.to_str().unwrap(),
            ])
            .output()
            .unwrap()
    };
    let o = recover(&img, &acks);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let log = std::fs::read_to_string(&acks).unwrap();
    let txn = log
        .lines()
        .find(|l| l.contains("\"ack\""))
        .and_then(|l| l.split("\"txn\":").nth(1))
        .and_then(|t| t.split(',').next())
        .unwrap()
        .to_string();
    let needle = format!("\"txn\":{txn},");
    let dropped: String = log
        .lines()
        .filter(|l| !l.contains(&needle))
        .map(|l| format!("{l}\n"))
        .collect();
    let dropped_log = d.join("dropped.log");
    std::fs::write(&dropped_log, dropped).unwrap();
    let o = recover(&img, &dropped_log);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("serial replay"), "{}", text(&o));
    let bytes = std::fs::read(&img).unwrap();
    let mut flipped = bytes.clone();
    let mid = bytes.len() / 2;
    flipped[mid] ^= 0x04;
    let bad = d.join("flipped.img");
    std::fs::write(&bad, &flipped).unwrap();
    let mut appended = bytes.clone();
    appended.extend_from_slice(&[3u8; 40]);
    let bad2 = d.join("appended.img");
    std::fs::write(&bad2, &appended).unwrap();
    for b in [&bad, &bad2] {
        let o = recover(b, &acks);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("corrupt tier image"), "{}", text(&o));
    }
}

/// The verification has teeth: an ack log that claims a transaction the image never
/// received (the run's ack log of a shorter run, extended by the lines of a longer one)
/// fails with exit 1 and names what was lost; a log of another run is refused (exit 2).
#[test]
fn a_forged_ack_log_is_caught() {
    let d = tmpdir("forged");
    let (img, acks) = (d.join("host.img"), d.join("acks.log"));
    let (img2, acks2) = (d.join("long.img"), d.join("long.log"));
    for (i, a, n) in [(&img, &acks, 100), (&img2, &acks2, 300)] {
        let o = bin()
            .args(run_args("wal", "none", i, a, n))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    // The 300-transaction run's log against the 100-transaction run's image: the same
    // configuration but for the count, so its first transactions match and later ones are
    // acked in the log but absent from the image.
    let o = bin()
        .args([
            "recover",
            "--host",
            "wal",
            "--image",
            img.to_str().unwrap(),
            "--verify-acks",
            acks2.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let out = text(&o);
    assert!(matches!(o.status.code(), Some(1) | Some(2)), "{out}");
    // A log line that is not JSON, and a strategy that is not the image's: exit 2.
    let junk = d.join("junk.log");
    std::fs::write(&junk, "12 34\n").unwrap();
    for args in [
        vec!["--host", "wal", "--verify-acks", junk.to_str().unwrap()],
        vec!["--host", "device-tx"],
        vec![],
    ] {
        let mut a = vec!["recover", "--image", img.to_str().unwrap()];
        a.extend(args.iter().copied());
        let o = bin().args(&a).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", text(&o));
        assert!(!text(&o).contains("panicked"), "{}", text(&o));
    }
    // The log of this very image, with one acked transaction's ack dropped: the image still
    // holds it, so it now reads as in flight (allowed) — and with its issue dropped too, as
    // never issued, whose effects must not be there: exit 1.
    let log = std::fs::read_to_string(&acks).unwrap();
    let first_ack = log
        .lines()
        .find(|l| l.contains("\"ack\""))
        .unwrap()
        .to_string();
    let txn = first_ack
        .split("\"txn\":")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    let needle = format!("\"txn\":{txn},");
    let dropped: String = log
        .lines()
        .filter(|l| !l.contains(&needle))
        .map(|l| format!("{l}\n"))
        .collect();
    let dropped_log = d.join("dropped.log");
    std::fs::write(&dropped_log, dropped).unwrap();
    let o = bin()
        .args([
            "recover",
            "--host",
            "wal",
            "--image",
            img.to_str().unwrap(),
            "--verify-acks",
            dropped_log.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("serial replay"), "{}", text(&o));
}

/// Every flag a mode does not use is refused with exit 2, never silently ignored.
#[test]
fn flags_a_mode_does_not_use_are_refused() {
    let d = tmpdir("flags");
    let img = d.join("x.img");
    let f = d.join("t.trace");
    std::fs::write(&f, "").unwrap();
    let ack = d.join("a");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        // A host replays page-access traces only (host.workload = "trace"): an empty
        // file is refused by the trace reader, naming the file and the line.
        (
            vec!["run", "--host", "wal", "--trace", f.to_str().unwrap()],
            "t.trace:1: empty file",
        ),
        (
            vec!["run", "--host", "wal", "--trace-format", "txn"],
            "--trace",
        ),
        (
            vec!["run", "--host", "wal", "--ack-log", ack.to_str().unwrap()],
            "--ack-log",
        ),
        // A PCM strategy's disk on the emulated SSD is a flash device in memory.
        (
            vec![
                "run",
                "--host",
                "pcmlogging",
                "--image",
                img.to_str().unwrap(),
                "--set",
                "host.pcm.external=\"emulated\"",
            ],
            "host.pcm.external",
        ),
        (
            vec!["run", "--host", "wal", "--image", img.to_str().unwrap()],
            "nand.data_mode",
        ),
        (vec!["run", "--update", "ipa"], "--update"),
        (vec!["run", "--trace-format", "txn"], "--trace-format"),
        (
            vec!["crash", "--protocol", "none", "--update", "ipa"],
            "--update",
        ),
        (
            vec!["crash", "--host", "wal", "--exhaustive", "--schedules", "5"],
            "--exhaustive",
        ),
    ];
    for (args, want) in cases {
        let o = bin().args(&args).output().unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains(want), "{args:?}: expected '{want}' in {t}");
        assert!(!t.contains("panicked"), "{t}");
    }
}
