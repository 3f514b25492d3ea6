//! Tests as the coordinator runs them: submitted (intake), acted on by people (actions),
//! through their life (lifecycle), their pairs reported and committed, tuning runs, data
//! generation and its data sets, rating pools, the versions they play, and what their
//! standings and progress say.

pub mod actions;
pub(crate) mod commit;
pub(crate) mod datagen;
pub(crate) mod datasets;
pub(crate) mod history;
pub(crate) mod intake;
pub(crate) mod lifecycle;
pub(crate) mod pools;
pub(crate) mod progress;
pub(crate) mod reporting;
pub mod search_again;
pub(crate) mod standings;
pub(crate) mod tuning;
pub(crate) mod versions;
