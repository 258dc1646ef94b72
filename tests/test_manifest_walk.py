"""Which files a run looks at: gitignore-style excludes, .gitignore files, symlinks, explicit files."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from kf2jobset.repo.walk import Pattern, discover, walk


def make(root: Path, *paths: str) -> None:
    for p in paths:
        f = root / p
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("a: 1\n")


def rels(root: Path, **kw) -> list[str]:
    return [f.rel for f in walk([str(root)], **kw).files]


@pytest.mark.parametrize("pattern, path, is_dir, expected", [
    pytest.param("*.yaml", "a/b/c.yaml", False, True, id="basename-any-depth"),
    pytest.param("c.yaml", "a/b/c.yaml", False, True, id="name-any-depth"),
    pytest.param("b/c.yaml", "a/b/c.yaml", False, False, id="slash-anchors-to-root"),
    pytest.param("a/b/c.yaml", "a/b/c.yaml", False, True, id="anchored-match"),
    pytest.param("/c.yaml", "a/c.yaml", False, False, id="leading-slash-anchors"),
    pytest.param("/c.yaml", "c.yaml", False, True, id="leading-slash-root-file"),
    pytest.param("**/c.yaml", "a/b/c.yaml", False, True, id="double-star-prefix"),
    pytest.param("**/c.yaml", "c.yaml", False, True, id="double-star-prefix-root"),
    pytest.param("a/**", "a/b/c.yaml", False, True, id="double-star-suffix"),
    pytest.param("a/**/c.yaml", "a/x/y/c.yaml", False, True, id="double-star-middle"),
    pytest.param("a/**/c.yaml", "a/c.yaml", False, True, id="double-star-middle-zero-dirs"),
    pytest.param("a/*.yaml", "a/b/c.yaml", False, False, id="star-does-not-cross-slash"),
    pytest.param("build/", "build", True, True, id="dir-only-on-dir"),
    pytest.param("build/", "build", False, False, id="dir-only-not-file"),
    pytest.param("c?.yaml", "c1.yaml", False, True, id="question-mark"),
    pytest.param("c[0-9].yaml", "c7.yaml", False, True, id="class"),
    pytest.param("c[!0-9].yaml", "c7.yaml", False, False, id="negated-class"),
])
def test_pattern(pattern, path, is_dir, expected):
    assert Pattern(pattern).matches(path, path.rsplit("/", 1)[-1], is_dir) is expected


def test_walk_takes_manifests_in_stable_order_and_skips_tool_dirs(tmp_path):
    make(tmp_path, "b.yaml", "a.yml", "c.json", "d.txt", "sub/Kustomization", "sub/x.yaml",
         ".git/config.yaml", "node_modules/m.yaml")
    assert rels(tmp_path) == ["a.yml", "b.yaml", "c.json", "sub/Kustomization", "sub/x.yaml"]


def test_exclude_patterns_and_negation(tmp_path):
    make(tmp_path, "keep.yaml", "gen/a.yaml", "gen/keep.yaml", "x/secret.yaml", "deep/x/secret.yaml")
    assert rels(tmp_path, excludes=["gen/", "secret.yaml"]) == ["keep.yaml"]
    # the last matching pattern wins; a directory's files come before its subdirectories
    assert rels(tmp_path, excludes=["*.yaml", "!keep.yaml"]) == ["keep.yaml", "gen/keep.yaml"]
    # a re-include does not reach into an excluded directory (git's rule)
    assert rels(tmp_path, excludes=["gen/", "!gen/keep.yaml"]) == ["keep.yaml", "deep/x/secret.yaml", "x/secret.yaml"]
    assert rels(tmp_path, excludes=["/x/"]) == ["keep.yaml", "deep/x/secret.yaml", "gen/a.yaml", "gen/keep.yaml"]


def test_gitignore_files_apply_below_their_directory(tmp_path):
    make(tmp_path, "a.yaml", "out/x.yaml", "sub/a.yaml", "sub/tmp.yaml", "other/tmp.yaml")
    (tmp_path / ".gitignore").write_text("out/\n")
    (tmp_path / "sub" / ".gitignore").write_text("# comment\ntmp.yaml\n")
    assert rels(tmp_path) == ["a.yaml", "other/tmp.yaml", "sub/a.yaml"]
    assert "out/x.yaml" in rels(tmp_path, gitignore=False)


def test_symlinks_are_never_followed(tmp_path):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    make(tree, "real.yaml")
    make(outside, "secret.yaml", "dir/inner.yaml")
    os.symlink(outside / "secret.yaml", tree / "link.yaml")
    os.symlink(outside / "dir", tree / "linkdir")
    os.symlink(tree / "real.yaml", tree / "alias.yaml")  # inside the tree: still a second name
    found = walk([str(tree)])
    assert [f.rel for f in found.files] == ["real.yaml"]
    assert sorted(Path(p).name for p in found.symlinks) == ["alias.yaml", "link.yaml"]


def test_explicit_files_are_taken_deduplicated_and_excludable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make(tmp_path, "a.yaml", "vendor/b.yaml")
    os.symlink(tmp_path / "a.yaml", tmp_path / "alias.yaml")
    found = walk(["a.yaml", "alias.yaml", "vendor/b.yaml", "missing.yaml"], excludes=["vendor/"])
    assert [f.path for f in found.files] == ["a.yaml"]  # the symlink resolves to the same file
    assert found.missing == ["missing.yaml"]
    # the stream mode keeps missing paths so that reading them reports the error
    assert discover(["a.yaml", "missing.yaml"]) == ["a.yaml", "missing.yaml"]


def test_out_dir_inside_the_tree_is_not_walked(tmp_path):
    make(tmp_path, "a.yaml", "converted/a.yaml")
    assert rels(tmp_path, prune=[str(tmp_path / "converted")]) == ["a.yaml"]
