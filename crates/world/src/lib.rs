//! The world: builds a device and a workload from one `Config` and seed, runs them on one
//! event queue, and reports the metrics. No global state: everything hangs off a `World`.

pub mod bench;
pub mod config;
pub mod config_doc;
pub mod host_image;
pub mod host_run;
pub mod hostlog;
pub mod metrics;
pub mod presets;
pub mod run;
pub mod usage;

pub use config::{Config, ConfigError, ConfigSource, WorkloadKind};
pub use hostlog::HostEvent;
pub use metrics::RunMetrics;
pub use run::{
    build_device, build_driver, config_of_image, deterministic_json, prefill, prefill_key, run,
    run_prefilled, Prefilled, RunOptions, RunOutput, World, WorldError,
};
