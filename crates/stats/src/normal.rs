//! The standard normal distribution.

/// `z` with Φ(z) = 0.975: the half-width factor of a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The standard normal cumulative distribution function Φ.
pub fn phi(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// The inverse of Φ (the quantile function), accurate to double precision on (0, 1);
/// −∞ at 0, +∞ at 1, NaN outside.
pub fn phi_inv(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    // Acklam's rational approximation (relative error 1.15e-9), then two Halley steps on
    // the exact Φ bring it to full precision.
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const LOW: f64 = 0.024_25;
    let mut x = if p < LOW {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    for _ in 0..2 {
        // Work in the tail that keeps precision.
        let e = if x < 0.0 {
            phi(x) - p
        } else {
            (1.0 - p) - phi(-x)
        };
        let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
        x -= u / (1.0 + x * u / 2.0);
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_known_values() {
        assert!((phi_inv(0.975) - Z95).abs() < 1e-14);
        assert!((phi_inv(0.025) + Z95).abs() < 1e-14);
        assert_eq!(phi_inv(0.5), 0.0);
        assert!((phi(1.0) - 0.841_344_746_068_542_9).abs() < 1e-15);
        for p in [1e-12, 1e-5, 0.01, 0.3, 0.7, 0.99, 1.0 - 1e-9] {
            assert!((phi(phi_inv(p)) - p).abs() < 1e-14 * p.max(1e-3), "{p}");
        }
    }
}
