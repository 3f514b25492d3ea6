//! The coordinator's adapters to the network: the gRPC services, the web dashboard with its
//! JSON API, the status view both show, the token checks, and the server that puts them
//! on one port.

pub mod artifacts;
pub mod auth;
pub mod dashboard;
pub mod safety;
pub mod server;
pub mod service;
pub mod throttle;
pub mod view;
pub mod web;
