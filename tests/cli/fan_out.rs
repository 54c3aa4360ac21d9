//! Stores and remotes from before the fan-out (`conversations/<id>/` instead of
//! `conversations/<fan>/<id>/`), made here with git plumbing from a store convo wrote: they
//! read the same, move into the fan-out with their first write (one commit, the working
//! tree and index following, repaired after a crash), and merge with stores in the new
//! shape. A fetched tree that puts a conversation in two places or in another id's fan
//! folder is refused.

use std::path::Path;

use crate::common::{TestEnv, TwoPeople, bare, conversation_dir, fan, run_command};
use crate::hostile_remotes::{Entry, commit, git_str, read_tree, write_tree};

/// A new commit on HEAD of the git repository `repo` whose tree is HEAD's in the shape a
/// convo from before the fan-out wrote, checked out with `git reset --hard`.
fn make_legacy(repo: &Path) -> String {
    let legacy = legacy_commit(repo);
    git_str(repo, &["reset", "-q", "--hard", &legacy]);
    legacy
}

/// A new commit on HEAD of `repo` (bare or not) in the legacy shape; nothing moves.
fn legacy_commit(repo: &Path) -> String {
    let head = git_str(repo, &["rev-parse", "HEAD"]);
    let conversations = git_str(repo, &["rev-parse", "HEAD:conversations"]);
    let mut flat: Vec<Entry> = Vec::new();
    for (_, fan, fan_tree) in read_tree(repo, &conversations) {
        assert_eq!(fan.len(), 2, "a fan folder");
        flat.extend(read_tree(repo, &fan_tree));
    }
    flat.sort_by(|a, b| a.1.cmp(&b.1));
    let flat = write_tree(repo, &flat);
    let mut root = read_tree(repo, "HEAD^{tree}");
    for entry in root.iter_mut().filter(|e| e.1 == b"conversations") {
        entry.2 = flat.clone();
    }
    let tree = write_tree(repo, &root);
    commit(repo, &tree, Some(&head), "a store from before the fan-out")
}

/// Every path of HEAD's tree, one per line.
fn tracked(env: &TestEnv) -> Vec<String> {
    env.git(&["ls-tree", "-r", "--name-only", "HEAD"]).lines().map(str::to_owned).collect()
}

fn assert_fanned_out(env: &TestEnv, ids: &[&str]) {
    for path in tracked(env) {
        let id = ids.iter().find(|id| path.contains(*id)).unwrap_or_else(|| panic!("{path}: whose?"));
        assert!(path.starts_with(&format!("{}/", conversation_dir(id))), "{path} is not in its fan folder");
    }
    for id in ids {
        assert!(!env.store.join(format!("conversations/{id}")).exists(), "the legacy folder of {id} is gone");
        assert!(env.store.join(conversation_dir(id)).join("meta.json").is_file());
    }
    assert_eq!(env.git_status(), "", "the working tree and index follow HEAD");
    env.run(&["fsck"]).ok();
}

/// What a user reads of two conversations: the list, each one's log and events, and the
/// events by id prefix.
fn reads(env: &TestEnv, ids: &[&str]) -> Vec<String> {
    let mut out = vec![env.run(&["list", "--format", "json"]).ok().to_owned()];
    for id in ids {
        out.push(env.run(&["log", id, "--oneline", "--color", "never"]).ok().to_owned());
        out.push(env.run(&["show", id, "--format", "jsonl"]).ok().to_owned());
        out.push(env.run(&["show", &id[..20], "--format", "jsonl"]).ok().to_owned());
    }
    out
}

fn two_conversations() -> (TestEnv, String, String) {
    let env = TestEnv::new();
    let a = env.new_conversation("alpha");
    env.run(&["append", "--user", "one"]).ok();
    env.run(&["append", "--assistant", "two"]).ok();
    let b = env.new_conversation("beta");
    env.run(&["append", "--user", "three"]).ok();
    (env, a, b)
}

