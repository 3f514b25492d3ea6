//! `tourney replay`: a stored game an engine lost by failing, played again against a local
//! engine up to the failing ply, to see what the engine does there (or, for a game that
//! ended otherwise, up to its last move, compared with the move played).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use tourney_ai::Heuristics;
use tourney_model::tournament::TournamentConfig;
use tourney_model::version::EngineVersion;
use tourney_model::{GameRecord, Termination};
use tourney_proto::v1 as pb;
use tourney_rules::{Color, Game, Position, with_position};
use tourney_runner::Contestant;
use tourney_runner::dialect::Dialect;
use tourney_runner::protocol::{Command, Go, parse_command};

use crate::support::local::AdminTarget;

/// Lines of the recorded transcript shown before the replay.
const RECORDED_LINES_SHOWN: usize = 20;

/// Play a stored game again against a local engine, up to the ply where an engine failed,
/// and show what the engine does there.
///
/// Fetches the game, shows the last lines of the failing side's recorded protocol
/// transcript, starts the engine (its recorded command, with its uploaded program from the
/// host cache or fetched from the coordinator; its build from source from the host cache;
/// `tourney engine SPEC` for a built-in player; or `--engine`, e.g. a debug build) in the
/// protocol the tournament gave it, replays the moves up to the failing ply (`--ply` for
/// another one), sends the same `go` (from the transcript, else the record's limits, or
/// `--go`) and shows the protocol and the answer: a legal move and its time against the
/// budget (exit 0), or the failure again (exit 1). A game that did not end by a failing
/// move (by the rules, adjudication, time) is replayed up to its last move, and the
/// answer is compared with the move played there.
///
/// Example: `tourney replay 3 117 1 --engine "./build/engine"`.
#[derive(Args, Clone)]
pub(crate) struct ReplayArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament id.
    id: u64,
    /// The pair.
    pair: u64,
    /// The game of the pair: 0 or 1.
    game: usize,
    /// The engine to ask (a command line; default: the failing side's own: its command as
    /// recorded, or `tourney engine SPEC` for a built-in player).
    #[arg(long)]
    engine: Option<String>,
    /// The plies to replay before the engine is asked for a move (default: the ply where
    /// the game ended, the failing move; for a game that ended otherwise, the ply before
    /// its last move). A ply at or past the game's end is refused.
    #[arg(long)]
    ply: Option<usize>,
    /// The `go` to send (default: the last `go` of the recorded transcript, else the
    /// record's per-move limits, else `movetime 1000`), e.g. `--go "movetime 200"`.
    #[arg(long)]
    go: Option<String>,
    /// How long to wait for the answer, seconds (default: the go's time and a second, or
    /// 60 without one).
    #[arg(long)]
    wait: Option<f64>,
    /// The protocol the engine speaks, as a tournament file's `protocol` writes it (default:
    /// the engine's `protocol` in the tournament's file or its registered version's, else
    /// the one its recorded transcript shows, else tourney's), e.g. `--protocol
    /// uci:pieces=Ll,turn=wb`.
    #[arg(long, value_parser = parse_protocol)]
    protocol: Option<Dialect>,
    /// The host cache where workers keep uploaded programs and builds from source
    /// (default: a worker's default, or `DATA/artifacts` with `--data`).
    #[arg(long, value_name = "DIR")]
    cache: Option<std::path::PathBuf>,
}

fn parse_protocol(text: &str) -> Result<Dialect, String> {
    text.parse()
}

/// The protocol a recorded transcript shows by what the runner sent first (`uci`, `ugi` then
/// `uginewgame` or `newgame`, GTP's `protocol_version`, CodinGame's board size); `None` for
/// none. Options such as a program's letters are not seen: `--protocol` says them.
fn recorded_protocol(transcript: &[String]) -> Option<Dialect> {
    let sent: Vec<&str> = transcript
        .iter()
        .filter_map(|l| l.split_once(" > ").map(|(_, line)| line.trim()))
        .take(8)
        .collect();
    let word = |w: &str| sent.iter().any(|l| l.split_whitespace().next() == Some(w));
    let name = match sent.first()? {
        &"uci" => "uci",
        &"ugi" if word("uginewgame") => "ugi",
        &"ugi" => "tourney",
        first if first.starts_with("protocol_version") || word("boardsize") => "gtp",
        first if first.parse::<u32>().is_ok() => "codingame",
        _ => return None,
    };
    name.parse().ok()
}

