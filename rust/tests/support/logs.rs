//! The crate's log lines, captured for the tests that check what it warns about (and that no key
//! material reaches a line): one `log` logger per test binary, installed once.

use std::sync::{Mutex, Once};

static LINES: Mutex<Vec<(log::Level, String)>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.target().starts_with("mrtr_state")
    }
    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            LINES
                .lock()
                .unwrap()
                .push((record.level(), record.args().to_string()));
        }
    }
    fn flush(&self) {}
}

static CAPTURE: Capture = Capture;

/// Capture the crate's log lines (targets `mrtr_state...`, level Info and above) from now on.
pub fn capture_logs() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        log::set_logger(&CAPTURE).unwrap();
        log::set_max_level(log::LevelFilter::Info);
    });
}

/// The lines captured at `level` that contain `needle`.
pub fn logged(needle: &str, level: log::Level) -> Vec<String> {
    LINES
        .lock()
        .unwrap()
        .iter()
        .filter(|(l, line)| *l == level && line.contains(needle))
        .map(|(_, line)| line.clone())
        .collect()
}
