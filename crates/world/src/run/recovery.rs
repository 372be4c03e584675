//! The end of a run: invariants, metrics, and the timing of a recovery from a power cut at
//! the end (`run.measure_recovery`).

use super::*;

/// The end of a run: invariants, metrics, and the recovery measurement.
pub(super) fn finish(
    mut w: World,
    cfg: &Config,
    opts: &RunOptions,
    wall: std::time::Instant,
) -> Result<RunOutput, WorldError> {
    w.report_progress();
    #[cfg(debug_assertions)]
    w.device
        .check_invariants()
        .map_err(|e| WorldError::Config(format!("invariant broken at end of run: {e}")))?;
    let mut m = w.metrics(wall.elapsed().as_secs_f64());
    if cfg.run.measure_recovery && opts.image.is_none() {
        let t = std::time::Instant::now();
        let image = w.device.core.nand.image().clone();
        let nand = Nand::from_image(image, cfg.nand.timing.clone());
        let (_, rep) =
            Device::recover_with(&cfg.device(), nand, cfg.run.recovery_reads).map_err(|e| {
                WorldError::Device {
                    at: w.now,
                    request: "recovery after the run".into(),
                    error: e,
                }
            })?;
        m.recovery = Some(RecoveryMetrics {
            pages_read: rep.pages_read,
            scanned_pages: rep.scanned_pages,
            time_ns: rep.time_ns,
            had_checkpoint: rep.had_checkpoint,
        });
        m.recovery_wall_time_s = t.elapsed().as_secs_f64();
    }
    Ok(w.into_output(m))
}
