//! A store is recognisable: `convo init` and `convo clone` mark the repository
//! (`convo.version` in its `.git/config`), a store from an older convo (a tree of convo's
//! paths only) is still taken and marked by its next write, and any other git repository, or
//! a store of a format this convo does not know, is refused by every command with nothing
//! written to it.

use std::path::Path;
use std::process::Command;

use crate::common::{TestEnv, bare};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A code repository with one commit, at the env's store path (CONVO_DIR).
fn code_repository(env: &TestEnv) {
    std::fs::create_dir_all(env.store.join("src")).unwrap();
    std::fs::write(env.store.join("src/main.rs"), "fn main() {}\n").unwrap();
    git(&env.store, &["init", "--quiet", "--initial-branch=main"]);
    git(&env.store, &["add", "."]);
    git(&env.store, &["commit", "--quiet", "-m", "code"]);
}

#[test]
fn another_git_repository_is_refused_by_every_command_and_left_unchanged() {
    let env = TestEnv::bare();
    code_repository(&env);
    let before = env.snapshot();
    let refused = env.run(&["new", "-t", "x"]);
    insta::assert_snapshot!(env.transcript(&refused), @r"
    exit 4
    --- stderr
    error: [ROOT]/store is a git repository but not a convo store (its tree holds `src`)
    hint: convo writes only to stores `convo init` made, never onto another repository's branch
    hint: point --store (or CONVO_DIR) at a store, or create one in a new folder: `convo init PATH`
    ");
    let store = env.store.display().to_string();
    let session = env.root.join("session.jsonl");
    std::fs::write(&session, r#"{"messages":[{"role":"user","content":"hi"}]}"#).unwrap();
    for args in [
        vec!["-C", store.as_str(), "new", "-t", "x"],
        vec!["list"],
        vec!["append", "--user", "x"],
        vec!["import", session.to_str().unwrap()],
        vec!["config", "set", "--layer", "store", "compaction.keep_last", "5"],
        vec!["remote", "add", "origin", "/nowhere"],
        vec!["fsck"],
    ] {
        let run = env.run(&args);
        assert_eq!(run.code, 4, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("is a git repository but not a convo store"), "{args:?}: {}", run.stderr);
    }
    let init = env.run(&["init"]);
    insta::assert_snapshot!(env.transcript(&init), @r"
    exit 4
    --- stderr
    error: [ROOT]/store is a git repository but not a convo store (its tree holds `src`)
    hint: convo writes only to stores `convo init` made, never onto another repository's branch
    hint: point --store (or CONVO_DIR) at a store, or create one in a new folder: `convo init PATH`
    ");
    assert_eq!(env.snapshot(), before, "a refused command changed the repository");
}

#[test]
fn init_takes_an_empty_git_repository_and_refuses_one_with_files() {
    let env = TestEnv::bare();
    std::fs::create_dir_all(&env.store).unwrap();
    git(&env.store, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(env.store.join("notes.txt"), "mine\n").unwrap();
    let before = env.snapshot();
    let refused = env.run(&["init"]);
    insta::assert_snapshot!(env.transcript(&refused), @r"
    exit 4
    --- stderr
    error: [ROOT]/store is a git repository but not a convo store (it holds `notes.txt`)
    hint: convo writes only to stores `convo init` made, never onto another repository's branch
    hint: point --store (or CONVO_DIR) at a store, or create one in a new folder: `convo init PATH`
    ");
    assert_eq!(env.snapshot(), before);
    std::fs::remove_file(env.store.join("notes.txt")).unwrap();
    assert_eq!(env.run(&["init"]).ok(), format!("Initialized empty convo store in {}\n", env.store.display()));
    env.new_conversation("taken");
    assert_eq!(git(&env.store, &["config", "convo.version"]), "1\n");
}

#[test]
fn a_store_from_before_the_marker_is_taken_and_marked_by_its_next_write() {
    let env = TestEnv::new();
    env.new_conversation("old");
    env.run(&["append", "--user", "hello"]).ok();
    // What an older convo left: the same store without the marker.
    git(&env.store, &["config", "--unset", "convo.version"]);
    let before = env.snapshot();
    env.run(&["list"]).ok();
    env.run(&["show"]).ok();
    assert_eq!(env.snapshot(), before, "a read marked the store");
    env.run(&["append", "--user", "again"]).ok();
    assert_eq!(git(&env.store, &["config", "convo.version"]), "1\n");
    // `convo init` marks one too, and says it was there already.
    git(&env.store, &["config", "--unset", "convo.version"]);
    let init = env.run(&["init"]);
    assert_eq!(init.ok(), format!("Reinitialized existing convo store in {}\n", env.store.display()));
    assert_eq!(git(&env.store, &["config", "convo.version"]), "1\n");
}

#[test]
fn a_store_of_a_format_this_convo_does_not_know_is_refused_by_every_command_and_left_unchanged() {
    let env = TestEnv::new();
    env.new_conversation("later");
    env.run(&["append", "--user", "hello"]).ok();
    // What a newer convo would leave: the same marker key, another format.
    git(&env.store, &["config", "convo.version", "2"]);
    let before = env.snapshot();
    let refused = env.run(&["append", "--user", "lost?"]);
    insta::assert_snapshot!(env.transcript(&refused), @r"
    exit 5
    --- stderr
    error: [ROOT]/store is a convo store of format `2`, which this convo does not know (it knows format 1)
    hint: a newer convo wrote it: upgrade convo; nothing was read or written
    ");
    for args in [
        &["list"][..],
        &["show"],
        &["log"],
        &["new", "-t", "x"],
        &["compact", "--keep-last", "1"],
        &["rename", "later", "sooner"],
        &["fsck"],
        &["init"],
    ] {
        let run = env.run(args);
        assert_eq!(run.code, 5, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("of format `2`"), "{args:?}: {}", run.stderr);
    }
    assert_eq!(env.snapshot(), before, "a refused command changed the store");

    // Whatever the value holds, the error stays one line.
    git(&env.store, &["config", "convo.version", "2\nerror: forged"]);
    let run = env.run(&["list"]);
    assert_eq!(run.code, 5);
    assert_eq!(run.stderr.lines().filter(|l| l.starts_with("error:")).count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains(r"format `2\nerror: forged`"), "{}", run.stderr);

    // Put back, the store is as it was.
    git(&env.store, &["config", "convo.version", "1"]);
    assert!(env.run(&["show"]).ok().contains("hello"));
}

#[test]
fn a_store_cloned_by_git_or_by_convo_is_recognised() {
    let env = TestEnv::new();
    let hub = bare(&env.root, "hub");
    env.new_conversation("shared");
    env.run(&["append", "--user", "hello"]).ok();
    env.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    env.run(&["push"]).ok();

    let by_convo = env.root.join("by-convo");
    env.run(&["clone", hub.to_str().unwrap(), by_convo.to_str().unwrap()]).ok();
    assert_eq!(git(&by_convo, &["config", "convo.version"]), "1\n");
    let listed = env.run(&["-C", by_convo.to_str().unwrap(), "list"]);
    assert!(listed.ok().contains("shared"), "{}", listed.stdout);

    // git's own clone has no marker; its tree is convo's only, so it is a store all the same.
    let by_git = env.root.join("by-git");
    git(&env.root, &["clone", "--quiet", hub.to_str().unwrap(), by_git.to_str().unwrap()]);
    let by_git = by_git.to_str().unwrap();
    let listed = env.run(&["-C", by_git, "list"]);
    assert!(listed.ok().contains("shared"), "{}", listed.stdout);
    env.run(&["-C", by_git, "append", "shared", "--user", "from the git clone"]).ok();
    assert_eq!(git(Path::new(by_git), &["config", "convo.version"]), "1\n");
}
