//! Home of tourney's end-to-end tests (`tests/`) and of the `misbehave` test engine.