/// Runs `tourney replay`.
///
/// # Errors
/// The game cannot be fetched or replayed, or the engine fails again (exit status 1).
pub(crate) fn run(args: &ReplayArgs) -> Result<ExitCode> {
    if args.game > 1 {
        bail!("game {}: a pair has games 0 and 1", args.game);
    }
    let args = args.clone();
    crate::support::engines::until_stopped(move || {
        let (record, command, protocol) = crate::support::admin::block_on(async {
            let record = fetch_game(&args).await?;
            let mover = with_position!(record.game, P => {
                position_at::<P>(&record, args.ply).map(|(game, _)| game.position().turn())
            })?;
            let side = match mover {
                Color::White => &record.white,
                Color::Black => &record.black,
            };
            let command = engine_command(&args, side).await?;
            let protocol = match args.protocol {
                Some(protocol) => Some(protocol),
                None => tournament_protocol(&args, &side.name).await,
            };
            anyhow::Ok((record, command, protocol))
        })??;
        with_position!(record.game, P => replay_game::<P>(&args, &record, &command, protocol))
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The most plies replayed before the engine is asked for a move: all of a game lost by a
/// failing move (the engine is asked the move it failed at), all but the last of one that
/// ended otherwise (it is asked the last move played, to compare); past them the game had
/// ended.
fn last_ply(record: &GameRecord) -> Result<usize> {
    let played = record.moves.len();
    if record.termination.is_failure() {
        return Ok(played);
    }
    played.checked_sub(1).with_context(|| {
        format!(
            "the game ended by {} before any move: there is no move to replay",
            record.termination
        )
    })
}

/// The game of `record` after its first `ply` moves (by default the [`last_ply`]), and
/// that ply.
fn position_at<P: Heuristics>(record: &GameRecord, ply: Option<usize>) -> Result<(Game<P>, usize)> {
    let start: P = (record.start.parse())
        .map_err(|e| anyhow::anyhow!("the record's start '{}': {e}", record.start))?;
    let rules: P::Rules = (record.rules.parse())
        .map_err(|e| anyhow::anyhow!("the record's rules '{}': {e}", record.rules))?;
    let last = last_ply(record)?;
    let ply = ply.unwrap_or(last);
    if ply > last {
        let played = record.moves.len();
        match record.termination.is_failure() {
            true => bail!(
                "--ply {ply}: the game has {played} plies; the last ply to replay is {last} \
                 (where it ended by {})",
                record.termination
            ),
            false => bail!(
                "--ply {ply}: the game ended by {} after {played} plies, so no move was asked \
                 there; the last ply to replay is {last} (asking for its last move, {})",
                record.termination,
                record.moves[last].mv
            ),
        }
    }
    let mut game = Game::new(start, rules);
    for (i, m) in record.moves[..ply].iter().enumerate() {
        game.play_text(&m.mv)
            .map_err(|e| anyhow::anyhow!("ply {}: the record's move '{}': {e}", i + 1, m.mv))?;
    }
    Ok((game, ply))
}

/// The moves that reach the record's start from the standard one, as the engines were told
/// them (`position startpos moves …`); none when the record keeps none.
fn start_path<P: Heuristics>(record: &GameRecord) -> Result<Vec<P::Move>> {
    let Some(text) = record.meta.get(tourney_runner::referee::START_MOVES) else {
        return Ok(Vec::new());
    };
    let text = text.to_string();
    let mut position = P::start();
    let mut path = Vec::new();
    for word in text.split_whitespace() {
        let mv = (position.parse_move(word).ok())
            .with_context(|| format!("the record's start_moves: '{word}' is not a move there"))?;
        position = (position.play(mv).ok())
            .with_context(|| format!("the record's start_moves: '{word}' is not legal there"))?;
        path.push(mv);
    }
    Ok(path)
}

/// The command line that runs the replayed side's engine as its record says: `--engine`;
/// a recorded command, its uploaded program taken from the host cache or fetched from the
/// coordinator when its recorded path is not here; a build from source from the host
/// cache; or `tourney engine SPEC` for a built-in player.
async fn engine_command(args: &ReplayArgs, side: &tourney_model::PlayerRecord) -> Result<String> {
    let cache = (args.cache.clone()).unwrap_or_else(|| args.client.host_cache());
    if let Some(command) = &args.engine {
        return Ok(command.clone());
    }
    if let Some(command) = side.spec.strip_prefix("cmd:") {
        let words = tourney_model::source::split_command(command);
        let Some(sha) = side.artifact.as_deref() else {
            return Ok(command.to_string());
        };
        // The program the record names by its hash: the recorded path while it still holds
        // it, else the host cache's copy, else the coordinator's.
        let is_it = |path: &std::path::Path| {
            std::fs::File::open(path)
                .and_then(tourney_model::sha256_of_reader)
                .is_ok_and(|hash| hash == sha)
        };
        if words
            .first()
            .is_some_and(|p| is_it(std::path::Path::new(p)))
        {
            return Ok(command.to_string());
        }
        let program = cache.join("programs").join(sha);
        if !is_it(&program) {
            let url = args.client.coordinator_url().await?;
            let fetcher = tourney_worker::Fetcher::new(
                &format!("{}/artifacts/", url.trim_end_matches('/')),
                args.client.client.ca()?.as_deref(),
            );
            (fetcher.fetch_into(sha, &program, &side.name).await)
                .with_context(|| format!("fetching {}'s program {sha}", side.name))?;
        }
        let rest: Vec<String> = words.into_iter().skip(1).collect();
        return Ok(tourney_worker::command_line(&program, &rest));
    }
    if side.spec.starts_with("git:") {
        let program = tourney_worker::cached_build(&cache, &side.spec).with_context(|| {
            format!(
                "{} ({}) is not built in the host cache {}: replay on a worker host that                  played it, give that worker's --cache with --cache, or give --engine",
                side.name,
                side.spec,
                cache.display()
            )
        })?;
        return Ok(tourney_worker::command_line(&program, &[]));
    }
    let exe = std::env::current_exe().context("finding this program")?;
    Ok(format!("\"{}\" engine \"{}\"", exe.display(), side.spec))
}

/// The protocol the tournament gave engine `name`: its `protocol` in the tournament's file,
/// or a registered version's (resolved as the coordinator resolves it; a version added to
/// a rating pool later is named as the version); `None` when it names none (a built-in
/// player, tourney's by default) or the file cannot be had.
async fn tournament_protocol(args: &ReplayArgs, name: &str) -> Option<Dialect> {
    use crate::support::refusal::reply;
    let mut admin = args.client.admin().await.ok()?;
    let got = reply(admin.get_file(pb::GetFileRequest { id: args.id }))
        .await
        .ok()?;
    let config = TournamentConfig::parse(&got.config, &got.file).ok()?;
    let in_file = config.engines.iter().any(|e| e.name == name);
    let mut versions: Vec<EngineVersion> = Vec::new();
    if (!in_file || config.engines.iter().any(|e| e.version.is_some()))
        && let Ok(list) = reply(admin.list_versions(pb::ListVersionsRequest {})).await
    {
        versions = list.versions.into_iter().map(Into::into).collect();
    }
    engine_protocol(config, &versions, name)
}

/// Engine `name`'s protocol in `config`, its versions resolved from `versions` (an unknown
/// one, removed since, left unresolved), or, for an engine not in the file (a pool's
/// member that joined as it ran), the version of that name's.
fn engine_protocol(
    mut config: TournamentConfig,
    versions: &[EngineVersion],
    name: &str,
) -> Option<Dialect> {
    let _ = config.resolve_versions(|v| versions.iter().find(|x| x.name == v).cloned());
    let protocol = match config.engines.iter().find(|e| e.name == name) {
        Some(engine) => engine.protocol.as_deref(),
        None => versions
            .iter()
            .find(|v| v.name == name)?
            .protocol
            .as_deref(),
    };
    protocol?.parse().ok()
}

/// Game `args.game` of the pair, from the coordinator's export.
async fn fetch_game(args: &ReplayArgs) -> Result<GameRecord> {
    let mut admin = args.client.admin().await?;
    let request = pb::ExportRequest {
        id: args.id,
        from_pair: Some(args.pair),
        to_pair: Some(args.pair),
        engine: String::new(),
        since_ms: None,
    };
    let mut lines = Vec::new();
    crate::support::admin::export(&mut admin, request, |chunk| {
        lines.extend(chunk.lines);
        Ok(())
    })
    .await?;
    let line = lines.get(args.game).with_context(|| {
        format!(
            "tournament {} has no pair {} with a game {} (it has {} games there)",
            args.id,
            args.pair,
            args.game,
            lines.len()
        )
    })?;
    crate::support::records::record_of_line(line).context("reading the stored game")
}

/// The `go` of a transcript line (`12.345 > go wtime 1000 ...`).
fn go_of_line(line: &str) -> Option<Go> {
    let (_, sent) = line.split_once(" > ")?;
    match parse_command(sent)? {
        Command::Go(go) => Some(go),
        _ => None,
    }
}

/// The go to send: as asked, the recorded one, the record's per-move limits, or a second.
fn go_for(args: &ReplayArgs, record: &GameRecord, transcript: &[String]) -> Result<Go> {
    if let Some(text) = &args.go {
        return match parse_command(&format!("go {text}")) {
            Some(Command::Go(go)) => Ok(go),
            _ => bail!("--go '{text}': not a go command (e.g. \"movetime 200\")"),
        };
    }
    if let Some(go) = transcript.iter().rev().find_map(|l| go_of_line(l)) {
        return Ok(go);
    }
    let limits: Vec<(&str, &str)> = (record.time_control.split([',', ';', ' ']))
        .filter_map(|part| part.split_once('='))
        .collect();
    let number = |key: &str| {
        limits
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v.parse::<u64>().ok())
    };
    let mut go = Go {
        nodes: number("nodes"),
        depth: number("depth").map(|d| d as u32),
        movetime: number("movetime"),
        ..Go::default()
    };
    if go == Go::default() {
        go.movetime = Some(1000);
    }
    Ok(go)
}

fn replay_game<P: Heuristics>(
    args: &ReplayArgs,
    record: &GameRecord,
    command: &str,
    protocol: Option<Dialect>,
) -> Result<()> {
    let (game, ply) = position_at::<P>(record, args.ply)?;
    let rules = game.rules();
    let mover = game.position().turn();
    let side = match mover {
        Color::White => &record.white,
        Color::Black => &record.black,
    };
    say_recorded(args, record, side, ply);
    let recorded = &side.transcript;
    let go = go_for(args, record, recorded)?;
    let (budget, wait) = time_budget(args, &go, mover);
    let protocol = protocol
        .or_else(|| recorded_protocol(recorded))
        .unwrap_or_default();
    say!(
        "\nReplaying {ply} plies with `{command}` ({protocol}), {mover} to move, then: {}",
        Command::Go(go.clone())
    );
    // The options it played with, unless another engine is asked.
    let options = match args.engine {
        Some(_) => Vec::new(),
        None => side.options.clone().into_iter().collect(),
    };
    let mut engine = crate::support::engines::own_engine(command, protocol, options);
    let start_path = start_path::<P>(record)?;
    Contestant::<P>::new_game(&mut engine, rules, 0, &start_path)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("starting `{command}`"))?;
    let started = Instant::now();
    let answer = Contestant::<P>::go(&mut engine, &game, &go, wait);
    let took = started.elapsed();
    say!("\nProtocol now:");
    for line in Contestant::<P>::transcript(&engine) {
        say!("  {line}");
    }
    let within = budget.map_or(String::new(), |b| {
        let verdict = if took <= b { "within" } else { "over" };
        format!(" ({verdict} the {:.3} s it had)", b.as_secs_f64())
    });
    let outcome = match answer {
        Ok(reply) => match game.clone().play_text(&reply.mv) {
            Ok(_) => {
                say!(
                    "\nAnswer: {} (legal) in {:.3} s{within}",
                    reply.mv,
                    took.as_secs_f64()
                );
                if let Some(played) = record.moves.get(ply) {
                    say!("{}", compared(&game, &reply.mv, &played.mv));
                }
                None
            }
            Err(e) => Some((Termination::IllegalMove, format!("'{}': {e}", reply.mv))),
        },
        Err(failure) => Some((failure.termination, failure.detail)),
    };
    Contestant::<P>::abandon(&mut engine);
    match outcome {
        None => Ok(()),
        Some((termination, detail)) => bail!(
            "the engine failed again: {termination} after {:.3} s{within}: {detail}",
            took.as_secs_f64()
        ),
    }
}

/// How `answer` compares with the move `played` in the game at that point.
fn compared<P: Position>(game: &Game<P>, answer: &str, played: &str) -> String {
    let parsed = |text: &str| game.position().parse_move(text).ok();
    match parsed(answer).is_some() && parsed(answer) == parsed(played) {
        true => format!("The game had the same move there: {played}."),
        false => format!("The game had another move there: {played}."),
    }
}

/// Says which game is replayed and how it ended, and what was recorded of `side`'s engine
/// (its protocol's last lines, or its stderr).
fn say_recorded(
    args: &ReplayArgs,
    record: &GameRecord,
    side: &tourney_model::PlayerRecord,
    ply: usize,
) {
    let recorded = &side.transcript;
    say!(
        "Tournament {}, pair {}, game {}: {} (White) vs {} (Black), {} by {}{}",
        args.id,
        args.pair,
        args.game,
        record.white.name,
        record.black.name,
        record.result,
        record.termination,
        record
            .detail
            .as_deref()
            .map_or(String::new(), |d| format!(": {d}"))
    );
    if !record.termination.is_failure() {
        let asked = (record.moves.get(ply)).map_or(String::new(), |m| format!(" ({})", m.mv));
        say!(
            "(the game did not end by an engine failure: replaying {ply} plies and asking for \
             the move the game had next{asked}, to compare)"
        );
    }
    if !recorded.is_empty() {
        let from = recorded.len().saturating_sub(RECORDED_LINES_SHOWN);
        say!(
            "\nRecorded protocol of {} (last {} of {} lines; seconds since the game began, > sent, < received, ! stderr):",
            side.name,
            recorded.len() - from,
            recorded.len()
        );
        for line in &recorded[from..] {
            say!("  {line}");
        }
    } else if !side.stderr.is_empty() {
        say!("\nRecorded stderr of {}:", side.name);
        for line in &side.stderr {
            say!("  {line}");
        }
    }
}

/// The time the engine had for its move (`movetime`, or its clock), and how long it is
/// waited for: `--wait`, else a second more than it had (60 s without a limit).
fn time_budget(args: &ReplayArgs, go: &Go, mover: Color) -> (Option<Duration>, Duration) {
    let budget = [
        go.movetime,
        if mover == Color::White {
            go.wtime
        } else {
            go.btime
        },
    ]
    .into_iter()
    .flatten()
    .min()
    .map(Duration::from_millis);
    let wait = args.wait.map_or_else(
        || budget.map_or(Duration::from_secs(60), |b| b + Duration::from_secs(1)),
        Duration::from_secs_f64,
    );
    (budget, wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_go_comes_from_the_transcript_or_the_limits() {
        let go = go_of_line("12.345 > go wtime 900 btime 1200 winc 10 binc 10").unwrap();
        assert_eq!(
            (go.wtime, go.btime, go.winc),
            (Some(900), Some(1200), Some(10))
        );
        assert_eq!(go_of_line("12.345 < bestmove a1-b2"), None);
        assert_eq!(go_of_line("12.345 > position startpos"), None);
    }

    #[test]
    fn the_protocol_is_read_from_what_the_runner_sent_first() {
        let of = |lines: &[&str]| {
            let transcript: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            recorded_protocol(&transcript).map(|d| d.to_string())
        };
        let uci = ["0.001 > uci", "0.040 < uciok", "0.041 > ucinewgame"];
        assert_eq!(of(&uci).as_deref(), Some("uci"));
        let ugi = ["0.001 > ugi", "0.002 < ugiok", "0.003 > uginewgame"];
        assert_eq!(of(&ugi).as_deref(), Some("ugi"));
        let own = ["0.001 > ugi", "0.002 < ugiok", "0.003 > newgame loa"];
        assert_eq!(of(&own).as_deref(), Some("tourney"));
        let gtp = ["0.001 > protocol_version", "0.002 < = 2"];
        assert_eq!(of(&gtp).as_deref(), Some("gtp"));
        let codingame = ["0.001 > 8", "0.001 > b"];
        assert_eq!(of(&codingame).as_deref(), Some("codingame"));
        assert_eq!(of(&["0.001 ! segfault"]), None, "nothing sent");
    }

    #[test]
    fn a_pools_later_member_speaks_its_versions_protocol() {
        let pool = "name = \"p\"\ngame = \"loa\"\nformat = \"pool\"\nlimits = { nodes = 1 }\n\
                    [[engine]]\nversion = \"b1\"\n[[engine]]\nversion = \"b2\"\n";
        let config = TournamentConfig::parse(pool, "p.toml").unwrap();
        let version = |name: &str, protocol: Option<&str>| EngineVersion {
            name: name.into(),
            command: protocol.map(|_| "./engine".into()),
            player: protocol.is_none().then(|| "random".into()),
            protocol: protocol.map(Into::into),
            ..Default::default()
        };
        let versions = [
            version("b1", None),
            version("b2", None),
            version("joined", Some("ugi")),
        ];
        let of =
            |name: &str| engine_protocol(config.clone(), &versions, name).map(|d| d.to_string());
        assert_eq!(
            of("joined").as_deref(),
            Some("ugi"),
            "not in the file: its version's"
        );
        assert_eq!(
            of("b1"),
            None,
            "a built-in player speaks no protocol of its own"
        );
        assert_eq!(of("nobody"), None);
    }
}
