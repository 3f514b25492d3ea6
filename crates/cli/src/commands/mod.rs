//! One module per command of `tourney`: its arguments and what it does.

pub(crate) mod archive;
pub(crate) mod cancel;
pub(crate) mod check_engine;
pub(crate) mod coordinator;
pub(crate) mod engine;
pub(crate) mod exclude;
pub(crate) mod export;
pub(crate) mod health;
pub(crate) mod legal;
pub(crate) mod machines;
pub(crate) mod openings;
pub(crate) mod perft;
pub(crate) mod play;
pub(crate) mod ratings;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod resume;
pub(crate) mod run;
pub(crate) mod stats;
pub(crate) mod status;
pub(crate) mod store;
pub(crate) mod submit;
pub(crate) mod timeline;
pub(crate) mod user;
pub(crate) mod version;
pub(crate) mod worker;
