//! Home of tourney's end-to-end tests (`tests/`), of the `misbehave` test engine, and of
//! the helpers end-to-end tests share: git repositories ([`git`]), loopback HTTP ([`http`]), our server processes on
//! ports they bind themselves ([`process`]), a coordinator served in the test itself
//! ([`served`]), the tournament files tests play
//! ([`tournaments`]), a small WebDriver client for browser tests ([`webdriver`]) and the
//! one way tests wait for what they expect ([`wait`]).

pub mod git;
pub mod http;
pub mod process;
pub mod served;
pub mod tournaments;
pub mod wait;
pub mod webdriver;
