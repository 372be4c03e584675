//! Device presets from the papers. Each is a TOML fragment layered over the defaults; the
//! comments say where each number comes from. Where a paper is silent, the value is a typical
//! datasheet figure and is marked as such.

use crate::config::ConfigError;
use toml::Table;

pub const NAMES: [&str; 5] = ["default", "txflash", "flagcommit", "lighttx", "openssd"];

/// The main job's base (what `commitlab compare` runs with no arguments): a
/// transactional workload with 5 % aborts on a 128 MiB device, layered under any preset.
/// Sized so GC is active (the prefill leaves half the logical space live and 5 000
/// transactions of 1-16 pages rewrite it about twice over) while every protocol finishes
/// in well under a second of CPU. (At 6 000 transactions TC's write amplification jumps and
/// beyond 8 000 it runs out of space on this device: see docs/TOOL.md, "The main job".) Not a preset: it sets the workload, and a preset
/// named with `--preset` replaces its device.
pub const MAIN_JOB: &str = r#"
[nand]
blocks_per_plane = 128
[workload]
kind = "txn"
prefill = 0.5
[workload.txn]
transactions = 5000
abort_ratio = 0.05
isolation = "no-page-conflict"
concurrency = 4
"#;

/// The TOML text of a preset.
pub fn text(name: &str) -> Option<&'static str> {
    Some(match name {
        "default" => "",
        // TxFlash §5: 32 GB, 8 fully connected 4 GB packages, up to 4 operations in flight per
        // package (2 dies × 2 planes), Samsung K9XXG08 parameters (4 KiB pages, 64 per block,
        // 25 us read, 200 us program, 1.5 ms erase), 15 % of pages reserved.
        "txflash" => {
            r#"
[nand]
channels = 8
chips_per_channel = 1
dies_per_chip = 2
planes_per_die = 2
blocks_per_plane = 4096
pages_per_block = 64
page_bytes = 4096
oob_bytes = 128
[nand.timing]
read_ns = 25000
program_ns = 200000
partial_program_ns = 200000
erase_ns = 1500000
[ftl]
over_provisioning = 0.15
"#
        }
        // Flag Commit §5.1, Table 2: 32 GB, 8 fully connected 4 GB packages, 2 KiB pages, 128 KiB
        // blocks (64 pages), read 0.08 ms, write 0.2 ms, partial program 0.2 ms, partial
        // programming level (NOP) 2, erase 1.5 ms, 10 % reserved, GC at 5 %, wear-aware GC.
        "flagcommit" => {
            r#"
[nand]
channels = 8
chips_per_channel = 1
dies_per_chip = 2
planes_per_die = 2
blocks_per_plane = 8192
pages_per_block = 64
page_bytes = 2048
oob_bytes = 64
nop = 2
[nand.timing]
read_ns = 80000
program_ns = 200000
partial_program_ns = 200000
erase_ns = 1500000
[ftl]
over_provisioning = 0.10
gc_threshold = 0.05
gc_policy = "wear-aware"
"#
        }
        // LightTx §4.1, Table 2: 32 GB, 4 KiB pages, 64 per block, 8 planes per package, 8
        // packages, read 0.025 ms, write 0.2 ms, erase 1.5 ms, GC threshold 5 %.
        "lighttx" => {
            r#"
[nand]
channels = 8
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 8
blocks_per_plane = 2048
pages_per_block = 64
page_bytes = 4096
oob_bytes = 128
[nand.timing]
read_ns = 25000
program_ns = 200000
partial_program_ns = 200000
erase_ns = 1500000
[ftl]
gc_threshold = 0.05
"#
        }
        // In-place appends (OpenSSD Jasmine): MLC, dual-die Samsung K9LCG08U1M packages of 4096
        // blocks × 128 pages × 16 KiB; 4 channels × 2 packages (64 GB). Latencies are typical MLC
        // datasheet figures (the paper gives none): read 60 us, erase 3 ms; program 1.2 ms on
        // average over a block, split into LSB pages 0.5 ms and MSB pages 1.9 ms — the
        // LSB/MSB asymmetry of 2x-nm MLC of that generation (Grupp et al., "Characterizing
        // Flash Memory", MICRO 2009, measured MSB programs 3-4x slower than LSB ones; the
        // K9LCG08U1M datasheet itself was not available here, so these are not its figures).
        // Partial programs (appends to LSB pages in pSLC / odd-MLC mode) at LSB speed, 0.5 ms.
        // The block mode is `ftl.mlc_mode` (default "mlc": no appends).
        "openssd" => {
            r#"
[nand]
channels = 4
chips_per_channel = 2
dies_per_chip = 2
planes_per_die = 1
blocks_per_plane = 2048
pages_per_block = 128
page_bytes = 16384
oob_bytes = 512
cell = "mlc"
nop = 4
[nand.timing]
read_ns = 60000
program_ns = 500000
program_msb_ns = 1900000
partial_program_ns = 500000
erase_ns = 3000000
"#
        }
        _ => return None,
    })
}

pub fn table(name: &str) -> Result<Table, ConfigError> {
    let t = text(name).ok_or_else(|| {
        ConfigError(format!(
            "unknown preset '{name}' (known: {})",
            NAMES.join(", ")
        ))
    })?;
    t.parse::<Table>()
        .map_err(|e| ConfigError(format!("preset {name}: {e}")))
}
