//! The host case of `commitlab bench` alone (TPC-C, 20 warehouses, wal over none, 512
//! frames), without the device bench's minutes:
//! `cargo run --release -p commitlab-world --example host_bench [-- --quick] [-- --bank | --pcm]`.
/// The same global allocator as the `commitlab` binary (docs/TOOL.md, "Commands and output").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let r = if args.iter().any(|a| a == "--bank") {
        commitlab_world::host_run::host_bank_bench(quick)
    } else if args.iter().any(|a| a == "--pcm") {
        commitlab_world::host_run::host_pcm_bench(quick)
    } else {
        commitlab_world::host_run::host_bench(quick)
    };
    match r {
        Ok(h) => {
            println!("{}", serde_json::to_string_pretty(&h).unwrap_or_default());
            println!(
                "peak RSS {} MiB",
                commitlab_world::bench::peak_rss_bytes() >> 20
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
