//! Whether several sources of results (the workers of a tournament) agree: fishtest's
//! test of worker homogeneity. Each source's game-pair results are a row of a contingency
//! table; a log-likelihood ratio (G) test says whether the rows could come from one
//! distribution, and each source's largest adjusted residual says how far it stands from
//! the rest.
//!
//! Results can come in strata (in a round robin, one per pairing of engines: workers are
//! compared with each other within a pairing only). The strata's statistics and degrees of
//! freedom add up; a source's residual is its largest over all strata.

/// The outcome of the test over all strata.
#[derive(Debug, Clone, PartialEq)]
pub struct Homogeneity {
    /// The G statistic (asymptotically χ² distributed under homogeneity).
    pub g: f64,
    /// Its degrees of freedom.
    pub dof: u64,
    /// The probability of a G at least this large if all sources agree (1 when there is
    /// nothing to compare: fewer than two sources, or only one kind of result).
    pub p: f64,
    /// Each source's largest absolute adjusted residual (0 for a source with no results
    /// in a stratum it shares with another source).
    pub residuals: Vec<f64>,
}

/// The homogeneity test of `sources` sources over strata, each stratum a list of
/// (source index, counts by result bin): typically pentanomial bins. A source may appear
/// in any number of strata, at most once in each.
///
/// # Panics
/// A source index is not below `sources`.
pub fn homogeneity<const BINS: usize>(
    sources: usize,
    strata: &[Vec<(usize, [u64; BINS])>],
) -> Homogeneity {
    let mut out = Homogeneity {
        g: 0.0,
        dof: 0,
        p: 1.0,
        residuals: vec![0.0; sources],
    };
    for rows in strata {
        let rows: Vec<&(usize, [u64; BINS])> = rows
            .iter()
            .filter(|(_, counts)| counts.iter().any(|&c| c > 0))
            .collect();
        if rows.len() < 2 {
            continue;
        }
        let mut columns = [0u64; BINS];
        for (_, counts) in &rows {
            for (sum, c) in columns.iter_mut().zip(counts) {
                *sum += c;
            }
        }
        let used = columns.iter().filter(|&&c| c > 0).count();
        if used < 2 {
            continue;
        }
        let total: u64 = columns.iter().sum();
        let n = total as f64;
        out.dof += (rows.len() as u64 - 1) * (used as u64 - 1);
        for (source, counts) in &rows {
            let row: u64 = counts.iter().sum();
            let row_share = row as f64 / n;
            for (&observed, &column) in counts.iter().zip(&columns) {
                if column == 0 {
                    continue;
                }
                let column_share = column as f64 / n;
                let expected = row as f64 * column_share;
                let observed = observed as f64;
                if observed > 0.0 {
                    out.g += 2.0 * observed * (observed / expected).ln();
                }
                let spread = (expected * (1.0 - row_share) * (1.0 - column_share)).sqrt();
                if spread > 0.0 {
                    let residual = ((observed - expected) / spread).abs();
                    let best = &mut out.residuals[*source];
                    *best = best.max(residual);
                }
            }
        }
    }
    if out.dof > 0 {
        out.p = chi2_sf(out.g.max(0.0), out.dof as f64);
    }
    out
}

/// The χ² survival function: P(X ≥ x) for X with `k` degrees of freedom.
pub fn chi2_sf(x: f64, k: f64) -> f64 {
    gamma_q(k / 2.0, x / 2.0)
}

/// The regularized upper incomplete gamma function Q(a, x), by its series below `a + 1`
/// and its continued fraction above (Numerical Recipes, §6.2).
fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let log_prefix = a * x.ln() - x - libm::lgamma(a);
    if x < a + 1.0 {
        let (mut term, mut sum, mut n) = (1.0 / a, 1.0 / a, a);
        for _ in 0..1000 {
            n += 1.0;
            term *= x / n;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        (1.0 - sum * log_prefix.exp()).clamp(0.0, 1.0)
    } else {
        const TINY: f64 = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..1000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let step = d * c;
            h *= step;
            if (step - 1.0).abs() < 1e-16 {
                break;
            }
        }
        (log_prefix.exp() * h).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    #[test]
    fn chi2_survival_matches_tables_and_closed_forms() {
        // Critical values from the χ² table.
        close(chi2_sf(3.841_458_820_694_124, 1.0), 0.05, 1e-12);
        close(chi2_sf(6.634_896_601_021_214, 1.0), 0.01, 1e-12);
        close(chi2_sf(9.487_729_036_781_154, 4.0), 0.05, 1e-12);
        close(chi2_sf(18.307_038_053_275_146, 10.0), 0.05, 1e-12);
        close(chi2_sf(59.341_707_143_171_3, 40.0), 0.025, 1e-10);
        // Two and four degrees of freedom have closed forms.
        for x in [0.1, 1.0, 3.0, 10.0, 50.0] {
            close(chi2_sf(x, 2.0), (-x / 2.0).exp(), 1e-14);
            close(chi2_sf(x, 4.0), (-x / 2.0).exp() * (1.0 + x / 2.0), 1e-14);
        }
        assert_eq!(chi2_sf(0.0, 3.0), 1.0);
    }

    #[test]
    fn a_two_by_two_table_gives_the_textbook_g_and_residuals() {
        // Expected 15 in every cell.
        let h = homogeneity(2, &[vec![(0, [10, 20]), (1, [20, 10])]]);
        let g = 2.0 * (20.0 * (10.0f64 / 15.0).ln() + 40.0 * (20.0f64 / 15.0).ln());
        close(h.g, g, 1e-12);
        assert_eq!(h.dof, 1);
        close(h.p, chi2_sf(g, 1.0), 1e-15);
        let residual = 5.0 / (15.0f64 * 0.25).sqrt();
        close(h.residuals[0], residual, 1e-12);
        close(h.residuals[1], residual, 1e-12);
    }

    #[test]
    fn agreeing_sources_pass_and_an_outlier_stands_out() {
        let honest = [10, 40, 100, 40, 10];
        let strata = vec![vec![
            (0, honest),
            (1, honest),
            (2, honest),
            (3, [0, 5, 40, 60, 95]),
        ]];
        let h = homogeneity(4, &strata);
        assert_eq!(h.dof, 3 * 4);
        assert!(h.p < 1e-12, "{h:?}");
        assert!(h.residuals[3] > 8.0, "{h:?}");
        assert!(h.residuals[..3].iter().all(|&r| r < h.residuals[3] / 2.0));
        let agreeing = homogeneity(3, &[strata[0][..3].to_vec()]);
        close(agreeing.g, 0.0, 1e-9);
        close(agreeing.p, 1.0, 1e-9);
    }

    #[test]
    fn strata_add_up_and_degenerate_tables_are_skipped() {
        let a = vec![(0, [5u64, 1, 0]), (1, [1, 5, 0])];
        let b = vec![(0, [2u64, 8, 0]), (1, [7, 3, 0])];
        let (ha, hb) = (
            homogeneity(2, std::slice::from_ref(&a)),
            homogeneity(2, std::slice::from_ref(&b)),
        );
        let both = homogeneity(2, &[a, b]);
        close(both.g, ha.g + hb.g, 1e-12);
        assert_eq!(both.dof, 2, "an empty column adds no freedom");
        // One source, or one kind of result, compares nothing.
        let lone = homogeneity(
            3,
            &[
                vec![(2, [3u64, 4, 5])],
                vec![(0, [0, 7, 0]), (1, [0, 2, 0])],
            ],
        );
        assert_eq!((lone.dof, lone.p, lone.g), (0, 1.0, 0.0));
    }
}
