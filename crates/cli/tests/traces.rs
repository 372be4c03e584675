//! Real block traces in: `commitlab run --trace F --trace-format
//! disksim|blkreplay|msr|spc`, streamed, gzip or plain, sub-page and unaligned writes as
//! read-modify-writes in the device, reads of never-written pages counted. The real MySQL
//! and MS SQL Server traces come from Debian's `blkreplay-examples` (`.ci/run` installs it);
//! tests that need them say "skipped" and return when the files are absent.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const EXAMPLES: &str = "/usr/share/doc/blkreplay-examples/examples/example-load/natural";

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_commitlab"))
        .args(args)
        .output()
        .unwrap()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("commitlab-traces-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn json_of(o: &Output) -> serde_json::Value {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

fn real_trace(file: &str) -> Option<String> {
    let p = format!("{EXAMPLES}/{file}");
    if Path::new(&p).exists() {
        Some(p)
    } else {
        eprintln!("skipped: {p} is absent (apt-get install blkreplay-examples)");
        None
    }
}

fn ftl(v: &serde_json::Value, k: &str) -> u64 {
    v["ftl"][k]
        .as_u64()
        .unwrap_or_else(|| panic!("ftl.{k} in {v}"))
}

#[test]
fn the_real_mysql_and_mssql_traces_replay_with_read_modify_writes() {
    // (file, requests): counted with awk, see workload::blocktrace's test.
    for (file, requests) in [
        ("linux-mysql.load.gz", 80_794u64),
        ("windows-mssql.load.gz", 42_976),
    ] {
        let Some(path) = real_trace(file) else {
            continue;
        };
        let args = [
            "run",
            "--trace",
            &path,
            "--trace-format",
            "blkreplay",
            "--json",
            "-",
            "--quiet",
        ];
        let v = json_of(&run(&args));
        assert_eq!(v["host_requests"].as_u64(), Some(requests), "{file}");
        let partial = ftl(&v, "partial_writes");
        let rmw = ftl(&v, "rmw_reads");
        assert!(partial > 1000, "{file}: {partial} partial page writes");
        assert!(
            rmw > 0 && rmw <= partial,
            "{file}: {rmw} rmw reads of {partial}"
        );
        assert!(
            v["nand_reads"].as_u64().unwrap() >= rmw,
            "{file}: the RMW reads are NAND reads"
        );
        // Same trace, same config: byte-identical metrics but for wall-clock keys.
        let mut again = json_of(&run(&args));
        let mut v = v;
        for m in [&mut v, &mut again] {
            for k in ["wall_time_s", "sim_ops_per_wall_s", "recovery_wall_time_s"] {
                m.as_object_mut().unwrap().remove(k);
            }
        }
        assert_eq!(v, again, "{file}: not deterministic");
    }
}

#[test]
fn the_real_mysql_trace_runs_on_every_protocol_that_takes_plain_writes() {
    let Some(path) = real_trace("linux-mysql.load.gz") else {
        return;
    };
    for p in ["tc", "lighttx"] {
        let v = json_of(&run(&[
            "run",
            "--trace",
            &path,
            "--trace-format",
            "blkreplay",
            "--protocol",
            p,
            "--json",
            "-",
            "--quiet",
        ]));
        assert!(ftl(&v, "rmw_reads") > 0, "{p}");
    }
}

/// The same four requests in each format: a 4 KiB read at byte 8192, a one-byte write at
/// byte 4095 (sub-page), a 6 KiB write at byte 512 (unaligned over two pages), a 4 KiB write
/// at byte 0 (aligned). Every format gives the same metrics.
#[test]
fn every_block_format_gives_the_same_run_and_gzip_is_read_directly() {
    let d = tmpdir("formats");
    let files = [
        ("disksim", "t.disksim", "0 0 16 8 1\n1500000000 0 7 1 0\n2000000000 0 1 12 0\n2500000000 0 0 8 0\n"),
        (
            "blkreplay",
            "t.load",
            "a preamble\nstart ; sector; length ; op ; replay_delay=0 ; replay_duration=0\n\
             0.0 ; 16 ; 8 ; R ; 0 ; 0\n1.5 ; 7 ; 1 ; W ; 0 ; 0\n2.0 ; 1 ; 12 ; WS ; 0 ; 0\n2.5 ; 0 ; 8 ; W ; 0 ; 0\n",
        ),
        (
            "msr",
            "t.csv",
            "128166372003061629,hm,0,Read,8192,4096,100\n128166372018061629,hm,0,Write,4095,1,100\n\
             128166372023061629,hm,0,Write,512,6144,100\n128166372028061629,hm,0,Write,0,4096,100\n",
        ),
        ("spc", "t.spc", "0,16,4096,r,0.0\n0,7,1,w,1.5\n0,1,6144,w,2.0\n0,0,4096,w,2.5\n"),
    ];
    let mut results = Vec::new();
    for (fmt, name, text) in files {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        let v = json_of(&run(&[
            "run",
            "--trace",
            p.to_str().unwrap(),
            "--trace-format",
            fmt,
            "--json",
            "-",
            "--quiet",
        ]));
        assert_eq!(v["host_requests"].as_u64(), Some(4), "{fmt}");
        // Partial pages: the one-byte write's page, both pages of the unaligned write.
        assert_eq!(ftl(&v, "partial_writes"), 3, "{fmt}");
        // After the default 50 % prefill pages 0 and 1 hold data: every merge reads.
        assert_eq!(ftl(&v, "rmw_reads"), 3, "{fmt}");
        results.push((fmt, v));
    }
    // gzip: the same DiskSim trace compressed, read by its magic bytes.
    let gz = d.join("t.disksim.gz");
    let status = Command::new("gzip")
        .args(["-k", "-c", d.join("t.disksim").to_str().unwrap()])
        .output();
    if let Ok(o) = status {
        std::fs::write(&gz, o.stdout).unwrap();
        let v = json_of(&run(&[
            "run",
            "--trace",
            gz.to_str().unwrap(),
            "--json",
            "-",
            "--quiet",
        ]));
        results.push(("disksim.gz", v));
    }
    let strip = |v: &serde_json::Value| {
        let mut v = v.clone();
        for k in [
            "wall_time_s",
            "sim_ops_per_wall_s",
            "recovery_wall_time_s",
            "workload",
        ] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    for (fmt, v) in &results[1..] {
        assert_eq!(strip(v), strip(&results[0].1), "{fmt} differs from disksim");
    }
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn reads_of_never_written_pages_are_counted_not_read_from_nand() {
    let d = tmpdir("unmapped");
    let p = d.join("reads.disksim");
    // Page 100 and 101 of an empty device (no prefill): never written.
    std::fs::write(&p, "0 0 800 16 1\n").unwrap();
    let v = json_of(&run(&[
        "run",
        "--trace",
        p.to_str().unwrap(),
        "--set",
        "workload.prefill=0",
        "--json",
        "-",
        "--quiet",
    ]));
    assert_eq!(ftl(&v, "unmapped_reads"), 2);
    assert_eq!(v["nand_reads"].as_u64(), Some(0));
    let _ = std::fs::remove_dir_all(d);
}

/// A block trace is validated as it is replayed (read once): a bad line exits 2 naming
/// the file and line, and no result is written, whether it is the first line or one far
/// into the run.
#[test]
fn bad_block_traces_exit_2_naming_the_line_and_write_no_results() {
    let d = tmpdir("bad");
    for (fmt, text, want) in [
        ("blkreplay", "1.0 ; 5 ; 8 ; X ; 0 ; 0\n", ":1: op 'X'"),
        ("msr", "1,h,0,Trim,0,512,1\n", ":1: Type 'Trim'"),
        (
            "spc",
            "0,1,512,r,0.0\n0,1,512,r,abc\n",
            ":2: Timestamp 'abc'",
        ),
        ("disksim", "0 0 0 8 0\n0 0 0 8 9\n", ":2: op must be 0"),
    ] {
        let p = d.join(format!("bad.{fmt}"));
        std::fs::write(&p, text).unwrap();
        let o = run(&["run", "--trace", p.to_str().unwrap(), "--trace-format", fmt]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{fmt}: {e}");
        assert!(e.contains(want), "{fmt}: expected '{want}' in {e}");
        assert!(o.stdout.is_empty(), "{fmt}: nothing ran");
    }
    // 2,000 good requests (the run is well under way, past its prefill), then a bad one;
    // and an address beyond the device without folding.
    for (last, want) in [
        ("9999999 0 0 8 x\n", ":2001: op 'x'"),
        (
            "9999999 0 99999999999 8 0\n",
            ":2001: request addresses page",
        ),
    ] {
        let mut text: String = (0..2000)
            .map(|i| format!("{} 0 {} 8 0\n", i * 1000, (i * 8) % 4096))
            .collect();
        text.push_str(last);
        let p = d.join("late.disksim");
        std::fs::write(&p, text).unwrap();
        let (json, rec) = (d.join("late.json"), d.join("late.txn"));
        let o = run(&[
            "run",
            "--trace",
            p.to_str().unwrap(),
            "--set",
            "workload.trace.fold=false",
            "--json",
            json.to_str().unwrap(),
            "--record",
            rec.to_str().unwrap(),
        ]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(want), "expected '{want}' in {e}");
        assert!(
            o.stdout.is_empty(),
            "no summary: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(!json.exists(), "no metrics file");
        assert!(!rec.exists(), "no partial recording");
    }
    let o = run(&[
        "run",
        "--trace",
        "/nonexistent.load",
        "--trace-format",
        "blkreplay",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["run", "--trace", "x", "--trace-format", "bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("workload.trace.format"));
    let _ = std::fs::remove_dir_all(d);
}

/// A DiskSim replay first writes `workload.prefill` (default 0.5) of the logical
/// space, as docs/TRACES.md says: a read of page 0 finds data after the default prefill and
/// an unwritten page with `workload.prefill = 0`.
#[test]
fn a_disksim_replay_prefills_half_the_device_by_default() {
    let d = tmpdir("prefill");
    let p = d.join("read0.disksim");
    std::fs::write(&p, "0 0 0 8 1\n").unwrap();
    let path = p.to_str().unwrap();
    let v = json_of(&run(&["run", "--trace", path, "--json", "-", "--quiet"]));
    assert_eq!(ftl(&v, "unmapped_reads"), 0);
    assert_eq!(v["nand_reads"].as_u64(), Some(1));
    let v = json_of(&run(&[
        "run",
        "--trace",
        path,
        "--set",
        "workload.prefill=0",
        "--json",
        "-",
        "--quiet",
    ]));
    assert_eq!(ftl(&v, "unmapped_reads"), 1);
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/TRACES.md"))
        .unwrap();
    assert!(doc.contains("`workload.prefill` (default 0.5)"));
    let _ = std::fs::remove_dir_all(d);
}