#[test]
fn a_store_from_before_the_fan_out_reads_the_same_and_moves_with_its_first_write() {
    let (env, a, b) = two_conversations();
    let before = reads(&env, &[&a, &b]);
    make_legacy(&env.store);
    assert_eq!(env.git(&["ls-tree", "--name-only", "HEAD:conversations"]), format!("{a}\n{b}\n"));
    // Nothing derived from the new shape survives to answer for the old one.
    for derived in ["catalogue", "ids", "cache", "outline"] {
        let path = env.store.join(".git/convo").join(derived);
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_dir_all(&path);
    }
    assert_eq!(reads(&env, &[&a, &b]), before, "a legacy store reads as it did");
    env.run(&["fsck"]).ok();

    env.run(&["append", &a, "--user", "four"]).ok();
    let subjects = env.git(&["log", "--format=%s", "-3"]);
    assert_eq!(
        subjects,
        "append: \"alpha\" turn 1 (+1 event)\n\
         store: move 2 conversations into fan-out folders\n\
         a store from before the fan-out\n"
    );
    assert_fanned_out(&env, &[&a, &b]);
    // The move changed no conversation's tree: its log runs straight across it.
    let after = reads(&env, &[&a, &b]);
    assert_eq!(after[1].lines().skip(1).collect::<Vec<_>>(), before[1].lines().collect::<Vec<_>>());
    assert!(after[2].starts_with(&before[2]) && after[2].lines().count() == before[2].lines().count() + 1);
    assert_eq!(after[4..], before[4..], "beta is as it was");
}

/// Files someone added beside `conversations/` with git are none of the move's business:
/// they neither stop it nor move.
#[test]
fn a_legacy_store_with_a_file_added_by_git_still_moves() {
    let (env, a, b) = two_conversations();
    std::fs::create_dir_all(env.store.join("notes")).unwrap();
    std::fs::write(env.store.join("notes/todo.txt"), "by hand\n").unwrap();
    env.git(&["add", "notes/todo.txt"]);
    env.git(&["-c", "user.name=me", "-c", "user.email=me@example.com", "commit", "-q", "-m", "notes by hand"]);
    make_legacy(&env.store);
    env.run(&["append", &a, "--user", "four"]).ok();
    assert!(tracked(&env).contains(&"notes/todo.txt".to_owned()));
    assert_eq!(std::fs::read_to_string(env.store.join("notes/todo.txt")).unwrap(), "by hand\n");
    for path in tracked(&env).iter().filter(|p| p.starts_with("conversations/")) {
        let id = if path.contains(&a) { &a } else { &b };
        assert!(path.starts_with(&format!("{}/", conversation_dir(id))), "{path}");
    }
    assert_eq!(env.git_status(), "");
}

/// After the move, what the remote (still in the old shape) has is not published again: a
/// secret pushed on purpose before is not found again by the next push's scan.
#[test]
fn a_push_to_a_remote_from_before_the_fan_out_scans_only_what_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let (a, alpha, _) = two_conversations();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["append", &alpha, "--user", "the key is sk_live_4eC39HqLyjWDarjtT1zdp7dcQQ"]).ok();
    a.run(&["push"]).fails_with(3);
    a.run(&["push", "--allow-secrets"]).ok();
    // An older convo elsewhere pushed the same store in its shape.
    let legacy = legacy_commit(&hub);
    git_str(&hub, &["update-ref", "refs/heads/main", &legacy]);
    a.run(&["pull"]).ok();
    a.run(&["append", &alpha, "--user", "nothing secret"]).ok();
    a.run(&["push"]).ok();
}

#[test]
fn a_crash_while_moving_into_the_fan_out_is_repaired_by_the_next_write() {
    let (env, a, b) = two_conversations();
    make_legacy(&env.store);
    let mut cmd = env.command(&["append", &a, "--user", "lost"]);
    cmd.env("CONVO_TEST_FAIL_AT", "committed");
    let out = run_command(cmd, "");
    assert_ne!(out.code, 0, "killed after the move's commit");
    assert_eq!(env.git(&["log", "--format=%s", "-1"]), "store: move 2 conversations into fan-out folders\n");
    assert!(env.store.join(format!("conversations/{a}")).exists(), "the working tree lags behind");

    env.run(&["append", &a, "--user", "kept"]).ok();
    assert_fanned_out(&env, &[&a, &b]);
    let shown = env.run(&["show", &a, "--format", "jsonl"]).ok().to_owned();
    assert!(shown.contains("\"kept\"") && !shown.contains("\"lost\""), "{shown}");
}

