//! One module per command of `tourney`: its arguments and `run`, which does it and says
//! with which exit status it ends.

pub(crate) mod approve;
pub(crate) mod archive;
pub(crate) mod cancel;
pub(crate) mod check_engine;
pub(crate) mod clone;
pub(crate) mod coordinator;
pub(crate) mod data;
pub(crate) mod engine;
pub(crate) mod events;
pub(crate) mod exclude;
pub(crate) mod export;
pub(crate) mod health;
pub(crate) mod legal;
pub(crate) mod link;
pub(crate) mod machines;
pub(crate) mod modify;
pub(crate) mod note;
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
pub(crate) mod tune;
pub(crate) mod user;
pub(crate) mod version;
pub(crate) mod whoami;
pub(crate) mod worker;
