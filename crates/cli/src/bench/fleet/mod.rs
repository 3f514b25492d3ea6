//! Benchmarks of the coordinator and its fleet: leases and reports, a cluster, floods of
//! reports, the dashboard's pages, fleet shares, the store, artifacts and builds.

pub(super) mod artifacts;
pub(super) mod cluster;
pub(super) mod coordinator;
pub(super) mod flood;
pub(super) mod pages;
pub(super) mod share;
pub(super) mod source;
pub(super) mod store;