#[test]
fn a_remote_from_before_the_fan_out_fast_forwards_and_merges_into_it() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let (a, alpha, beta) = two_conversations();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();
    let b = TestEnv::bare_at(100);
    b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();

    // An older convo at `a` appends and pushes its store's shape.
    a.run(&["append", &alpha, "--user", "five"]).ok();
    make_legacy(&a.store);
    a.git(&["push", "-q", hub.to_str().unwrap(), "HEAD:main"]);
    b.run(&["pull"]).ok();
    assert_fanned_out(&b, &[&alpha, &beta]);
    assert_eq!(reads(&b, &[&alpha, &beta])[2..], reads(&a, &[&alpha, &beta])[2..]);

    // Both sides write, the remote still in the old shape: the merge is in the new one.
    let gamma = b.new_conversation("gamma");
    a.run(&["append", &beta, "--user", "six"]).ok();
    // That write moved `a` into the fan-out; its older self would not have.
    make_legacy(&a.store);
    a.git(&["push", "-q", hub.to_str().unwrap(), "HEAD:main"]);
    b.run(&["pull"]).ok();
    assert!(b.git(&["log", "--format=%s", "-1"]).starts_with("merge: "), "a merge");
    assert_fanned_out(&b, &[&alpha, &beta, &gamma]);
    let shown = b.run(&["show", &beta, "--format", "jsonl"]).ok().to_owned();
    assert!(shown.contains("\"six\""), "{shown}");
}

#[test]
fn a_fetched_tree_with_a_conversation_in_two_places_or_the_wrong_fan_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let (a, alpha, _) = two_conversations();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();
    let b = TestEnv::bare_at(100);
    b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();
    let before = b.snapshot();

    let tip = git_str(&hub, &["rev-parse", "main"]);
    let folder = git_str(&hub, &["rev-parse", &format!("main:{}", conversation_dir(&alpha))]);
    let conversations = git_str(&hub, &["rev-parse", "main:conversations"]);
    let other_fan = if fan(&alpha) == "ZZ" { "YY" } else { "ZZ" };
    let cases: Vec<(Vec<Entry>, String, &str)> = vec![
        (
            // The legacy place as well as the fan folder.
            [read_tree(&hub, &conversations), vec![("40000".into(), alpha.as_bytes().to_vec(), folder.clone())]]
                .concat(),
            format!("conversations/{alpha}"),
            "is also in",
        ),
        (
            // In a fan folder that is not its own.
            [
                read_tree(&hub, &conversations),
                vec![(
                    "40000".into(),
                    other_fan.as_bytes().to_vec(),
                    write_tree(&hub, &[("40000".into(), alpha.as_bytes().to_vec(), folder.clone())]),
                )],
            ]
            .concat(),
            format!("conversations/{other_fan}/{alpha}"),
            "not a file convo writes",
        ),
    ];
    let mut cases = cases;
    // The same fan folder twice, the second holding the conversation again.
    let mut twice = read_tree(&hub, &conversations);
    twice.push((
        "40000".into(),
        fan(&alpha).as_bytes().to_vec(),
        write_tree(&hub, &[("40000".into(), alpha.as_bytes().to_vec(), folder.clone())]),
    ));
    cases.push((twice, format!("conversations/{}", fan(&alpha)), "appears twice"));
    for (mut entries, named, reason) in cases {
        entries.sort_by(|a, b| a.1.cmp(&b.1));
        let conversations = write_tree(&hub, &entries);
        let tree = write_tree(&hub, &[("40000".into(), b"conversations".to_vec(), conversations)]);
        let hostile = commit(&hub, &tree, Some(&tip), "innocent update");
        git_str(&hub, &["update-ref", "refs/heads/main", &hostile]);
        let stderr = b.run(&["pull"]).fails_with(6).to_owned();
        assert!(stderr.starts_with(&format!("error: refusing commit {}: {named}: ", &hostile[..7])), "{stderr}");
        assert!(stderr.contains(reason), "{stderr}");
        assert!(b.snapshot() == before, "{named}: a refused pull changed the store");
    }
}

