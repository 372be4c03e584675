//! `commitlab run --host` on the default device: a device too small for the database is
//! sized to it (one line says how) unless the geometry was set, when the refusal names the
//! keys; PCM strategies off the flash device are not refused for its size; `--workload`.

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

/// The number after "committed" in a host run's summary.
fn committed(out: &str) -> u64 {
    out.split("committed ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

const SIZED: &str = "sized to the database with 20 % free space for GC";

/// Each workload's database is larger than the default device (tpcc: 801,458 device pages
/// against 13,482): the run sizes the device, says so, and commits.
#[test]
fn host_workloads_run_on_the_default_device_sized_to_the_database() {
    for (w, how) in [("tpcc", "flag"), ("tpcb", "set"), ("tatp", "flag")] {
        let set = format!("host.workload=\"{w}\"");
        let mut args = vec!["run", "--host", "wal", "--set", "host.transactions=30"];
        if how == "flag" {
            args.extend(["--workload", w]);
        } else {
            args.extend(["--set", &set]);
        }
        let o = run(&args);
        assert!(o.status.success(), "{w}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        let first = out.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("device: ") && first.contains(SIZED),
            "{w}: {out}"
        );
        assert!(out.contains("host wal on none"), "{w}: {out}");
        assert!(committed(&out) > 0, "{w}: {out}");
    }
}

/// The README's PCMLogging line: the database is on the PCM tier and the Table 2 disk, so
/// the flash device's size does not matter and is neither refused nor sized.
#[test]
fn pcmlogging_on_a_disk_is_not_refused_for_the_flash_device_size() {
    let o = run(&[
        "run",
        "--host",
        "pcmlogging",
        "--set",
        "host.workload=\"tpcc\"",
        "--set",
        "host.transactions=30",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(!out.contains(SIZED), "{out}");
    assert!(committed(&out) > 0, "{out}");
}

/// A geometry the user chose is kept: too small, the run is refused (exit 2) naming the
/// keys that shrink the database and grow the device.
#[test]
fn a_user_set_geometry_too_small_is_refused_naming_the_keys() {
    let dir = std::env::temp_dir().join(format!("commitlab-host-sizing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("small.toml");
    std::fs::write(&file, "[nand]\nblocks_per_plane = 64\n").unwrap();
    let f = file.to_str().unwrap();
    for extra in [
        vec!["--set", "nand.blocks_per_plane=64"],
        vec!["--config", f],
    ] {
        let mut args = vec!["run", "--host", "wal", "--workload", "tpcc"];
        args.extend(extra.iter().copied());
        let o = run(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        for key in [
            "host.tpcc.warehouses",
            "nand.blocks_per_plane",
            "host.log_pages",
        ] {
            assert!(err.contains(key), "{extra:?}: {err}");
        }
        assert!(!text(&o.stdout).contains(SIZED), "{extra:?}");
    }
}

#[test]
fn workload_without_host_exits_2() {
    let o = run(&["run", "--workload", "tpcc"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("--workload") && err.contains("needs --host"),
        "{err}"
    );
}

/// An unknown workload through the flag is refused naming the key.
#[test]
fn an_unknown_workload_exits_2_naming_the_key() {
    let o = run(&["run", "--host", "wal", "--workload", "tpcz"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("host.workload"),
        "{}",
        text(&o.stderr)
    );
}
