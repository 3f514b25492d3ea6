//! The dashboard in a real headless Chromium against a real `tourney coordinator` process,
//! one test binary: the New test form as it is rendered (`form`), and a rating pool's
//! chart with its ratings on `/metrics` (`pool`). Without Chromium each test returns at
//! once.

#[path = "../common/mod.rs"]
mod common;
mod form;
mod pool;
