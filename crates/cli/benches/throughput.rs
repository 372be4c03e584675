//! `cargo bench`: the same measurement as `commitlab bench` (4 KiB random writes, device 90 %
//! full, GC active, tag mode), on the 2 GiB cut by default and on the 32 GiB TxFlash preset
//! with `COMMITLAB_BENCH_FULL=1`. Prints NAND operations and host writes per CPU-second and
//! the peak RSS; the targets (5 M NAND ops per CPU-second, 2 GiB RSS) are reported against.

fn main() {
    let full = std::env::var("COMMITLAB_BENCH_FULL").is_ok_and(|v| v == "1");
    match world::bench::run_bench(!full) {
        Ok(b) => {
            println!("{}", serde_json::to_string_pretty(&b).unwrap_or_default());
            let ops_ok = b.nand_ops_per_cpu_s >= 5e6;
            let rss_ok = b.peak_rss_bytes <= 2 << 30;
            println!(
                "target 5M NAND ops per CPU-second: {} ({:.2}M); target RSS <= 2 GiB: {} ({:.0} MiB)",
                if ops_ok { "met" } else { "NOT met" },
                b.nand_ops_per_cpu_s / 1e6,
                if rss_ok { "met" } else { "NOT met" },
                b.peak_rss_bytes as f64 / (1u64 << 20) as f64
            );
        }
        Err(e) => {
            eprintln!("bench failed: {e}");
            std::process::exit(1);
        }
    }
}