/// The move lands before the write that asked for it: when a git holds the index its
/// mirror lags, which fails neither the move nor the write (it carries the move's paths
/// into its own journal); both land, with one warning, and the next command catches up.
#[test]
fn a_move_whose_mirror_lags_does_not_fail_the_write_that_asked_for_it() {
    let (env, a, b) = two_conversations();
    make_legacy(&env.store);
    let out = crate::safety::lands_while_git_holds_the_index(&env, &["append", &a, "--user", "four"]);
    assert_eq!(out.stderr.lines().filter(|l| l.starts_with("warning: ")).count(), 1, "{}", out.stderr);
    let subjects = env.git(&["log", "--format=%s", "-2"]);
    assert_eq!(subjects, "append: \"alpha\" turn 1 (+1 event)\nstore: move 2 conversations into fan-out folders\n");
    assert_fanned_out(&env, &[&a, &b]);
}

/// The sealed clock gives every conversation a command makes alone an id ending in `01`, so
/// most tests' conversations share one fan folder. Here a folder import makes three in one
/// command, in three fans (and `new` a fourth beside the first): pushed, cloned, appended
/// to on both sides, pulled into a fork and pushed back, every fan folder holds only its
/// own ids, and `list` and `fsck` agree on both sides.
#[test]
fn conversations_in_several_fans_push_pull_list_and_fsck_alike() {
    let TwoPeople { a, b, url, served: _served, .. } = crate::common::two_people();
    let sessions = a.root.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for name in ["codex-0.169.jsonl", "gemini-cli-0.61.jsonl", "gemini-cli-0.61-failed-command.jsonl"] {
        std::fs::copy(fixtures.join(name), sessions.join(name)).unwrap();
    }
    a.run(&["import", sessions.to_str().unwrap()]).ok();
    let alone = a.new_conversation("made alone");
    a.run(&["append", "--user", "one"]).ok();
    let ids = |env: &TestEnv| -> Vec<String> {
        let listed: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
        let mut ids: Vec<String> =
            listed.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect();
        ids.sort();
        ids
    };
    let mine = ids(&a);
    assert_eq!(mine.len(), 4);
    let fans: std::collections::BTreeSet<&str> = mine.iter().map(|id| fan(id)).collect();
    assert!(fans.len() >= 3, "{mine:?} in several fans");
    assert!(mine.iter().filter(|id| fan(id) == fan(&alone)).count() >= 2, "{mine:?}: two in one fan");

    a.run(&["remote", "add", "origin", &url]).ok();
    a.run(&["push"]).ok();
    b.run(&["clone", &url, b.store.to_str().unwrap()]).ok();
    assert_eq!(ids(&b), mine);
    // Both sides append to the same conversation, in a fan other than `alone`'s: b's line
    // goes on in a fork at the pull.
    let shared = mine.iter().find(|id| fan(id) != fan(&alone)).unwrap();
    let other = mine.iter().rev().find(|id| fan(id) != fan(&alone) && *id != shared).unwrap();
    a.run(&["append", shared, "--user", "from a"]).ok();
    a.run(&["append", &alone, "--user", "a again"]).ok();
    a.run(&["push"]).ok();
    b.run(&["append", shared, "--user", "from b"]).ok();
    b.run(&["append", other, "--user", "b alone"]).ok();
    b.run(&["pull"]).ok();
    b.run(&["push"]).ok();
    a.run(&["pull"]).ok();

    let both = ids(&a);
    assert_eq!(both.len(), 5, "the four and b's fork: {both:?}");
    assert_eq!(ids(&b), both);
    for env in [&a, &b] {
        for path in tracked(env).iter().filter(|p| p.starts_with("conversations/")) {
            let id = both.iter().find(|id| path.contains(id.as_str())).unwrap_or_else(|| panic!("{path}: whose?"));
            assert!(path.starts_with(&format!("{}/", conversation_dir(id))), "{path} is not in its fan folder");
        }
        env.run(&["fsck"]).ok();
        assert_eq!(env.git_status(), "");
        let shown = env.run(&["show", other, "--format", "jsonl"]).ok().to_owned();
        assert!(shown.contains("b alone"), "{shown}");
    }
    // The same list on both sides, but for which conversation each has active.
    let listed = |env: &TestEnv| -> serde_json::Value {
        let mut rows: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
        rows.as_array_mut().unwrap().iter_mut().for_each(|r| drop(r.as_object_mut().unwrap().remove("active")));
        rows
    };
    assert_eq!(listed(&a), listed(&b));
}
