//! `commitlab run|crash --host`: determinism, the crash checker's summary, bad input.

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
fn host_runs_are_deterministic_and_write_json() {
    let dir = std::env::temp_dir().join(format!("commitlab-host-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut outs = Vec::new();
    for k in 0..2 {
        let j = dir.join(format!("m{k}.json"));
        let o = run(&[
            "run",
            "--host",
            "device-tx",
            "--protocol",
            "afc",
            "--set",
            "host.transactions=200",
            "--set",
            "host.bank.accounts=5000",
            "--json",
            j.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(text(&o.stdout).contains("committed"), "{}", text(&o.stdout));
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("wall_time_s");
        assert!(v["committed"].as_u64().unwrap() > 0);
        outs.push(v.to_string());
    }
    assert_eq!(outs[0], outs[1]);
}

#[test]
fn host_crash_reports_states_and_bad_input_exits_2() {
    let o = run(&[
        "crash",
        "--host",
        "wal",
        "--protocol",
        "none",
        "--schedules",
        "50",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("crash states checked: 50, violations: 0"),
        "{}",
        text(&o.stdout)
    );
    for (args, want) in [
        (vec!["run", "--host", "aries"], "host.strategy"),
        (
            vec!["run", "--host", "wal", "--set", "host.clients=0"],
            "host.clients",
        ),
        (
            vec!["run", "--host", "wal", "--protocol", "cfc"],
            "protocol.name",
        ),
        (
            vec!["crash", "--host", "device-tx", "--protocol", "none"],
            "protocol.name",
        ),
        (
            vec![
                "run",
                "--host",
                "device-tx",
                "--protocol",
                "cfc",
                "--set",
                "host.lock_level=\"record\"",
            ],
            "host.lock_level",
        ),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        let e = text(&o.stderr);
        assert!(e.contains(want) && !e.contains("panicked"), "{args:?}: {e}");
    }
}
