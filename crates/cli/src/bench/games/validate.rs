//! `tourney bench validate`: the coordinator's check of reported games, games a second.

use std::time::Instant;

use anyhow::Result;
use tourney_plan::openings::{OpeningSettings, generate};
use tourney_rules::{GameKind, Loa};
use tourney_runner::{BuiltIn, Setup};

use crate::bench::BenchArgs;
use crate::bench::harness::play_a_b;

/// Plays typical LOA tournament games, then reads and replays them as the coordinator
/// checks reported games, for `--seconds`; prints games validated per second.
pub(crate) fn validate(args: &BenchArgs) -> Result<()> {
    use tourney_model::job::GameSettings;
    use tourney_model::{GameRecord, GameSummary};
    let settings = OpeningSettings {
        plies: 4,
        count: 100,
        seed: args.seed,
        rules: String::new(),
        balanced: None,
        judge_budget: None,
    };
    let openings = generate::<Loa>(&settings).map_err(anyhow::Error::msg)?;
    let (mut white, mut black) = (
        BuiltIn::<Loa>::new("ab:depth=1").map_err(anyhow::Error::msg)?,
        BuiltIn::<Loa>::new("ab:depth=1").map_err(anyhow::Error::msg)?,
    );
    let rules = GameSettings {
        tournament_name: "bench".into(),
        game: GameKind::Loa,
        rules: String::new(),
        time_control: tourney_model::TimeControl::Infinite,
        nodes: None,
        depth: Some(1),
        movetime_ms: None,
        max_plies: Some(300),
        adjudicate: false,
        margin_ms: 100,
        engine_limits: Default::default(),
        engine_logs: Default::default(),
        engine_openings: false,
        scale_by_speed: false,
        score_rules: Default::default(),
    };
    let searcher = tourney_model::check::Side {
        limits: None,
        reports_scores: true,
    };
    let mut records = Vec::new();
    for opening in &openings {
        let mut setup = Setup::<Loa>::from_settings(&rules)?;
        setup
            .set_opening(opening)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let record = play_a_b(&setup, &mut white, &mut black)?;
        let position = tourney_model::opening::position(opening).to_string();
        records.push((serde_json::to_string(&record)?, position));
    }
    let plies: usize = records
        .iter()
        .map(|(json, _)| serde_json::from_str::<GameRecord>(json).map_or(0, |g| g.moves.len()))
        .sum();
    let bytes: usize = records.iter().map(|(json, _)| json.len()).sum();
    let started = Instant::now();
    let mut validated = 0u64;
    while started.elapsed().as_secs_f64() < args.seconds {
        for (json, opening) in &records {
            let game: GameRecord = serde_json::from_str(json)?;
            tourney_model::check::check(&game, opening, &rules, [searcher; 2])?;
            GameSummary::of(&game).map_err(anyhow::Error::msg)?;
            // Stored as the typed record writes itself.
            serde_json::value::to_raw_value(&game)?;
            validated += 1;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "game validation (read the record, replay it on the rules core, check its clocks and \
         scores, summarise it, write it again to store it), one thread: \
         {validated} LOA games in {seconds:.2} s = {:.0} games/s ({:.0} plies and {:.0} \
         bytes of JSON a game)",
        validated as f64 / seconds,
        plies as f64 / records.len() as f64,
        bytes as f64 / records.len() as f64
    );
    Ok(())
}
