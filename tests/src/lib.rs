//! Home of tourney's end-to-end tests (`tests/`), of the `misbehave` test engine, and of
//! the helpers end-to-end tests share: loopback HTTP ([`http`]) and a small WebDriver
//! client for browser tests ([`webdriver`]).

pub mod http;
pub mod webdriver;
