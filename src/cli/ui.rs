//! The terminal: colour choice, the pager, and where output goes. Only the binary uses this.

use std::io::{self, IsTerminal, Write};
use std::process::{Child, Command, Stdio};

use clap::ValueEnum;
use convo::render::Theme;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// What the environment says about output, read once at start-up.
pub struct Ui {
    pub theme: Theme,
    pub quiet: bool,
    pager: Option<String>,
}

impl Ui {
    pub fn new(color: ColorChoice, no_pager: bool, quiet: bool) -> Ui {
        let tty = io::stdout().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
        let color = match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && !no_color && !dumb,
        };
        // As git: CONVO_PAGER, then PAGER, then less; empty or `cat` means none.
        let pager = if no_pager || !tty {
            None
        } else {
            let cmd =
                std::env::var("CONVO_PAGER").or_else(|_| std::env::var("PAGER")).unwrap_or_else(|_| "less".into());
            Some(cmd).filter(|c| !c.trim().is_empty() && c.trim() != "cat")
        };
        Ui { theme: Theme { color }, quiet, pager }
    }

    /// Where long output (`show`, `log`) goes: a pager on a terminal, else stdout.
    pub fn paged(&self) -> Output {
        if let Some(cmd) = &self.pager {
            let mut command = Command::new("sh");
            command.arg("-c").arg(cmd).stdin(Stdio::piped());
            if std::env::var_os("LESS").is_none() {
                // Quit if one screen, keep colour, don't clear the screen: git's defaults.
                command.env("LESS", "FRX");
            }
            if let Ok(mut child) = command.spawn()
                && let Some(stdin) = child.stdin.take()
            {
                return Output { sink: Box::new(stdin), pager: Some(child) };
            }
        }
        Output::stdout()
    }
}

/// A writer that may feed a pager, which is waited for when the output is finished.
pub struct Output {
    sink: Box<dyn Write>,
    pager: Option<Child>,
}

impl Output {
    pub fn stdout() -> Output {
        Output { sink: Box::new(io::BufWriter::new(io::stdout().lock())), pager: None }
    }

    pub fn writer(&mut self) -> &mut dyn Write {
        &mut *self.sink
    }

    /// Flush, close the pager's input and wait for the user to leave it.
    pub fn finish(mut self) -> io::Result<()> {
        let flushed = self.sink.flush();
        drop(self.sink);
        if let Some(mut child) = self.pager.take() {
            let _ = child.wait();
        }
        flushed
    }
}

/// A spinner on stderr while something slow happens (a summary being written); indicatif
/// draws nothing when stderr is not a terminal.
pub fn spinner(quiet: bool, message: String) -> Option<indicatif::ProgressBar> {
    if quiet {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

/// Ask a yes/no question on the terminal; `None` when there is no terminal to ask on.
pub fn confirm(prompt: &str) -> Option<bool> {
    if !(io::stdin().is_terminal() && io::stderr().is_terminal()) {
        return None;
    }
    dialoguer::Confirm::new().with_prompt(prompt).default(false).interact().ok()
}

/// A byte-count progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress_bar(quiet: bool, len: u64, message: String) -> Option<indicatif::ProgressBar> {
    if quiet {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template("{msg} {bar:30} {bytes}/{total_bytes} ({bytes_per_sec})")
    {
        bar.set_style(style);
    }
    bar.set_message(message);
    Some(bar)
}
