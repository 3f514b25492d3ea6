//! `tourney stats`: the two-player summary and the SPRT calculator.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use serde::Serialize;
use tourney_stats::{
    Cutechess, CutechessSprt, EloModel, Pentanomial, Sprt, SprtInput, SprtStatus, Summary,
    Trinomial,
};

/// Two-player statistics from result counts: Elo with its 95 % interval, LOS, nElo.
///
/// `tourney stats --wdl 120,100,80` (wins, draws, losses of the tested player) or `tourney
/// stats --penta 10,40,100,45,12` (game pairs scoring 0, ½, 1, 1½, 2 points) prints the
/// two-player summary with fishtest's conventions: Elo with its 95 % interval, nElo, LOS
/// and the draw ratio; `--cutechess` adds cutechess-cli's line, `--json` prints stable
/// field names.
///
/// `tourney stats sprt ...` is an SPRT calculator like fishtest's: the LLR, its bounds and
/// the decision (`H0 accepted`, `H1 accepted`, `continue`), with bounds as
/// `--elo0`/`--elo1` (normalized, logistic or BayesElo model) or a `--preset`.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct StatsArgs {
    #[command(subcommand)]
    command: Option<StatsCommand>,
    #[command(flatten)]
    counts: CountsArgs,
    /// Also print cutechess-cli's figures (its LOS uses wins and losses only).
    #[arg(long)]
    cutechess: bool,
    /// Print JSON with stable field names instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum StatsCommand {
    /// SPRT calculator: LLR, bounds and decision for the given results.
    ///
    /// Example: `tourney stats sprt --penta 10,40,100,45,12 --preset stc`.
    Sprt(SprtArgs),
}

/// The results, as W/D/L or as game-pair counts.
#[derive(Args)]
struct CountsArgs {
    /// Wins, draws and losses of the tested player: `W,D,L`.
    #[arg(long, value_name = "W,D,L")]
    wdl: Option<Trinomial>,
    /// Game pairs by the tested player's points 0, ½, 1, 1½, 2 (fishtest's order):
    /// `LL,LD,D,WD,WW`.
    #[arg(long, value_name = "LL,LD,D,WD,WW")]
    penta: Option<Pentanomial>,
}

#[derive(Args)]
struct SprtArgs {
    #[command(flatten)]
    counts: CountsArgs,
    /// Elo under H0.
    #[arg(long, allow_hyphen_values = true)]
    elo0: Option<f64>,
    /// Elo under H1.
    #[arg(long, allow_hyphen_values = true)]
    elo1: Option<f64>,
    /// False-positive rate.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// False-negative rate.
    #[arg(long, default_value_t = 0.05)]
    beta: f64,
    /// Scale of elo0 and elo1: normalized, logistic or bayeselo.
    #[arg(long, default_value = "normalized")]
    model: EloModel,
    /// Bounds and rates of a fishtest preset: stc (nElo 0, 2), ltc (0.5, 2.5), nonreg (-1.75, 0.25).
    #[arg(long, conflicts_with_all = ["elo0", "elo1", "model"])]
    preset: Option<String>,
    /// Also print cutechess-cli's SPRT (needs --wdl).
    #[arg(long)]
    cutechess: bool,
    /// Print JSON with stable field names instead of text.
    #[arg(long)]
    json: bool,
}

impl CountsArgs {
    fn summary(&self) -> Result<Summary> {
        match (self.wdl, self.penta) {
            (_, Some(p)) => Ok(Summary::pentanomial(p)),
            (Some(t), None) => Ok(Summary::trinomial(t)),
            (None, None) => bail!("give the results with --wdl W,D,L or --penta LL,LD,D,WD,WW"),
        }
    }
}

