//! The public statistics vectors (`vectors_public.json`): 7 case types × 40 cases, with
//! fishtest, cutechess and textbook expectations.

use serde_json::Value;
use tourney_stats::{
    Cutechess, CutechessSprt, EloModel, Pentanomial, Plain, Sprt, SprtInput, Summary, Trinomial,
    decide, fishtest_draw_elo, gsprt, legacy_llr, wald_bounds,
};

use crate::oracle::{Checker, load};

fn cases(kind: &str) -> Vec<Value> {
    load("vectors_public.json")["cases"][kind]
        .as_array()
        .unwrap()
        .clone()
}

fn trinomial(input: &Value) -> Option<Trinomial> {
    input.get("wins").map(|_| Trinomial {
        wins: input["wins"].as_u64().unwrap(),
        draws: input["draws"].as_u64().unwrap(),
        losses: input["losses"].as_u64().unwrap(),
    })
}

fn pentanomial(input: &Value) -> Option<Pentanomial> {
    input.get("pentanomial").map(|p| {
        let v: Vec<u64> = p
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        Pentanomial {
            bins: v.try_into().unwrap(),
        }
    })
}

fn state(decision: tourney_stats::Decision) -> &'static str {
    match decision {
        tourney_stats::Decision::AcceptH1 => "accepted",
        tourney_stats::Decision::AcceptH0 => "rejected",
        tourney_stats::Decision::Continue => "",
    }
}

#[test]
fn trinomial_elo_matches_fishtest_cutechess_and_textbook() {
    let mut c = Checker::new();
    for case in cases("trinomial_elo") {
        let t = trinomial(&case["input"]).unwrap();
        let f = &case["expected"]["fishtest"];
        let s = Summary::trinomial(t);
        c.num(&case, "elo", s.elo, &f["elo"]);
        c.num(&case, "elo95", s.elo_error, &f["elo95"]);
        c.num(&case, "los", s.los, &f["los"]);
        c.num(&case, "draw_ratio", s.draw_ratio, &f["draw_ratio"]);
        c.num(&case, "nelo", s.nelo, &f["nelo"]);
        c.num(&case, "nelo_lower", s.nelo - s.nelo_error, &f["nelo_lower"]);
        c.num(&case, "nelo_upper", s.nelo + s.nelo_error, &f["nelo_upper"]);
        c.num(&case, "score", s.score, &f["score"]);
        c.num(
            &case,
            "stdev_per_game",
            s.stdev_per_game,
            &f["stdev_per_game"],
        );

        let e = &case["expected"]["cutechess"];
        let cc = Cutechess::new(t);
        c.num(&case, "cutechess.diff", cc.diff, &e["diff"]);
        c.num(
            &case,
            "cutechess.errorMargin",
            cc.error_margin,
            &e["errorMargin"],
        );
        c.num(&case, "cutechess.LOS", cc.los, &e["LOS"]);
        c.num(&case, "cutechess.drawRatio", cc.draw_ratio, &e["drawRatio"]);
        c.num(
            &case,
            "cutechess.pointRatio",
            cc.point_ratio,
            &e["pointRatio"],
        );
        c.text(&case, "cutechess.printed", &cc.printed(), &e["printed"]);

        let e = &case["expected"]["plain"];
        let p = Plain::trinomial(t);
        c.num(&case, "plain.score", p.score, &e["score"]);
        c.num(&case, "plain.elo", p.elo, &e["elo"]);
        c.num(&case, "plain.elo95", p.elo_error, &e["elo95"]);
        c.num(&case, "plain.los", p.los, &e["los"]);
        c.num(&case, "plain.nelo", p.nelo, &e["nelo"]);
        c.num(&case, "plain.nelo95", p.nelo_error, &e["nelo95"]);
        c.num(&case, "plain.draw_ratio", p.draw_ratio, &e["draw_ratio"]);
        c.num(
            &case,
            "plain.stdev_per_game",
            p.stdev_per_game,
            &e["stdev_per_game"],
        );
    }
    c.finish("trinomial_elo");
}

#[test]
fn pentanomial_elo_matches_fishtest_and_textbook() {
    let mut c = Checker::new();
    for case in cases("pentanomial_elo") {
        let p = pentanomial(&case["input"]).unwrap();
        let f = &case["expected"]["fishtest"];
        let s = Summary::pentanomial(p);
        c.num(&case, "elo", s.elo, &f["elo"]);
        c.num(&case, "elo95", s.elo_error, &f["elo95"]);
        c.num(&case, "los", s.los, &f["los"]);
        c.num(&case, "nelo", s.nelo, &f["nelo"]);
        c.num(&case, "nelo95", s.nelo_error, &f["nelo95"]);
        c.num(&case, "score", s.score, &f["score"]);
        c.num(
            &case,
            "pair_draw_ratio",
            s.draw_ratio,
            &f["pair_draw_ratio"],
        );
        c.num(
            &case,
            "pairs_ratio",
            s.pairs_ratio.unwrap(),
            &f["pairs_ratio"],
        );
        c.num(
            &case,
            "stdev_per_game",
            s.stdev_per_game,
            &f["stdev_per_game"],
        );

        let e = &case["expected"]["plain"];
        let q = Plain::pentanomial(p);
        c.num(&case, "plain.score", q.score, &e["score"]);
        c.num(&case, "plain.elo", q.elo, &e["elo"]);
        c.num(&case, "plain.elo95", q.elo_error, &e["elo95"]);
        c.num(&case, "plain.los", q.los, &e["los"]);
        c.num(&case, "plain.nelo", q.nelo, &e["nelo"]);
        c.num(&case, "plain.nelo95", q.nelo_error, &e["nelo95"]);
        c.num(
            &case,
            "plain.pair_draw_ratio",
            q.draw_ratio,
            &e["pair_draw_ratio"],
        );
        c.num(
            &case,
            "plain.stdev_per_game",
            q.stdev_per_game,
            &e["stdev_per_game"],
        );
    }
    c.finish("pentanomial_elo");
}

