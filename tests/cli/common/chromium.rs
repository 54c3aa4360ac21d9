//! Headless Chromium (Debian's `chromium`, which `.ci/test` installs) for the tests that
//! look at a page as a browser shows it: the HTML export's files and `convo serve`'s pages.
//! Each run has its own profile under the test's root, the network services Chromium starts
//! by itself off, and virtual time, so the page's script and its fetches run to the end
//! before the DOM is dumped or the screenshot taken.

use std::path::Path;
use std::process::{Command, Output};

use super::TestEnv;

/// Chromium, headless, on `url`, doing `what` (`--dump-dom`, or a screenshot).
pub fn chromium(env: &TestEnv, url: &str, what: &[String]) -> Output {
    let profile = env.root.join(format!("chromium-profile-{}", std::process::id()));
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--virtual-time-budget=5000",
        ])
        .args(what)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .output()
        .expect("chromium runs (apt install chromium; .ci/test installs it)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// The DOM of `url` after its script ran.
pub fn dom(env: &TestEnv, url: &str) -> String {
    String::from_utf8(chromium(env, url, &["--dump-dom".into()]).stdout).unwrap()
}

/// A screenshot of `url` in light and in dark mode, at `window` (`WIDTH,HEIGHT`): real PNGs
/// of some size, the two not alike (the pages follow `prefers-color-scheme`), kept under
/// `target/tmp/FOLDER/` for a person to look at.
pub fn screenshots(env: &TestEnv, url: &str, name: &str, folder: &str, window: &str) {
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join(folder);
    std::fs::create_dir_all(&keep).unwrap();
    let mut shots = Vec::new();
    // Blink's preferredColorScheme: 0 is dark, 1 light.
    for (scheme, setting) in [("light", 1), ("dark", 0)] {
        let png = env.root.join(format!("{name}-{scheme}.png"));
        chromium(
            env,
            url,
            &[
                format!("--screenshot={}", png.display()),
                format!("--window-size={window}"),
                format!("--blink-settings=preferredColorScheme={setting}"),
            ],
        );
        let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{} is a PNG", png.display());
        assert!(bytes.len() > 20_000, "{} is more than a blank page: {} bytes", png.display(), bytes.len());
        std::fs::copy(&png, keep.join(format!("{name}-{scheme}.png"))).unwrap();
        shots.push(bytes);
    }
    assert_ne!(shots[0], shots[1], "{name}: dark mode looks different from light");
}
