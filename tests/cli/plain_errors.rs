//! No-ops are not errors, and errors are convo's: one line saying what and where, `hint:`
//! lines saying what to do, never an OS or git message alone; a pager that cannot start
//! never loses the output; and the exit codes are the ones documented.

use std::process::Command;

use crate::common::{TestEnv, run_command};

#[test]
fn undo_with_nothing_to_undo_says_so_and_succeeds() {
    let env = TestEnv::new();
    env.new_conversation("plain");
    env.run(&["append", "--user", "hi"]).ok();
    let before = env.snapshot();
    let run = env.run(&["compact", "--undo"]);
    insta::assert_snapshot!(env.transcript(&run), @"
    exit 0
    --- stderr
    nothing to undo: no compaction in force in this conversation
    ");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn os_errors_on_input_get_context_and_a_hint() {
    let env = TestEnv::new();
    env.new_conversation("input");
    env.run(&["append", "--user", "hi"]).ok();
    let before = env.snapshot();
    let folder = env.root.join("sessions");
    std::fs::create_dir_all(&folder).unwrap();
    let import = env.run(&["import", folder.to_str().unwrap()]);
    insta::assert_snapshot!(env.transcript(&import), @r#"
    exit 3
    --- stderr
    error: [ROOT]/sessions: no .jsonl session files in it
    hint: a folder of sessions is, say, ~/.claude/projects or ~/.codex/sessions
    "#);
    let bad = env.root.join("bad.jsonl");
    std::fs::write(&bad, b"{\"type\":\"user\",\"content\":\"ok\"}\n{\"type\":\"user\",\"content\":\"caf\xe9\"}\n")
        .unwrap();
    let file = env.run(&["append", "--file", bad.to_str().unwrap()]);
    insta::assert_snapshot!(env.transcript(&file), @"
    exit 3
    --- stderr
    error: [ROOT]/bad.jsonl line 2: not valid UTF-8 (byte 30 of the line)
    hint: nothing was written; events are UTF-8 JSON: convert the input first, e.g. with iconv
    ");
    let mut cmd = env.command(&["append"]);
    cmd.stdin(std::fs::File::open(&bad).unwrap());
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr.starts_with("error: stdin line 2: not valid UTF-8 (byte 30 of the line)\n"), "{stderr}");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn remote_errors_are_convos_own_with_gits_whole_reason() {
    let env = TestEnv::new();
    env.new_conversation("remote");
    env.run(&["append", "--user", "hi"]).ok();
    let missing = env.root.join("missing.git");
    env.run(&["remote", "add", "origin", missing.to_str().unwrap()]).ok();
    let before = env.snapshot();
    let again = env.run(&["remote", "add", "origin", "/elsewhere"]);
    insta::assert_snapshot!(env.transcript(&again), @"
    exit 3
    --- stderr
    error: a remote named `origin` already exists ([ROOT]/missing.git)
    hint: `convo remote set-url origin URL` changes it; `convo remote` lists them
    ");
    let push = env.run(&["push"]);
    insta::assert_snapshot!(env.transcript(&push), @"
    exit 6
    --- stderr
    error: git push: '[ROOT]/missing.git' does not appear to be a git repository; Could not read from remote repository. (Please make sure you have the correct access rights and the repository exists.)
    hint: `convo remote` lists the remotes and their URLs; `convo remote set-url NAME URL` changes one
    ");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn a_pager_that_cannot_start_leaves_the_output_on_the_terminal() {
    let env = TestEnv::new();
    env.new_conversation("paged");
    env.run(&["append", "--user", "read me through a pager"]).ok();
    // `script` gives convo a terminal, so it starts a pager.
    let mut cmd = env.sealed("script");
    let convo = env!("CARGO_BIN_EXE_convo");
    cmd.args(["-qec", &format!("{convo} show"), "/dev/null"])
        .env("CONVO_DIR", &env.store)
        .env("PAGER", "/nonexistent/pager")
        .env("TERM", "dumb");
    let run = run_command(cmd, "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("read me through a pager"), "{run:?}");
    assert!(
        run.stdout.contains("warning: cannot run the pager `/nonexistent/pager`: not found; writing directly"),
        "{run:?}"
    );
}

#[test]
fn a_read_only_store_is_named_as_such() {
    let env = TestEnv::new();
    env.new_conversation("ro");
    // A read-only bind mount of the store, in a user and mount namespace of its own.
    let convo = env!("CARGO_BIN_EXE_convo");
    let store = env.store.display().to_string();
    let script = format!("mount --bind -o ro {store} {store} && exec {convo} append --user x");
    let probe = Command::new("unshare").args(["-rm", "true"]).status();
    if !probe.is_ok_and(|s| s.success()) {
        // No unprivileged user namespaces (a container, AppArmor's restriction).
        return crate::common::skip_or_fail("CONVO_SKIP_UNSHARE", "`unshare -rm` is not available here");
    }
    let mut cmd = env.sealed("unshare");
    cmd.args(["-rm", "sh", "-c", &script]).env("CONVO_DIR", &env.store);
    let before = env.snapshot();
    let run = run_command(cmd, "");
    insta::assert_snapshot!(env.transcript(&run), @"
    exit 5
    --- stderr
    error: cannot write the store: [ROOT]/store/.git/convo/lock: Read-only file system (os error 30)
    hint: it is on a read-only file system: reading works, writing needs a writable copy (`convo clone`)
    ");
    assert_eq!(env.snapshot(), before);
}

/// README's exit-status table is `convo --help`'s, line for line.
#[test]
fn exit_codes_are_documented_the_same_everywhere() {
    let env = TestEnv::bare();
    let help = env.run(&["--help"]).ok().to_owned();
    let table = help.split_once("Exit status:\n").expect("--help has the table").1;
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme.split_once("### Exit status\n\n```text\n").expect("README has the table").1;
    let section = section.split_once("```").unwrap().0;
    assert_eq!(section.trim_end(), table.trim_end());
}

/// A git error says what convo was doing, then gix's error and its causes as `Caused by:`
/// lines (as jj prints them), never flattened into one message.
#[test]
fn a_git_error_keeps_its_causes_as_caused_by_lines() {
    let env = TestEnv::new();
    let id = env.new_conversation("damaged");
    env.run(&["append", "--user", "hello"]).ok();
    // HEAD's tree, made unreadable on disk.
    let tree = env.git(&["rev-parse", "HEAD^{tree}"]);
    let tree = tree.trim();
    let object = env.store.join(".git/objects").join(&tree[..2]).join(&tree[2..]);
    assert!(object.exists(), "the tree is a loose object");
    let mut permissions = std::fs::metadata(&object).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o644);
    std::fs::set_permissions(&object, permissions).unwrap();
    std::fs::write(&object, b"not zlib at all").unwrap();
    // Caches would answer without reading the tree.
    let _ = std::fs::remove_dir_all(env.store.join(".git/convo"));
    let run = env.run(&["show", &id, "--format", "jsonl"]);
    let stderr = run.fails_with(5);
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines[0].starts_with("error: git: read tree "), "{stderr}");
    assert!(lines[1].starts_with("Caused by:"), "{stderr}");
    assert!(
        !lines[0].contains("zlib") && !lines[0].contains("decompress"),
        "the cause is not in the message: {stderr}"
    );
}
