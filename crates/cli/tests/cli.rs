//! The command line as users meet it: determinism, bad input, the crash checker, trace
//! replay, and a file image surviving a real process kill.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_commitlab"))
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("commitlab-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}
fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// A bad-input run: exit 2, a message mentioning `want`, and no panic.
fn assert_rejected(o: &Output, want: &str) {
    assert_eq!(
        o.status.code(),
        Some(2),
        "stdout: {}\nstderr: {}",
        stdout(o),
        stderr(o)
    );
    let e = stderr(o);
    assert!(e.contains(want), "expected '{want}' in: {e}");
    assert!(!e.contains("panicked"), "{e}");
}

const SMALL: &[&str] = &[
    "--set",
    "workload.synthetic.requests=3000",
    "--set",
    "nand.blocks_per_plane=32",
];

fn json_without_wall_clock(path: &Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for k in ["wall_time_s", "sim_ops_per_wall_s", "recovery_wall_time_s"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

#[test]
fn same_config_and_seed_give_byte_identical_json() {
    let d = tmpdir("det");
    let mut outs = Vec::new();
    for (i, seed) in ["7", "7", "8"].iter().enumerate() {
        let p = d.join(format!("{i}.json"));
        let mut args = vec!["run", "--seed", seed, "--json", p.to_str().unwrap()];
        args.extend_from_slice(SMALL);
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        outs.push(json_without_wall_clock(&p));
    }
    assert_eq!(
        serde_json::to_string(&outs[0]).unwrap(),
        serde_json::to_string(&outs[1]).unwrap(),
        "same seed, same output"
    );
    assert_ne!(outs[0], outs[2], "another seed, another run");
    let keys = outs[0].as_object().unwrap();
    for k in [
        "protocol",
        "seed",
        "host_reads",
        "host_writes",
        "nand_reads",
        "nand_programs",
        "nand_partial_programs",
        "nand_erases",
        "gc_page_migrations",
        "write_amplification",
        "sim_time_ns",
        "latency_ns",
        "erase_count",
    ] {
        assert!(keys.contains_key(k), "JSON lacks {k}");
    }
    for k in ["p50", "p99", "p999"] {
        assert!(keys["latency_ns"].get(k).is_some());
    }
    for k in ["min", "mean", "max"] {
        assert!(keys["erase_count"].get(k).is_some());
    }
}

#[test]
fn bad_configurations_are_rejected_with_the_key_named() {
    assert_rejected(&run(&["run", "--set", "nand.chanels=2"]), "chanels");
    assert_rejected(&run(&["run", "--set", "nand.channels=0"]), "nand.channels");
    assert_rejected(
        &run(&["run", "--set", "nand.pages_per_block=100000"]),
        "nand.pages_per_block",
    );
    assert_rejected(
        &run(&["run", "--set", "ftl.over_provisioning=2"]),
        "ftl.over_provisioning",
    );
    assert_rejected(
        &run(&["run", "--set", "nand.page_bytes=512"]),
        "ftl.summary_pages",
    );
    assert_rejected(
        &run(&["run", "--set", "workload.synthetic.read_ratio=7"]),
        "read_ratio",
    );
    assert_rejected(
        &run(&["run", "--protocol", "nope"]),
        "unknown protocol 'nope'",
    );
    assert_rejected(&run(&["run", "--preset", "nope"]), "unknown preset 'nope'");
    let d = tmpdir("badcfg");
    let f = d.join("c.toml");
    std::fs::write(&f, "[nand]\nchannels = \"two\"\n").unwrap();
    assert_rejected(
        &run(&["run", "--config", f.to_str().unwrap()]),
        "nand.channels",
    );
    std::fs::write(&f, "this is not toml [").unwrap();
    assert_rejected(&run(&["run", "--config", f.to_str().unwrap()]), "c.toml");
    assert_rejected(
        &run(&["run", "--config", d.join("missing.toml").to_str().unwrap()]),
        "missing.toml",
    );
}

#[test]
fn disksim_traces_replay_and_malformed_ones_are_rejected() {
    let d = tmpdir("trace");
    let t = d.join("t.trace");
    let mut text = String::from("# arrival_ns dev lsn size_sectors op\n");
    for i in 0..400u64 {
        text.push_str(&format!(
            "{} 0 {} 8 {}\n",
            i * 50_000,
            (i * 104_729) % 50_000 * 8,
            u64::from(i % 4 == 0)
        ));
    }
    std::fs::write(&t, &text).unwrap();
    let json = d.join("m.json");
    let o = run(&[
        "run",
        "--trace",
        t.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(m["host_requests"], 400);
    assert_eq!(m["host_reads"], 100);
    assert_eq!(m["host_writes"], 300);

    std::fs::write(&t, "0 0 0 8 0\n10 0 x 8 0\n").unwrap();
    assert_rejected(
        &run(&["run", "--trace", t.to_str().unwrap()]),
        "t.trace:2: lsn 'x'",
    );
    std::fs::write(&t, "0 0 0 8 0 9\n").unwrap();
    assert_rejected(
        &run(&["run", "--trace", t.to_str().unwrap()]),
        "expected 5 fields",
    );
    assert_rejected(
        &run(&["run", "--trace", d.join("none.trace").to_str().unwrap()]),
        "none.trace",
    );
}

#[test]
fn crash_check_of_none_passes_and_reports_the_count() {
    let o = run(&["crash", "--protocol", "none", "--exhaustive"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    let line = out
        .lines()
        .find(|l| l.starts_with("crash states checked:"))
        .unwrap();
    assert!(line.ends_with("violations: 0"), "{line}");
    let n: u64 = line
        .split(&[':', ','][..])
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(n > 1000, "{line}");
    let o = run(&[
        "crash",
        "--protocol",
        "none",
        "--schedules",
        "50",
        "--seed",
        "3",
    ]);
    assert!(
        stdout(&o).contains("crash states checked: 50, violations: 0"),
        "{}",
        stdout(&o)
    );
    let o = run(&["crash", "--protocol", "none", "--state", "3"]);
    assert!(stdout(&o).contains("state 3 at T="), "{}", stdout(&o));
    assert_rejected(&run(&["crash", "--protocol", "zzz"]), "unknown protocol");
    // A state that does not exist, and no schedules, are errors, not "0 states, 0 violations".
    assert_rejected(
        &run(&["crash", "--protocol", "none", "--state", "999999999"]),
        "no crash state 999999999",
    );
    assert_rejected(
        &run(&["crash", "--protocol", "none", "--schedules", "0"]),
        "--schedules must be at least 1",
    );
}

#[test]
fn a_file_image_survives_a_process_kill_and_recovers_in_another_process() {
    let d = tmpdir("kill");
    let img = d.join("dev.img");
    let acks = d.join("acks.log");
    let mut child = bin()
        .args([
            "run",
            "--image",
            img.to_str().unwrap(),
            "--ack-log",
            acks.to_str().unwrap(),
            "--set",
            "nand.data_mode=\"full\"",
            "--set",
            "nand.blocks_per_plane=16",
            "--set",
            "nand.page_bytes=1024",
            "--set",
            "workload.prefill=0",
            "--set",
            "workload.synthetic.requests=100000000",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Let it write (and garbage-collect) for a while, then kill it mid-operation.
    let start = std::time::Instant::now();
    while std::fs::metadata(&acks).map(|m| m.len()).unwrap_or(0) < 400_000 {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the writer exited on its own ({status}) before it could be killed");
        }
        assert!(
            start.elapsed().as_secs() < 120,
            "the writer made no progress"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let o = run(&[
        "recover",
        "--image",
        img.to_str().unwrap(),
        "--verify-acks",
        acks.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(out.contains(" lost") && out.contains(", 0 lost"), "{out}");
    assert!(out.contains("unreadable: 0"), "{out}");
}

#[test]
fn corrupt_images_are_reported_not_panicked_on() {
    let d = tmpdir("corrupt");
    let img = d.join("junk.img");
    std::fs::write(&img, b"definitely not an image").unwrap();
    assert_rejected(
        &run(&["recover", "--image", img.to_str().unwrap()]),
        "not a commitlab NAND image",
    );
    assert_rejected(
        &run(&["recover", "--image", d.join("absent.img").to_str().unwrap()]),
        "absent.img",
    );
}

#[test]
fn listings_and_config_printing_work() {
    let o = run(&["protocols"]);
    assert!(o.status.success() && stdout(&o).contains("none"));
    let o = run(&["presets"]);
    assert!(
        stdout(&o).contains("txflash") && stdout(&o).contains("32.0 GiB"),
        "{}",
        stdout(&o)
    );
    let o = run(&["config", "--preset", "lighttx", "--set", "seed=5"]);
    let out = stdout(&o);
    assert!(
        out.contains("seed = 5") && out.contains("planes_per_die = 8"),
        "{out}"
    );
    // What `config` prints is itself a valid configuration.
    let d = tmpdir("cfg");
    let f = d.join("printed.toml");
    std::fs::write(&f, &out).unwrap();
    let o = run(&["config", "--config", f.to_str().unwrap()]);
    assert_eq!(stdout(&o), out);
}

/// The ack log held plain writes only, buffered, so commits were never
/// verified and the last ~8 KiB of acks were lost at a kill. Now every acked change is one
/// unbuffered record (commits included), and a killed transactional run verifies clean.
#[test]
fn a_killed_transactional_run_verifies_its_committed_pages() {
    let d = tmpdir("kill-txn");
    let img = d.join("dev.img");
    let acks = d.join("acks.log");
    let mut child = bin()
        .args([
            "run",
            "--protocol",
            "lighttx",
            "--image",
            img.to_str().unwrap(),
            "--ack-log",
            acks.to_str().unwrap(),
            "--set",
            "nand.data_mode=\"full\"",
            "--set",
            "nand.blocks_per_plane=16",
            "--set",
            "nand.page_bytes=2048",
            "--set",
            "workload.prefill=0",
            "--set",
            "workload.kind=\"txn\"",
            "--set",
            "workload.txn.plain_write_ratio=0",
            "--set",
            "workload.txn.transactions=200000",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while std::fs::metadata(&acks).map(|m| m.len()).unwrap_or(0) < 100_000 {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the writer exited on its own ({status}) before it could be killed");
        }
        assert!(
            start.elapsed().as_secs() < 120,
            "the writer made no progress"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // No plain writes at all: every record is a committed transaction's page.
    let text = std::fs::read_to_string(&acks).unwrap();
    assert!(text.lines().count() > 1000, "{}", text.len());
    let o = run(&[
        "recover",
        "--image",
        img.to_str().unwrap(),
        "--verify-acks",
        acks.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(out.contains(", 0 lost"), "{out}");
    // The check has teeth: claim that the last committed page holds a tag it never had.
    let mut lines: Vec<&str> = text.lines().collect();
    let (lpn, _) = lines.last().unwrap().split_once(' ').unwrap();
    let forged = format!("{lpn} 1");
    lines.push(&forged);
    let forged_log = d.join("forged.log");
    std::fs::write(&forged_log, lines.join("\n") + "\n").unwrap();
    let o = run(&[
        "recover",
        "--image",
        img.to_str().unwrap(),
        "--verify-acks",
        forged_log.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("1 lost"), "{}", stdout(&o));
}

/// Block-table bytes (erase counts, flags) had no checksum; a flipped bit
/// opened silently. Now `recover` refuses the image with exit 2.
#[test]
fn a_corrupt_block_table_is_reported() {
    let d = tmpdir("blocktable");
    let img = d.join("dev.img");
    let o = run(&[
        "run",
        "--image",
        img.to_str().unwrap(),
        "--set",
        "nand.data_mode=\"full\"",
        "--set",
        "nand.blocks_per_plane=16",
        "--set",
        "nand.page_bytes=1024",
        "--set",
        "workload.synthetic.requests=2000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let good = std::fs::read(&img).unwrap();
    let json_len = u32::from_le_bytes(good[12..16].try_into().unwrap()) as usize;
    let table = (16 + json_len + 4).next_multiple_of(4096);
    for (what, off) in [
        ("erase count", table + 3 * 16),
        ("flags", table + 5 * 16 + 5),
    ] {
        let mut bad = good.clone();
        bad[off] ^= 0x01;
        std::fs::write(&img, &bad).unwrap();
        let o = run(&["recover", "--image", img.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(&o));
        assert!(stderr(&o).contains("checksum"), "{what}: {}", stderr(&o));
    }
    std::fs::write(&img, &good).unwrap();
    let o = run(&["recover", "--image", img.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// What an image may contain (docs/FTL.md, "Device image files"): exactly the header, block table, page table
/// and journal its header's geometry makes, every page record matching its CRC. Before,
/// 69 of 71 images with garbage appended and 2 with flipped bits recovered with exit 0.
/// Each corruption below, generated here, is refused with exit 2 naming what is wrong; the
/// intact image recovers.
#[test]
fn corrupt_images_are_refused_with_exit_2() {
    let d = tmpdir("corrupt-kinds");
    let img = d.join("dev.img");
    let o = run(&[
        "run",
        "--image",
        img.to_str().unwrap(),
        "--set",
        "nand.data_mode=\"full\"",
        "--set",
        "nand.blocks_per_plane=16",
        "--set",
        "nand.page_bytes=1024",
        "--set",
        "workload.synthetic.requests=2000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let good = std::fs::read(&img).unwrap();
    let json_len = u32::from_le_bytes(good[12..16].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&good[16..16 + json_len]).unwrap();
    let p = &header["params"];
    let blocks = p["geometry"]["channels"].as_u64().unwrap()
        * p["geometry"]["chips_per_channel"].as_u64().unwrap()
        * p["geometry"]["dies_per_chip"].as_u64().unwrap()
        * p["geometry"]["planes_per_die"].as_u64().unwrap()
        * p["geometry"]["blocks_per_plane"].as_u64().unwrap();
    let pages = blocks * p["geometry"]["pages_per_block"].as_u64().unwrap();
    let oob = p["oob_used"].as_u64().unwrap() as usize;
    let page_bytes = p["geometry"]["page_bytes"].as_u64().unwrap() as usize;
    let rec = 14 + oob + page_bytes;
    let table = (16 + json_len + 4).next_multiple_of(4096);
    let page_off = table + (blocks as usize * 16).next_multiple_of(4096);
    assert_eq!(
        good.len(),
        page_off + pages as usize * rec + 12 + rec,
        "the layout docs/FTL.md describes"
    );
    // A programmed page (state byte 1 or 5), not the journal's (a valid journal would
    // repair it): the last programmed one before the journal's page.
    let journal_ppa = u32::from_le_bytes(
        good[page_off + pages as usize * rec..][..4]
            .try_into()
            .unwrap(),
    ) as usize;
    let programmed = (0..pages as usize)
        .rev()
        .find(|&q| q != journal_ppa && good[page_off + q * rec + rec - 1] != 0)
        .expect("a programmed page");
    let at = page_off + programmed * rec;
    let mut cases: Vec<(&str, Vec<u8>, &str)> = Vec::new();
    let mut appended = good.clone();
    appended.extend_from_slice(b"garbage");
    cases.push(("garbage appended", appended, "appended"));
    let mut one = good.clone();
    one.push(0);
    cases.push(("one zero byte appended", one, "appended"));
    cases.push(("truncated", good[..good.len() - 1].to_vec(), "truncated"));
    for (what, off, want) in [
        ("header JSON", 20, "header CRC"),
        ("page tag", at + 2, "checksum"),
        ("page OOB", at + 8, "checksum"),
        ("page data", at + 8 + oob + 5, "checksum"),
        (
            "page data, last byte",
            at + 8 + oob + page_bytes - 1,
            "checksum",
        ),
        ("program count", at + 8 + oob + page_bytes, "checksum"),
        ("page checksum", at + rec - 3, "checksum"),
    ] {
        let mut bad = good.clone();
        bad[off] ^= 0x10;
        cases.push((what, bad, want));
    }
    for (what, bytes, want) in cases {
        std::fs::write(&img, &bytes).unwrap();
        let o = run(&["recover", "--image", img.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{what}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{what}: {}", stderr(&o));
    }
    std::fs::write(&img, &good).unwrap();
    let o = run(&["recover", "--image", img.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A kill that cuts a page record's in-place write short (a partial program, which the
/// crash model lets tear) leaves the journal holding the whole record: opening completes
/// it instead of refusing the image.
#[test]
fn a_page_record_cut_short_is_completed_from_the_journal() {
    let d = tmpdir("journal");
    let img = d.join("dev.img");
    let o = run(&[
        "run",
        "--image",
        img.to_str().unwrap(),
        "--set",
        "nand.data_mode=\"full\"",
        "--set",
        "nand.blocks_per_plane=16",
        "--set",
        "nand.page_bytes=1024",
        "--set",
        "workload.synthetic.requests=2000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let good = std::fs::read(&img).unwrap();
    let json_len = u32::from_le_bytes(good[12..16].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&good[16..16 + json_len]).unwrap();
    let p = &header["params"];
    let oob = p["oob_used"].as_u64().unwrap() as usize;
    let rec = 14 + oob + p["geometry"]["page_bytes"].as_u64().unwrap() as usize;
    let journal = good.len() - 12 - rec;
    let ppa = u32::from_le_bytes(good[journal..journal + 4].try_into().unwrap()) as usize;
    // The in-place record of the journal's page: half of it overwritten (a torn write of
    // different bytes), its checksum no longer matching.
    let table = (16 + json_len + 4).next_multiple_of(4096);
    let blocks_bytes = {
        let g = &p["geometry"];
        let blocks = g["channels"].as_u64().unwrap()
            * g["chips_per_channel"].as_u64().unwrap()
            * g["dies_per_chip"].as_u64().unwrap()
            * g["planes_per_die"].as_u64().unwrap()
            * g["blocks_per_plane"].as_u64().unwrap();
        (blocks as usize * 16).next_multiple_of(4096)
    };
    let rec_at = table + blocks_bytes + ppa * rec;
    let mut torn = good.clone();
    for b in &mut torn[rec_at + 8..rec_at + rec / 2] {
        *b ^= 0x5A;
    }
    std::fs::write(&img, &torn).unwrap();
    let o = run(&["recover", "--image", img.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Written back in place: the page's record is the intact one again.
    let after = std::fs::read(&img).unwrap();
    assert_eq!(after[rec_at..rec_at + rec], good[rec_at..rec_at + rec]);
    // Without a valid journal the same damage is refused.
    let mut no_journal = torn.clone();
    no_journal[good.len() - 1] ^= 0xFF;
    std::fs::write(&img, &no_journal).unwrap();
    let o = run(&["recover", "--image", img.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("checksum"), "{}", stderr(&o));
}
