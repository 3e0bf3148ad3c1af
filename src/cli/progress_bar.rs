//! The progress bar of `redio parity` on a terminal (indicatif): one bar per
//! operation, replacing the periodic lines batch jobs get.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

/// Installs the bar as the parity progress reporter when stderr is a
/// terminal; otherwise leaves the periodic lines.
pub fn install() {
    if !std::io::stderr().is_terminal() {
        return;
    }
    // The current bar and what it counts; a new `what` starts a new bar.
    let current: Mutex<Option<(String, ProgressBar)>> = Mutex::new(None);
    redio_parity::progress::set_reporter(Box::new(move |what, done, total| {
        let mut cur = current.lock().unwrap_or_else(|p| p.into_inner());
        if cur.as_ref().is_none_or(|(w, _)| w != what) {
            if let Some((_, old)) = cur.take() {
                old.finish();
            }
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.set_message(what.to_string());
            *cur = Some((what.to_string(), bar));
        }
        if let Some((_, bar)) = cur.as_ref() {
            bar.set_position(done);
            if done >= total {
                bar.finish();
            }
        }
    }));
}
