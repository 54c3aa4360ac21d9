//! The committed man pages and completions must match what the CLI definitions generate.

use std::collections::BTreeMap;
use std::path::Path;

fn read_dir(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect()
}

#[test]
fn man_pages_and_completions_are_fresh() {
    let env = crate::common::TestEnv::bare();
    let out = env.root.join("generated");
    env.run(&["generate-docs", out.to_str().unwrap()]).ok();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["man", "completions"] {
        let generated = read_dir(&out.join(dir));
        let committed = read_dir(&repo.join(dir));
        assert_eq!(
            generated.keys().collect::<Vec<_>>(),
            committed.keys().collect::<Vec<_>>(),
            "{dir}/ is stale: run `cargo run -- generate-docs .`"
        );
        for (name, bytes) in &generated {
            assert!(committed[name] == *bytes, "{dir}/{name} is stale: run `cargo run -- generate-docs .`");
        }
    }
    assert!(read_dir(&out.join("man")).contains_key("convo-append.1"));
}

/// Every page a man page refers to as `convo-…(1)` is generated (no `convo-help(1)`, and
/// `convo-config-set(1)` exists), and the exit codes are an `EXIT STATUS` section of tagged
/// paragraphs, not lines roff runs together in `EXTRA`.
#[test]
fn man_pages_refer_only_to_pages_that_exist_and_list_exit_codes() {
    let man = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let pages = read_dir(&man);
    let reference = regex::Regex::new(r"(convo(?:\\-[a-z]+)*)\(1\)").unwrap();
    for (name, bytes) in &pages {
        let text = String::from_utf8_lossy(bytes);
        for r in reference.captures_iter(&text) {
            let page = format!("{}.1", r[1].replace("\\-", "-"));
            assert!(pages.contains_key(&page), "{name} refers to {page}, which is not generated");
        }
        assert!(!text.contains(".SH EXTRA"), "{name} has an EXTRA section");
        assert!(text.contains(".SH \"EXIT STATUS\"\n.TP\n0\nsuccess\n"), "{name} has no EXIT STATUS section");
    }
    assert!(pages.contains_key("convo-config-set.1") && pages.contains_key("convo-remote-add.1"));
    let root = String::from_utf8_lossy(&pages["convo.1"]).into_owned();
    let six = root.split(".TP\n6\n").nth(1).and_then(|rest| rest.lines().next()).unwrap_or_default().to_owned();
    insta::assert_snapshot!(six, @r"a remote failed or refused: an LLM provider (connection, HTTP error, malformed answer) or a git remote (unreachable, push rejected); nothing was written");
}

/// Global flags under their own heading, after the command's own; a default said once; the
/// arguments of `remote add` described.
#[test]
fn help_puts_global_flags_under_their_own_heading() {
    let env = crate::common::TestEnv::bare();
    let out = env.run(&["fetch", "--help"]);
    insta::assert_snapshot!(env.transcript(&out), @r"
    exit 0
    --- stdout
    Download a remote's commits without changing any conversation

    Usage: convo fetch [OPTIONS] [REMOTE]

    Arguments:
      [REMOTE]  The remote's name [default: origin]

    Options:
      -h, --help     Print help
      -V, --version  Print version

    Global options:
      -C, --store <PATH>        Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)
          --color <WHEN>        When to colour output (NO_COLOR is honoured by `auto`) [default: auto]
                                [possible values: auto, always, never]
          --no-pager            Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a
                                terminal)
      -q, --quiet               Print nothing but data and errors
          --config <KEY=VALUE>  Set a config key for this run, over every file (repeatable), e.g.
                                compaction.keep_last=5
    ");
    for command in [&["remote", "add", "-h"][..], &["config", "set", "-h"]] {
        let help = env.run(command).ok().to_owned();
        let arguments = help.split("Arguments:\n").nth(1).unwrap().split("\n\n").next().unwrap();
        for line in arguments.lines() {
            assert!(line.trim().split_once("  ").is_some(), "{command:?}: argument without a description: {line}");
        }
    }
}

