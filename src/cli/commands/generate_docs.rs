use std::path::{Path, PathBuf};

use clap_complete::Shell;

use crate::cli::command_error::{CommandError, Kind};

/// Write man pages and shell completions from the command definitions
///
/// Writes DIR/man/*.1 (one page per command) and DIR/completions/ for bash, zsh, fish,
/// elvish and powershell. Run `cargo run -- generate-docs .` after changing any flag; a test
/// fails while the committed files are stale.
#[derive(clap::Args)]
pub struct Args {
    /// Where to write man/ and completions/
    #[arg(default_value = ".")]
    dir: PathBuf,
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), CommandError> {
    std::fs::write(path, bytes).map_err(|e| CommandError::new(Kind::Store, format!("{}: {e}", path.display())))
}

fn mkdir(path: &Path) -> Result<(), CommandError> {
    std::fs::create_dir_all(path).map_err(|e| CommandError::new(Kind::Store, format!("{}: {e}", path.display())))
}

pub fn run(mut command: clap::Command, args: Args) -> Result<(), CommandError> {
    let man_dir = args.dir.join("man");
    let completions_dir = args.dir.join("completions");
    mkdir(&man_dir)?;
    mkdir(&completions_dir)?;
    command.build();
    let mut pages = vec![("convo".to_owned(), command.clone())];
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        pages.push((format!("convo-{}", sub.get_name()), sub.clone().name(format!("convo-{}", sub.get_name()))));
    }
    for (name, page) in pages {
        let mut bytes = Vec::new();
        clap_mangen::Man::new(page).render(&mut bytes).map_err(|e| CommandError::new(Kind::Store, e.to_string()))?;
        write(&man_dir.join(format!("{name}.1")), &bytes)?;
    }
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::Elvish, Shell::PowerShell] {
        let mut bytes = Vec::new();
        clap_complete::generate(shell, &mut command, "convo", &mut bytes);
        let file = match shell {
            Shell::Bash => "convo.bash",
            Shell::Zsh => "_convo",
            Shell::Fish => "convo.fish",
            Shell::Elvish => "convo.elv",
            _ => "_convo.ps1",
        };
        write(&completions_dir.join(file), &bytes)?;
    }
    Ok(())
}