#[test]
fn sprt_bounds_match() {
    let mut c = Checker::new();
    for case in cases("sprt_bounds") {
        let i = &case["input"];
        let (lower, upper) = wald_bounds(i["alpha"].as_f64().unwrap(), i["beta"].as_f64().unwrap());
        c.num(&case, "lower", lower, &case["expected"]["lower"]);
        c.num(&case, "upper", upper, &case["expected"]["upper"]);
    }
    c.finish("sprt_bounds");
}

#[test]
fn cutechess_sprt_matches() {
    let mut c = Checker::new();
    for case in cases("sprt_cutechess") {
        let i = &case["input"];
        let e = &case["expected"];
        let f = |k: &str| i[k].as_f64().unwrap();
        let s = CutechessSprt::new(
            trinomial(i).unwrap(),
            f("elo0"),
            f("elo1"),
            f("alpha"),
            f("beta"),
        );
        c.num(&case, "llr", s.llr, &e["llr"]);
        c.num(&case, "lower", s.lower_bound, &e["lower"]);
        c.num(&case, "upper", s.upper_bound, &e["upper"]);
        c.num(&case, "drawelo", s.drawelo, &e["drawelo"]);
        c.num(&case, "scale", s.scale, &e["scale"]);
        c.num(&case, "bayeselo0", s.bayeselo0, &e["bayeselo0"]);
        c.num(&case, "bayeselo1", s.bayeselo1, &e["bayeselo1"]);
        let result = match s.decision {
            tourney_stats::Decision::AcceptH1 => "AcceptH1",
            tourney_stats::Decision::AcceptH0 => "AcceptH0",
            tourney_stats::Decision::Continue => "Continue",
        };
        c.text(&case, "result", result, &e["result"]);
        c.text(&case, "printed", &s.printed(), &e["printed"]);
    }
    c.finish("sprt_cutechess");
}

fn check_gsprt(kind: &str, model: EloModel) {
    let mut c = Checker::new();
    for case in cases(kind) {
        let i = &case["input"];
        let e = &case["expected"];
        let f = |k: &str| i[k].as_f64().unwrap();
        let sprt = Sprt {
            elo0: f("elo0"),
            elo1: f("elo1"),
            alpha: f("alpha"),
            beta: f("beta"),
            model,
        };
        let input = SprtInput {
            trinomial: trinomial(i),
            pentanomial: pentanomial(i),
        };
        let status = sprt.status(&input).unwrap();
        c.num(&case, "llr", status.llr, &e["llr"]);
        c.num(&case, "lower", status.lower_bound, &e["lower"]);
        c.num(&case, "upper", status.upper_bound, &e["upper"]);
        c.text(&case, "state", state(status.decision), &e["state"]);
    }
    c.finish(kind);
}

#[test]
fn gsprt_logistic_matches_fishtest() {
    check_gsprt("gsprt_logistic", EloModel::Logistic);
}

#[test]
fn gsprt_normalized_matches_fishtest() {
    check_gsprt("gsprt_normalized", EloModel::Normalized);
}

#[test]
fn fishtest_bayeselo_sprt_matches() {
    let mut c = Checker::new();
    for case in cases("sprt_fishtest_bayeselo") {
        let i = &case["input"];
        let e = &case["expected"];
        let f = |k: &str| i[k].as_f64().unwrap();
        let t = trinomial(i).unwrap();
        let drawelo = fishtest_draw_elo(t);
        c.num(&case, "drawelo", drawelo, &e["drawelo"]);
        c.num(
            &case,
            "logistic_elo0",
            tourney_stats::elo::bayeselo_to_elo(f("elo0"), drawelo),
            &e["logistic_elo0"],
        );
        c.num(
            &case,
            "logistic_elo1",
            tourney_stats::elo::bayeselo_to_elo(f("elo1"), drawelo),
            &e["logistic_elo1"],
        );
        let sprt = Sprt {
            elo0: f("elo0"),
            elo1: f("elo1"),
            alpha: f("alpha"),
            beta: f("beta"),
            model: EloModel::BayesElo,
        };
        let input = SprtInput {
            trinomial: Some(t),
            pentanomial: pentanomial(i),
        };
        let status = sprt.status(&input).unwrap();
        c.num(&case, "llr", status.llr, &e["llr"]);
        c.num(&case, "lower", status.lower_bound, &e["lower"]);
        c.num(&case, "upper", status.upper_bound, &e["upper"]);
        c.text(
            &case,
            "state",
            state(decide(status.llr, status.lower_bound, status.upper_bound)),
            &e["state"],
        );
        let tri = SprtInput {
            trinomial: Some(t),
            pentanomial: None,
        };
        c.num(
            &case,
            "llr_trinomial",
            sprt.llr(&tri).unwrap(),
            &e["llr_trinomial"],
        );
        c.num(
            &case,
            "llr_legacy_trinomial",
            legacy_llr(f("elo0"), f("elo1"), t.bins()),
            &e["llr_legacy_trinomial"],
        );
        let _ = gsprt;
    }
    c.finish("sprt_fishtest_bayeselo");
}