pub(crate) fn run(args: &StatsArgs) -> Result<ExitCode> {
    if let Some(StatsCommand::Sprt(sprt)) = &args.command {
        run_sprt(sprt)?;
        return Ok(ExitCode::SUCCESS);
    }
    let summary = args.counts.summary()?;
    let cutechess = args
        .cutechess
        .then(|| args.counts.wdl.map(Cutechess::new))
        .flatten();
    if args.cutechess && cutechess.is_none() {
        bail!("--cutechess needs --wdl (cutechess-cli works on W/D/L)");
    }
    if args.json {
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(flatten)]
            summary: &'a Summary,
            #[serde(skip_serializing_if = "Option::is_none")]
            cutechess: Option<&'a Cutechess>,
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&Out {
                summary: &summary,
                cutechess: cutechess.as_ref()
            })?
        );
    } else {
        print!("{}", summary_text(&summary));
        if let Some(c) = cutechess {
            println!("cutechess: {}", c.printed());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The summary in fastchess's style.
fn summary_text(s: &Summary) -> String {
    let mut out = String::new();
    match (s.wins, s.draws, s.losses) {
        (Some(w), Some(d), Some(l)) => {
            out += &format!("Games: {}, Wins: {w}, Draws: {d}, Losses: {l}\n", s.games)
        }
        _ => out += &format!("Games: {} ({} pairs)\n", s.games, s.games / 2),
    }
    out += &format!(
        "Elo: {:.2} +/- {:.2} [{:.2}, {:.2}], nElo: {:.2} +/- {:.2}\n",
        s.elo, s.elo_error, s.elo_lower, s.elo_upper, s.nelo, s.nelo_error
    );
    out += &format!(
        "LOS: {:.2} %, DrawRatio: {:.2} %, Score: {:.2} %\n",
        s.los * 100.0,
        s.draw_ratio * 100.0,
        s.score * 100.0
    );
    if let (Some(p), Some(ratio)) = (s.pentanomial, s.pairs_ratio) {
        out += &format!(
            "Ptnml(0-2): [{}, {}, {}, {}, {}], PairsRatio: {ratio:.2}\n",
            p[0], p[1], p[2], p[3], p[4]
        );
    }
    out
}

/// The test `stats sprt` asks for: a preset's bounds, or `--elo0` and `--elo1`, checked.
fn sprt_of(args: &SprtArgs) -> Result<Sprt> {
    let sprt = match &args.preset {
        Some(name) => Sprt {
            alpha: args.alpha,
            beta: args.beta,
            ..Sprt::preset(name).map_err(anyhow::Error::msg)?
        },
        None => {
            let (Some(elo0), Some(elo1)) = (args.elo0, args.elo1) else {
                bail!("give --elo0 and --elo1, or --preset stc|ltc|nonreg");
            };
            Sprt {
                elo0,
                elo1,
                alpha: args.alpha,
                beta: args.beta,
                model: args.model,
            }
        }
    };
    sprt.validate().map_err(anyhow::Error::msg)?;
    Ok(sprt)
}

fn run_sprt(args: &SprtArgs) -> Result<()> {
    let sprt = sprt_of(args)?;
    let input = SprtInput {
        trinomial: args.counts.wdl,
        pentanomial: args.counts.penta,
    };
    let status = sprt.status(&input).map_err(anyhow::Error::msg)?;
    let summary = args.counts.summary()?;
    let cutechess = match (args.cutechess, args.counts.wdl) {
        (false, _) => None,
        (true, Some(t)) => Some(CutechessSprt::new(
            t, sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta,
        )),
        (true, None) => bail!("--cutechess needs --wdl (cutechess-cli works on W/D/L)"),
    };
    if args.json {
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(flatten)]
            summary: &'a Summary,
            #[serde(flatten)]
            status: &'a SprtStatus,
            elo0: f64,
            elo1: f64,
            alpha: f64,
            beta: f64,
            model: EloModel,
            #[serde(skip_serializing_if = "Option::is_none")]
            cutechess: Option<&'a CutechessSprt>,
        }
        let out = Out {
            summary: &summary,
            status: &status,
            elo0: sprt.elo0,
            elo1: sprt.elo1,
            alpha: sprt.alpha,
            beta: sprt.beta,
            model: sprt.model,
            cutechess: cutechess.as_ref(),
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let scale = match sprt.model {
        EloModel::Normalized => "nElo",
        EloModel::Logistic => "Elo",
        EloModel::BayesElo => "BayesElo",
    };
    println!(
        "SPRT: {scale} [{}, {}], alpha {}, beta {}",
        sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta
    );
    println!(
        "LLR: {:.2} ({:.1}%) [{:.2}, {:.2}]",
        status.llr,
        status.llr / status.upper_bound * 100.0,
        status.lower_bound,
        status.upper_bound
    );
    println!("Decision: {}", status.decision);
    print!("{}", summary_text(&summary));
    if let Some(c) = cutechess {
        println!("cutechess: {}", c.printed());
    }
    Ok(())
}