/// `-f` is `--file` wherever it exists (append's input); `--format` has no short flag, so
/// `import -f FILE` cannot be read as a format.
#[test]
fn short_f_means_file_in_every_command() {
    let env = crate::common::TestEnv::bare();
    let top = env.run(&["--help"]).ok().to_owned();
    let commands: Vec<String> = top
        .split("Commands:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() > 15, "{commands:?}");
    let mut with_f = Vec::new();
    for command in &commands {
        let help = env.run(&[command, "--help"]).ok().to_owned();
        if let Some(line) = help.lines().find(|l| l.trim_start().starts_with("-f,")) {
            assert!(line.contains("--file"), "`convo {command}`: -f is not --file: {line}");
            with_f.push(command.as_str());
        }
    }
    assert_eq!(with_f, ["append"]);
    let out = env.run(&["import", "-f", "jsonl", "x.jsonl"]);
    assert_eq!(out.code, 2, "{out:?}");
}

/// The README's first command: the demo prints each command as it would be typed (quoted),
/// and finds the binary where cargo built it, so it runs with CARGO_TARGET_DIR set. A stand-in
/// `cargo` reports the test's binary, as the real one would report its target directory.
#[test]
fn demo_quotes_its_commands_and_honours_cargo_target_dir() {
    let env = crate::common::TestEnv::bare();
    let bin = env.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let cargo = bin.join("cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\necho '{{\"reason\":\"compiler-artifact\",\"executable\":\"{}\"}}'\n",
            env!("CARGO_BIN_EXE_convo")
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo.sh");
    let mut cmd = env.sealed("bash");
    cmd.arg(demo)
        .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
        .env("CARGO_TARGET_DIR", env.root.join("elsewhere"))
        .env("CONVO_DIR", &env.store)
        .env_remove("CONVO_NOW");
    let out = crate::common::run_command(cmd, "");
    assert_eq!(out.code, 0, "{out:?}");
    let commands: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("$ ")).collect();
    insta::assert_snapshot!(commands.join("\n"), @"
    $ convo init
    $ convo new --title 'fix login for long passwords'
    $ head -n 8 examples/login-bug.jsonl | convo append
    $ tail -n +9 examples/login-bug.jsonl | convo append
    $ convo append --user 'Thanks, ship it.'
    $ convo list
    $ convo show --brief
    $ convo compact --dry-run --keep-last 1
    $ convo compact --keep-last 1
    $ convo show --compacted --brief
    $ convo diff --compacted --stat
    $ convo log --oneline
    $ convo fsck
    ");
}

/// The committed bash script, run by bash as at a TAB, completes conversation ids (with
/// their titles beside them in shells that show help) and one-word titles, asking the
/// `convo` on PATH; flags still come from the clap definition.
#[test]
fn completions_offer_conversation_ids_and_titles() {
    let env = crate::common::TestEnv::new();
    let first = env.new_conversation("first");
    let second = env.new_conversation("second one");
    let bin = env.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_convo"), bin.join("convo")).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/convo.bash");
    let complete = |words: &[&str]| {
        let line = words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" ");
        let program = format!(
            "source {}; COMP_WORDS=({line}); COMP_CWORD={}; _clap_complete_convo convo {} {}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display(),
            words.len() - 1,
            words[words.len() - 1],
            words[words.len() - 2],
        );
        let mut cmd = env.sealed("bash");
        cmd.args(["-c", &program])
            .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
            .env("CONVO_DIR", &env.store);
        crate::common::run_command(cmd, "").ok().to_owned()
    };
    let ids = complete(&["convo", "show", "01"]);
    assert_eq!(ids.lines().collect::<Vec<_>>(), [first.as_str(), second.as_str()], "{ids}");
    insta::assert_snapshot!(complete(&["convo", "log", "fi"]), @"first");
    insta::assert_snapshot!(complete(&["convo", "fork", "--la"]), @"--last");
}

/// The README's first command builds convo for minutes on a fresh machine: the demo says so
/// before the build and lets cargo show its progress, rather than sit silent.
#[test]
fn the_demo_says_it_is_building_before_the_first_build() {
    let script = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo.sh")).unwrap();
    let said = script.find("demo: building convo first").expect("the demo announces its first build");
    let built = script.find("cargo build").expect("the demo builds convo");
    assert!(said < built, "the announcement comes before the build");
    let build_line = script[built..].lines().next().unwrap();
    assert!(!build_line.contains("--quiet"), "cargo's progress is shown: {build_line}");
}
