//! Helpers shared by the integration tests (a module of each test binary that declares `mod support;`).

pub mod logs;
