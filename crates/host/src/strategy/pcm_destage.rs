//! PCMLogging's cost-based adaptive destaging policy (PCMLogging §5.2), as pure functions.
//!
//! The PCM is split into segments; state k ≤ M means k segments of the M free ones at the
//! start of destaging are used, state M+i means pending writes exceed PCM by i segments.
//! Birth rates λ_k = f(k)·λ0 (k < M), f(M)·λ0 beyond; death rates μ_k = g(k)·μ0 (k < M),
//! μ_max beyond. With ρ = λ0/μ0 and a = λ_M/μ_max (< 1), Eq. (4)–(6) give the stationary
//! distribution and Eq. (1) the destaging cost; μ0 = λ0/ρ for the ρ of a grid over (0, 1)
//! that minimises the cost (the paper's "interval of 0.001").
//!
//! Worth knowing when reading results: by the birth-death balance μ_{k-1}P_k = λ_{k-1}P_{k-1},
//! Eq. (1) equals Σ_k λ_k P_k, the mean arrival rate; with f ≡ 1 it is λ0 for every ρ and
//! the optimum is a tie (the grid's first point, the most aggressive destaging, wins). Only
//! a measured f(k) that varies with occupancy makes the choice non-trivial.
//!
//! Not here: measuring λ0 and f(k) at run time and applying μ0 to the destager.

/// The product Π_{i<k} f(i)/g(i) · ρ^k for k = 0..=M.
fn weights(rho: f64, f: &[f64], g: &[f64]) -> Vec<f64> {
    let m = g.len();
    let mut w = Vec::with_capacity(m + 1);
    let mut acc = 1.0;
    w.push(acc);
    for i in 0..m {
        acc *= f[i] / g[i] * rho;
        w.push(acc);
    }
    w
}

/// P0 and the cost of Eq. (1) at `rho`, for `f` of length M+1 and `g` of length M ≥ 1.
/// None when the overflow states do not drain (a = f(M)·λ0/μ_max ≥ 1) or inputs are bad.
pub fn cost_at(rho: f64, lambda0: f64, f: &[f64], g: &[f64], mu_max: f64) -> Option<(f64, f64)> {
    let m = g.len();
    if m == 0 || f.len() != m + 1 || !(rho > 0.0 && rho < 1.0) || lambda0 <= 0.0 || mu_max <= 0.0 {
        return None;
    }
    if g.iter().any(|&x| x <= 0.0) || f.iter().any(|&x| x < 0.0) {
        return None;
    }
    let a = f[m] * lambda0 / mu_max;
    if a >= 1.0 {
        return None;
    }
    let w = weights(rho, f, g);
    let p0 = 1.0 / (w.iter().sum::<f64>() + w[m] * a / (1.0 - a));
    let mu0 = lambda0 / rho;
    let mut cost = 0.0;
    for k in 1..=m {
        cost += g[k - 1] * mu0 * p0 * w[k];
    }
    cost += mu_max * p0 * w[m] * a / (1.0 - a);
    Some((p0, cost))
}

/// The grid point ρ = step, 2·step, … < 1 of least cost, with μ0 = λ0/ρ and the cost.
pub fn optimal_mu0(
    lambda0: f64,
    f: &[f64],
    g: &[f64],
    mu_max: f64,
    step: f64,
) -> Option<(f64, f64, f64)> {
    if !(step > 0.0 && step < 1.0) {
        return None;
    }
    let mut best: Option<(f64, f64, f64)> = None;
    let n = (1.0 / step).ceil() as u64;
    for i in 1..n {
        let rho = i as f64 * step;
        if rho >= 1.0 {
            break;
        }
        let (_, c) = cost_at(rho, lambda0, f, g, mu_max)?;
        if best.is_none_or(|b| c < b.2 - 1e-12) {
            best = Some((rho, lambda0 / rho, c));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    // Hand computations, M = 1, λ0 = 1, μ_max = 4, g = [1].
    // f = [1, 2]: a = 1/2, P0 = 1/(1 + ρ + ρ) = 1/(1+2ρ), cost = μ0·P1 + μmax·P1·a/(1-a)
    //   = (1/ρ)(ρ P0) + 4 ρ P0 = (1 + 4ρ)/(1 + 2ρ); at ρ = 0.5: 3/2.
    #[test]
    fn cost_by_hand_rising_f() {
        let (p0, c) = cost_at(0.5, 1.0, &[1.0, 2.0], &[1.0], 4.0).unwrap();
        assert!((p0 - 0.5).abs() < 1e-12);
        assert!((c - 1.5).abs() < 1e-12);
        // Cost rises with ρ: the most aggressive grid point wins.
        let (rho, mu0, c) = optimal_mu0(1.0, &[1.0, 2.0], &[1.0], 4.0, 0.001).unwrap();
        assert!((rho - 0.001).abs() < 1e-12);
        assert!((mu0 - 1000.0).abs() < 1e-6);
        assert!((c - 1.004 / 1.002).abs() < 1e-9);
    }

    // f = [1, 0.5]: a = 1/8, P0 = 1/(1 + ρ + ρ/7) = 7/(7 + 8ρ), cost = P0 (1 + 4ρ/7)
    //   = (7 + 4ρ)/(7 + 8ρ): falls with ρ, so the laziest grid point wins; at ρ = 0.5: 9/11.
    #[test]
    fn cost_by_hand_falling_f() {
        let (p0, c) = cost_at(0.5, 1.0, &[1.0, 0.5], &[1.0], 4.0).unwrap();
        assert!((p0 - 7.0 / 11.0).abs() < 1e-12);
        assert!((c - 9.0 / 11.0).abs() < 1e-12);
        let (rho, _, _) = optimal_mu0(1.0, &[1.0, 0.5], &[1.0], 4.0, 0.001).unwrap();
        assert!((rho - 0.999).abs() < 1e-9);
    }

    #[test]
    fn constant_f_costs_lambda0_everywhere_and_bad_inputs_are_refused() {
        for rho in [0.1, 0.5, 0.9] {
            let (_, c) = cost_at(rho, 3.0, &[1.0, 1.0, 1.0], &[1.0, 1.0], 10.0).unwrap();
            assert!((c - 3.0).abs() < 1e-9, "{c}");
        }
        assert!(cost_at(0.5, 1.0, &[1.0, 5.0], &[1.0], 4.0).is_none()); // a >= 1
        assert!(cost_at(0.5, 1.0, &[1.0], &[1.0], 4.0).is_none());
        assert!(cost_at(1.0, 1.0, &[1.0, 1.0], &[1.0], 4.0).is_none());
        assert!(optimal_mu0(1.0, &[1.0, 1.0], &[1.0], 4.0, 0.0).is_none());
    }
}
