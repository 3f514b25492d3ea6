//! Integration tests of the rules core: perft against independent counts, differential
//! tests against OpenSpiel's move lists, one test per rule of the specification, and
//! property tests against a slow reference generator.

mod data;
mod oracle;
mod perft;
mod properties;
mod reference;
mod spec;
