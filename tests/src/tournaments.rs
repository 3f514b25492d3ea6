//! The tournament files tests play, written in one place: a two-engine match with the
//! settings a test cares about, the rest defaulted.

/// A `format = "match"` tournament file.
#[derive(Debug, Clone)]
pub struct MatchFile<'a> {
    /// Its name.
    pub name: &'a str,
    /// `loa` or `amazons`.
    pub game: &'a str,
    /// Pairs to play.
    pub pairs: u64,
    /// The `openings` table, inline.
    pub openings: &'a str,
    /// The `limits` table, inline.
    pub limits: &'a str,
    /// The `adjudication` table, inline, if any.
    pub adjudication: Option<&'a str>,
    /// The two engines: a name and a built-in player spec, `cmd:<command line>` for an
    /// outside engine, or `version:<name>` for a registered version.
    pub engines: [(&'a str, &'a str); 2],
}

impl Default for MatchFile<'_> {
    fn default() -> Self {
        MatchFile {
            name: "test-match",
            game: "loa",
            pairs: 4,
            openings: "{ plies = 2, seed = 1 }",
            limits: "{ depth = 1 }",
            adjudication: None,
            engines: [("a", "ab:depth=1"), ("b", "random")],
        }
    }
}

impl MatchFile<'_> {
    /// The file's text. Lines: 1 name, 2 game, 3 format, 4 pairs, 5 openings, 6 limits,
    /// then the adjudication line if any, then each `[[engine]]` table of three lines.
    pub fn toml(&self) -> String {
        let mut text = format!(
            "name = \"{}\"\ngame = \"{}\"\nformat = \"match\"\npairs = {}\nopenings = {}\nlimits = {}\n",
            self.name, self.game, self.pairs, self.openings, self.limits
        );
        if let Some(adjudication) = self.adjudication {
            text += &format!("adjudication = {adjudication}\n");
        }
        for (name, engine) in self.engines {
            let line = match (engine.strip_prefix("cmd:"), engine.strip_prefix("version:")) {
                (Some(command), _) => format!("command = '{command}'"),
                (_, Some(version)) => format!("version = \"{version}\""),
                _ => format!("player = \"{engine}\""),
            };
            text += &format!("[[engine]]\nname = \"{name}\"\n{line}\n");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_file_lays_out_its_lines_as_documented() {
        let text = MatchFile::default().toml();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[3], "pairs = 4");
        assert_eq!(lines[11], "player = \"random\"");
        let outside = MatchFile {
            engines: [("a", "ab"), ("x", "cmd:./engine --fast")],
            adjudication: Some("{ max_plies = 100 }"),
            ..Default::default()
        }
        .toml();
        assert!(outside.contains("adjudication = { max_plies = 100 }\n"));
        assert!(outside.ends_with("command = './engine --fast'\n"));
    }
}
