//! Private conversations (issue 43, `store::sharing`, `store::published`, `ops::share`):
//! `convo private ID` keeps a conversation's events, title, paths and id off the hub, in
//! the branch, its history, the catalog and the conversation refs; `convo share ID` sends
//! it; teammates keep sharing the rest through the published line; `share.default` decides
//! for new captures; `push --dry-run` says what is kept back and writes nothing.

use std::path::Path;

use crate::common::githttp::Daemon;
use crate::common::{TestEnv, bare, claude_session};
use crate::hostile_remotes::{git_in, git_str};

const TITLE: &str = "Operation Quokka Marmalade";
const TEXT: &str = "zanzibar-7731 the plan nobody may read";
const CWD: &str = "/home/alice/skunkworks-zephyr";

/// Everything the hub holds, as one text: every object's content and every ref.
fn everything(hub: &Path) -> String {
    let objects = git_in(hub, &["cat-file", "--batch-all-objects", "--batch"], b"");
    let refs = git_str(hub, &["for-each-ref", "--format=%(refname) %(objectname)"]);
    format!("{}\n{refs}", String::from_utf8_lossy(&objects))
}

fn assert_absent(hub: &Path, id: &str) {
    let all = everything(hub);
    for secret in [id, TITLE, TEXT, CWD, "skunkworks", "zanzibar"] {
        assert!(!all.contains(secret), "the hub holds `{secret}`");
    }
}

fn import(env: &TestEnv, name: &str, text: &str) -> String {
    let file = env.root.join("sessions").join(name);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    env.run(&["import", file.to_str().unwrap()]).ok().lines().next().unwrap().to_owned()
}

/// A private conversation with a distinctive title, text and cwd, and a shared one.
fn alice(url: &str) -> (TestEnv, String, String) {
    let a = TestEnv::new();
    let secret = import(&a, "secret.jsonl", &claude_session(CWD, "main", TEXT));
    a.run(&["rename", &secret, TITLE]).ok();
    let shared = a.new_conversation("shared work");
    a.run(&["append", "--user", "one"]).ok();
    a.run(&["remote", "add", "origin", url]).ok();
    (a, secret, shared)
}

fn events(env: &TestEnv, id: &str) -> Vec<String> {
    let out = env.run(&["show", id, "--format", "jsonl"]).ok().to_owned();
    out.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string()).collect()
}

#[test]
fn a_private_conversation_never_reaches_the_hub_and_teammates_still_share_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let daemon = Daemon::start(dir.path());
    let url = format!("{}/hub.git", daemon.url);
    let (a, secret, shared) = alice(&url);
    a.run(&["config", "set", "user.name", "Alice Doe"]).ok();
    a.run(&["config", "set", "user.email", "alice@example.com"]).ok();
    a.run(&["private", &secret]).ok();
    a.run(&["push"]).ok();
    assert_absent(&hub, &secret);
    // The published line, not the local branch (which holds the private one).
    assert_ne!(git_str(&hub, &["rev-parse", "main"]), a.git(&["rev-parse", "HEAD"]).trim());
    // Signed by the person who pushed, naming what it published.
    assert_eq!(git_str(&hub, &["log", "-1", "--format=%an <%ae>", "main"]), "Alice Doe <alice@example.com>");
    assert!(
        git_str(&hub, &["log", "-1", "--format=%B", "main"]).contains(&shared),
        "publish message names the shared conversation"
    );

    // A teammate clones, continues the shared conversation and pushes back.
    let b = TestEnv::bare_at(100);
    b.run(&["clone", &url, b.store.to_str().unwrap()]).ok();
    assert!(!b.run(&["list"]).ok().contains("Quokka"));
    b.run(&["switch", &shared]).ok();
    b.run(&["append", "--user", "two"]).ok();
    b.run(&["push"]).ok();

    // Alice pulls (nothing forks), appends twice with a push between (no pull), and Bob pulls.
    let pulled = a.run(&["pull"]).ok_status().to_owned();
    assert!(!pulled.contains("diverged"), "{pulled}");
    a.run(&["switch", &shared]).ok();
    a.run(&["append", "--user", "three"]).ok();
    a.run(&["push"]).ok();
    a.run(&["append", "--user", "four"]).ok();
    // `sync` pulls its own published line back in (a merge that forks nothing), then pushes.
    let synced = a.run(&["sync"]).ok_status().to_owned();
    assert!(synced.contains("Synced with origin: nothing in; out 1 conversation"), "{synced}");
    let status = a.run(&["status"]).ok().to_owned();
    assert!(status.contains("Up to date with origin"), "{status}");
    a.run(&["append", "--user", "five"]).ok();
    let status = a.run(&["status"]).ok().to_owned();
    assert!(status.contains("\"shared work\": 1 commit (1 event) not pushed\n"), "{status}");
    a.run(&["push"]).ok();
    b.run(&["pull"]).ok();
    let (ours, theirs) = (events(&a, &shared), events(&b, &shared));
    assert_eq!(ours.len(), 5, "{ours:?}");
    assert_eq!(ours, theirs, "nothing dropped, interleaved or stored twice");
    assert_eq!(a.run(&["list", "--format", "json"]).ok().matches("\"id\"").count(), 2);
    assert_eq!(events(&a, &secret).len(), 2);
    assert_absent(&hub, &secret);

    // Shared again, it arrives.
    a.run(&["share", &secret]).ok();
    a.run(&["pull"]).ok();
    a.run(&["push"]).ok();
    assert!(everything(&hub).contains(TEXT));
    assert!(git_str(&hub, &["for-each-ref"]).contains(&format!("refs/convo/conversations/{secret}")));
    b.run(&["pull"]).ok();
    assert_eq!(events(&b, &secret).len(), 2);
    for env in [&a, &b] {
        env.run(&["fsck"]).ok();
        assert_eq!(env.git_status(), "");
    }
}

