//! A game's protocol, both ways with the time of each line, bounded: the first and the
//! last lines kept, those between counted.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The most bytes of a game's protocol a [`Transcript`] keeps: the first lines up to a
/// quarter of it, then the last lines; those between are counted, not kept.
pub(crate) const TRANSCRIPT_BYTES: usize = tourney_model::MAX_TRANSCRIPT_BYTES;

/// The longest line a transcript keeps (a longer one is cut, its length said).
pub(super) const TRANSCRIPT_LINE_BYTES: usize = 1024;

/// Which way a transcript line went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// To the engine.
    Sent,
    /// From the engine's stdout.
    Received,
    /// From the engine's stderr.
    Stderr,
}

/// One game's protocol with an engine, both ways, with the time of each line since the
/// game began: its first lines (the handshake, the first moves) and its last ones (where
/// it went wrong), at most [`TRANSCRIPT_BYTES`] in all.
#[derive(Debug)]
pub(super) struct Transcript {
    pub(super) origin: Instant,
    head: Vec<(Duration, Direction, String)>,
    tail: VecDeque<(Duration, Direction, String)>,
    head_bytes: usize,
    tail_bytes: usize,
    left_out: u64,
}

impl Default for Transcript {
    fn default() -> Self {
        Transcript {
            origin: Instant::now(),
            head: Vec::new(),
            tail: VecDeque::new(),
            head_bytes: 0,
            tail_bytes: 0,
            left_out: 0,
        }
    }
}

impl Transcript {
    /// Starts again for a new game.
    pub(super) fn restart(&mut self) {
        *self = Transcript::default();
    }

    /// Keeps `line`, which went `direction` now.
    pub(super) fn note(&mut self, direction: Direction, mut line: String) {
        self.note_at(Instant::now(), direction, line_cut(&mut line));
    }

    pub(super) fn note_at(&mut self, at: Instant, direction: Direction, line: String) {
        let entry = (at.saturating_duration_since(self.origin), direction, line);
        let size = entry.2.len() + 16;
        if self.tail.is_empty() && self.head_bytes + size <= TRANSCRIPT_BYTES / 4 {
            self.head_bytes += size;
            self.head.push(entry);
            return;
        }
        self.tail_bytes += size;
        self.tail.push_back(entry);
        while self.tail_bytes > TRANSCRIPT_BYTES - TRANSCRIPT_BYTES / 4 {
            let Some((_, _, gone)) = self.tail.pop_front() else {
                break;
            };
            self.tail_bytes -= gone.len() + 16;
            self.left_out += 1;
        }
    }

    /// The transcript as the record keeps it, one line each: seconds since the game began,
    /// `>` (to the engine), `<` (from it) or `!` (its stderr), and the text; `stderr` (with
    /// the time each line came) is merged in by time.
    pub(super) fn lines(&self, stderr: &[(Instant, String)]) -> Vec<String> {
        let gap_at = self.tail.front().map_or(Duration::ZERO, |e| e.0);
        fn kept(entry: &(Duration, Direction, String)) -> (Duration, Option<Direction>, &str) {
            (entry.0, Some(entry.1), entry.2.as_str())
        }
        let mut entries: Vec<(Duration, Option<Direction>, &str)> =
            self.head.iter().map(kept).collect();
        if self.left_out > 0 {
            entries.push((gap_at, None, ""));
        }
        entries.extend(self.tail.iter().map(kept));
        entries.extend(
            (stderr.iter())
                .filter(|(at, _)| *at >= self.origin)
                .map(|(at, text)| {
                    let since = at.duration_since(self.origin);
                    (since, Some(Direction::Stderr), text.as_str())
                }),
        );
        // Stable: lines of the same moment stay in the order they were kept.
        entries.sort_by_key(|e| e.0);
        entries
            .into_iter()
            .map(|(at, direction, text)| {
                let mark = match direction {
                    None => return format!("… {} lines left out …", self.left_out),
                    Some(Direction::Sent) => '>',
                    Some(Direction::Received) => '<',
                    Some(Direction::Stderr) => '!',
                };
                format!("{:.3} {mark} {text}", at.as_secs_f64())
            })
            .collect()
    }
}

/// `line` cut to [`TRANSCRIPT_LINE_BYTES`] (on a character boundary), its length said.
pub(super) fn line_cut(line: &mut String) -> String {
    if line.len() > TRANSCRIPT_LINE_BYTES {
        let full = line.len();
        let mut end = TRANSCRIPT_LINE_BYTES;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
        line.push_str(&format!(" … ({full} bytes)"));
    }
    std::mem::take(line)
}

/// Why an engine ended (`why`), with the end of what it wrote to stderr (a missing
/// script, a missing library): its last three lines, each cut to
/// [`super::STDERR_REASON_CHARS`] characters. The reason a tournament is paused with, and
/// what `check-engine`'s failed check says.
pub(super) fn with_stderr_tail(why: String, stderr: &[(Instant, String)]) -> String {
    let tail: Vec<String> = stderr[stderr.len().saturating_sub(3)..]
        .iter()
        .map(|(_, line)| line.chars().take(super::STDERR_REASON_CHARS).collect())
        .collect();
    match tail.is_empty() {
        true => why,
        false => format!("{why}; its stderr ends: {}", tail.join(" | ")),
    }
}
