"""Which installed distribution is the PRs' project, by its install records: the strongest evidence
wins, evidence of equal strength for different projects is asked about, naming only those."""

from __future__ import annotations

import pytest

from prstack.errors import InputError
from prstack.placement.forge import RepoId
from prstack.placement.installed_from import InstallRecord, Strength, at_pr_head, find_project, strength, worth_asking

VLLM = RepoId("vllm-project", "vllm")
HEAD = "a" * 40


def vcs(dist: str, repo: RepoId, revision: str | None = None) -> InstallRecord:
    return InstallRecord(dist, "vcs", repo, revision, HEAD)


def test_the_install_from_the_prs_ref_wins_over_other_vcs_installs() -> None:
    records = [vcs("other", RepoId("o", "other"), "main"), vcs("vllm", VLLM, "refs/pull/40898/head"),
               vcs("third", RepoId("t", "third"))]
    found = find_project(records, [40898])
    assert found is not None and (found.dist, found.repo, found.clone) == ("vllm", VLLM, None)
    assert "refs/pull/40898/head of github.com/vllm-project/vllm" in found.reason


def test_a_ref_of_another_pr_is_only_a_repository() -> None:
    assert strength(vcs("vllm", VLLM, "refs/pull/1/head"), [40898])[0] is Strength.REPOSITORY


def test_equal_evidence_for_two_projects_asks_naming_only_those() -> None:
    records = [vcs("widget", RepoId("acme", "widget")), vcs("gadget", RepoId("other", "gadget"))]
    with pytest.raises(InputError) as raised:
        find_project(records, [2])
    message = str(raised.value)
    assert "2 installed distributions" in message
    assert "gadget was installed from github.com/other/gadget" in message and "widget was installed" in message
    assert "`dist` NAME" in message
    found = find_project(records, [2], dist="Widget")
    assert found is not None and found.repo == RepoId("acme", "widget")


def test_two_distributions_of_one_repository_are_one_answer() -> None:
    found = find_project([vcs("pkg-core", VLLM), vcs("pkg", VLLM)], [1])
    assert found is not None and found.dist == "pkg" and found.repo == VLLM


def test_a_clone_holding_the_prs_is_the_source_and_its_head_counts_most() -> None:
    holds = InstallRecord("kvs", "dir", None, clone="/src/kvs", clone_head="b" * 40, clone_prs={7: HEAD})
    at_head = InstallRecord("other", "dir", None, clone="/src/other", clone_head=HEAD, clone_prs={7: HEAD})
    assert strength(holds, [7])[0] is Strength.CLONE_HOLDS_PRS
    found = find_project([holds, at_head, vcs("vllm", VLLM)], [7])
    assert found is not None and (found.dist, found.clone) == ("other", "/src/other")
    assert "checked out at #7's head" in found.reason


def test_a_clone_lacking_one_of_the_prs_is_not_the_source() -> None:
    partial = InstallRecord("kvs", "dir", RepoId("acme", "kvs"), clone="/src/kvs", clone_prs={7: HEAD})
    found = find_project([partial], [7, 8])
    assert found is not None and found.clone is None and found.repo == RepoId("acme", "kvs")


def test_nothing_named_is_no_answer() -> None:
    assert find_project([InstallRecord("x", "dir", None, clone="/src/x")], [1]) is None
    assert find_project([], [1]) is None


def test_repositories_tied_are_worth_asking_and_a_head_or_branch_match_decides() -> None:
    widget = InstallRecord("widget", "version", RepoId("acme", "widget"), commit="c0ffee123")
    gadget = vcs("gadget", RepoId("other", "gadget"), "feature-b")
    assert {r.dist for r in worth_asking([widget, gadget], [2])} == {"widget", "gadget"}
    assert worth_asking([widget], [2]) == []  # one candidate: nothing to ask
    by_head = {"github.com/acme/widget": {2: ("c0ffee123" + "0" * 31, "fix")}}
    found = find_project([widget, gadget], [2], heads=by_head)
    assert found is not None and found.dist == "widget" and "#2's head c0ffee123" in found.reason
    by_branch = {"github.com/other/gadget": {2: ("f" * 40, "feature-b")}}
    found = find_project([widget, gadget], [2], heads=by_branch)
    assert found is not None and found.dist == "gadget" and "#2's branch feature-b" in found.reason
    assert at_pr_head(InstallRecord("x", "version", None, commit="c0ff"), {2: ("c0ff" + "0" * 36, "b")}) is None
    with pytest.raises(InputError):
        find_project([widget, gadget], [2], heads={})  # neither was built from the PR: asked
