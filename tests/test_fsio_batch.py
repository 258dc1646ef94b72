"""Batched atomic writes (repo/fsio.AtomicBatch, repo/outcome.PendingWrites): one durability
barrier for many files, and still per file: atomic replacement, mode kept, a failure leaves that
file untouched and is reported for it alone."""
from __future__ import annotations

import os

from kf2jobset.repo.fsio import AtomicBatch, write_atomic
from kf2jobset.repo.outcome import CONVERTED, FAILED, IN_PLACE, Outcome, PendingWrites, Settings, deliver


def _leftovers(directory):
    return [p for p in os.listdir(directory) if p.endswith(".kf2jobset.tmp")]


def test_batch_replaces_every_file_and_keeps_modes(tmp_path):
    files = []
    for i in range(5):
        p = tmp_path / f"f{i}.yaml"
        p.write_text("old")
        os.chmod(p, 0o640 if i % 2 else 0o600)
        files.append(p)
    batch = AtomicBatch()
    for i, p in enumerate(files):
        batch.add(p, f"new {i}".encode())
        assert p.read_text() == "old"  # nothing replaced before the barrier
    assert batch.commit() == []
    for i, p in enumerate(files):
        assert p.read_text() == f"new {i}"
        assert oct(os.stat(p).st_mode & 0o777) == oct(0o640 if i % 2 else 0o600)
    assert _leftovers(tmp_path) == []


def test_a_failed_rename_fails_that_file_alone(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("old")
    blocked = tmp_path / "blocked.yaml"
    blocked.mkdir()  # os.replace of a file over a directory fails
    batch = AtomicBatch()
    batch.add(good, b"new")
    batch.add(blocked, b"new")
    failures = batch.commit()
    assert [path for path, _ in failures] == [str(blocked)]
    assert good.read_text() == "new" and blocked.is_dir()
    assert _leftovers(tmp_path) == []


def test_pending_writes_settle_outcomes(tmp_path):
    ok, bad = tmp_path / "ok.yaml", tmp_path / "bad.yaml"
    ok.write_text("old")
    bad.mkdir()
    pending = PendingWrites()
    settings = Settings(mode=IN_PLACE)
    outs = [Outcome(str(ok)), Outcome(str(bad))]
    deliver(outs[0], str(ok), b"new", None, settings, pending)
    deliver(outs[1], str(bad), b"new", None, settings, pending)
    assert outs[0].written is None  # settled only when the batch is finished
    pending.finish()
    assert (outs[0].status, outs[0].written) == (CONVERTED, str(ok))
    assert outs[1].status == FAILED and "cannot write" in outs[1].problems[0]
    assert ok.read_text() == "new"


def test_an_unwritable_directory_touches_nothing(tmp_path):
    missing = tmp_path / "no-such-dir" / "f.yaml"
    out = Outcome(str(missing))
    pending = PendingWrites()
    deliver(out, str(missing), b"new", None, Settings(mode=IN_PLACE), pending)
    pending.finish()
    assert out.status == FAILED and not missing.exists()


def test_write_atomic_single_file(tmp_path):
    p = tmp_path / "x.yaml"
    write_atomic(p, b"one")
    write_atomic(p, b"two")
    assert p.read_text() == "two" and _leftovers(tmp_path) == []