#[test]
fn without_private_conversations_a_push_sends_the_branch_itself() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let daemon = Daemon::start(dir.path());
    let (a, secret, _) = alice(&format!("{}/hub.git", daemon.url));
    a.run(&["push"]).ok();
    assert_eq!(git_str(&hub, &["rev-parse", "main"]), a.git(&["rev-parse", "HEAD"]).trim());
    assert!(everything(&hub).contains(&secret));
}

#[test]
fn a_conversation_made_private_after_a_push_stops_receiving_updates_and_dry_run_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let daemon = Daemon::start(dir.path());
    let (a, _, shared) = alice(&format!("{}/hub.git", daemon.url));
    a.run(&["push"]).ok();
    let before = git_str(&hub, &["rev-parse", &format!("main:{}", crate::common::conversation_dir(&shared))]);
    a.run(&["private", &shared]).ok();
    a.run(&["switch", &shared]).ok();
    a.run(&["append", "--user", "never-sent-7716"]).ok();

    let status = a.run(&["status"]).ok().to_owned();
    assert!(status.contains("Up to date with origin"), "a private conversation is not `not pushed`: {status}");
    let (store, remote) = (a.snapshot(), everything(&hub));
    let plan = a.run(&["push", "--dry-run"]).ok().to_owned();
    assert!(
        plan.contains(&format!("{shared} \"shared work\": origin keeps it as it was, no longer updated")),
        "{plan}"
    );
    assert!(plan.contains("Nothing to push"), "{plan}");
    assert_eq!(a.snapshot(), store, "a dry run writes nothing here");
    assert_eq!(everything(&hub), remote, "nor there");

    a.run(&["push"]).ok();
    let after = git_str(&hub, &["rev-parse", &format!("main:{}", crate::common::conversation_dir(&shared))]);
    assert_eq!(after, before);
    assert!(!everything(&hub).contains("never-sent-7716"));
}

#[test]
fn share_default_decides_for_a_new_capture() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let daemon = Daemon::start(dir.path());
    let a = TestEnv::new();
    a.run(&["config", "set", "--user", "share.default", "project-with-remote"]).ok();
    let scratch = import(&a, "scratch.jsonl", &claude_session(CWD, "main", TEXT));
    let with_remote = a.new_conversation("no project");
    a.run(&["remote", "add", "origin", &format!("{}/hub.git", daemon.url)]).ok();
    let plan = a.run(&["push", "--dry-run"]).ok().to_owned();
    assert!(plan.contains("Kept private, not pushed: 2 conversations"), "{plan}");
    a.run(&["config", "set", "--user", "share.default", "none"]).ok();
    a.run(&["share", &with_remote]).ok();
    a.run(&["push"]).ok();
    assert_absent(&hub, &scratch);
    assert!(everything(&hub).contains(&with_remote));
}

#[test]
fn private_with_an_unknown_id_fails_and_changes_nothing() {
    let a = TestEnv::new();
    let id = a.new_conversation("one");
    let before = a.snapshot();
    let run = a.run(&["private", &id, "nosuchconversation"]);
    let stderr = run.fails_with(run.code).to_owned();
    assert_ne!(run.code, 0);
    assert!(stderr.lines().next().unwrap().contains("nosuchconversation"), "{stderr}");
    assert_eq!(a.snapshot(), before);
}

#[test]
fn list_marks_private_conversations_and_filters_them() {
    let a = TestEnv::new();
    let kept = a.new_conversation("kept back");
    a.new_conversation("open");
    a.run(&["private", &kept]).ok();
    let text = a.run(&["list"]).ok().to_owned();
    assert!(text.contains("[private] kept back"), "{text}");
    assert!(!text.contains("[private] open"), "{text}");
    let only = a.run(&["list", "--private", "--format", "json"]).ok().to_owned();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&only).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0]["id"].as_str(), rows[0]["private"].as_bool()), (Some(kept.as_str()), Some(true)));
    a.run(&["share", &kept]).ok();
    assert!(!a.run(&["list"]).ok().contains("[private]"));
    assert_eq!(a.run(&["list", "--private"]).ok(), "");
}

#[test]
fn a_fork_of_a_private_conversation_stays_private_until_shared_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let daemon = Daemon::start(dir.path());
    let (a, secret, _) = alice(&format!("{}/hub.git", daemon.url));
    a.run(&["private", &secret]).ok();
    a.run(&["fork", &secret]).ok();
    let fork = a.run(&["list", "--format", "json"]).ok().to_owned();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&fork).unwrap();
    let fork = rows.iter().find(|r| r["forked_from"]["id"] == secret.as_str()).unwrap()["id"].as_str().unwrap();
    let plan = a.run(&["push", "--dry-run"]).ok().to_owned();
    assert!(plan.contains("Kept private, not pushed: 2 conversations"), "{plan}");
    a.run(&["push"]).ok();
    assert!(!everything(&hub).contains(TEXT));
    assert!(!everything(&hub).contains(fork));
}

#[test]
fn a_secret_in_a_private_conversation_does_not_stop_a_push() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let daemon = Daemon::start(dir.path());
    let (a, secret, _) = alice(&format!("{}/hub.git", daemon.url));
    let token = "ghp_R8x2Lq9ZtW4mNc7Vb1Hs6Jk3Pd5Fy0GaEuQi";
    a.run(&["switch", &secret]).ok();
    a.run(&["append", "--user", &format!("my token {token}")]).ok();
    a.run(&["push"]).fails_with(3);
    a.run(&["private", &secret]).ok();
    a.run(&["push"]).ok();
    assert!(!everything(&hub).contains(token));
    assert_absent(&hub, &secret);
}
