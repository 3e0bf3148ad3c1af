//! redio's coordination protocols (Böhm & Engelmann 2012, section IV.A) and
//! checksum voting, written as pure logic over two traits: a link between
//! the replicas of one logical rank and a file back end.
//!
//! This crate is deliberately empty until the interposition layer lands
//! (issue 3): the protocols are written against the traits that layer
//! defines, and tested over an in-memory link.
