"""Commented-out YAML keeps its meaning through a conversion.

A commented-out line belongs to the block its indentation puts it in, and moves and re-indents with
that block. The property: uncommenting a commented-out line (or a commented-out field: the line and
the commented lines indented under it) in the v1 job and converting (A) means the same as converting
and then uncommenting the line that came from it in the JobSet (B). Fixtures: tests/commented/<case>/
input.yaml, with the converted text as a golden (expected.yaml, KF2JOBSET_UPDATE_GOLDEN=1 rewrites it).
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text

from .conftest import check_golden
from .jobs import pytorchjob_text, replica_text

CASES = sorted(p.parent for p in (Path(__file__).parent / "commented").glob("*/input.yaml"))
OPTIONS = ConvertOptions(accept_mpi_ssh=True)


def _convert(text: str) -> str | None:
    r = convert_text(text, "input.yaml", OPTIONS)
    return None if r.errors else r.new_text


def _is_comment(line: str) -> bool:
    return line.lstrip(" ").startswith("#")


def _uncomment(line: str, space: bool | None = None) -> str:
    """What a user does: delete the `#` (and the space after it when the field's first line has one:
    `# key:` / `#   child`, but `#key:` / `#  child`), the text stays where the `#` was."""
    i = line.index("#")
    rest = line[i + 1:]
    space = rest.startswith(" ") if space is None else space
    return line[:i] + (rest[1:] if space and rest.startswith(" ") else rest)


def _uncomment_fields(lines: list[str], fields: list[list[int]]) -> None:
    for field in fields:
        space = lines[field[0]][lines[field[0]].index("#") + 1:].startswith(" ")  # the first line sets the style
        for n in field:
            lines[n] = _uncomment(lines[n], space)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _yaml_body(line: str) -> bool:
    """Is the comment's text YAML (a field or a sequence item), not prose?"""
    body = _uncomment(line).strip()
    try:
        value = yaml.safe_load(body)
    except yaml.YAMLError:
        return False
    return isinstance(value, (dict, list)) and body[:1] not in "[{"


def _units(lines: list[str]) -> tuple[list[list[int]], list[list[int]]]:
    """The commented-out fields (a commented YAML line and the commented lines indented under it), and
    every other commented YAML line alone (a field's first line without its children, or one child)."""
    content = [n for n, line in enumerate(lines) if line.strip() and not _is_comment(line)]
    yaml_lines = [n for n in range(content[0], len(lines)) if _is_comment(lines[n]) and _yaml_body(lines[n])
                  and (n < content[-1] or _indent(lines[n]) > 0)]  # not the file's trailer
    fields, inner = [], set()
    for n in yaml_lines:
        if n in inner:
            continue
        head = _uncomment(lines[n])
        group, m = [n], n + 1
        while m < len(lines) and _is_comment(lines[m]) and (_indent(_uncomment(lines[m])) > _indent(head) or (
                head.rstrip().endswith(":") and _uncomment(lines[m]).lstrip().startswith("- ")
                and _indent(_uncomment(lines[m])) == _indent(head))):
            group.append(m)
            m += 1
        inner.update(group[1:])
        fields.append(group)
    singles = [[n] for n in yaml_lines if [n] not in fields]
    return fields, singles


class _UncommentedWins(yaml.SafeLoader):
    """Reads B. Where the uncommented line repeats a key kf2jobset wrote itself (a pod's restartPolicy,
    a worker's sshd command), the user's line wins: that is what uncommenting it asks for (the API
    server refuses the duplicate, so the user has to delete one of them anyway)."""

    wins: set[int] = set()
    duplicates: list = []

    def construct_mapping(self, node, deep=False):
        out, lines = {}, {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line
            if key in out:
                type(self).duplicates.append((key, out[key], self.construct_object(value_node, deep=True)))
                if lines[key] in self.wins or line not in self.wins:
                    continue
            out[key] = self.construct_object(value_node, deep=True)
            lines[key] = line
        return out


_UncommentedWins.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _UncommentedWins.construct_mapping)


def _list_map(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _load_b(text: str, wins: set[int]) -> list:
    _UncommentedWins.wins, _UncommentedWins.duplicates = wins, []
    docs = list(yaml.load_all(text, Loader=_UncommentedWins))
    for _key, one, other in _UncommentedWins.duplicates:
        # a whole `env:` (or `volumes:` ...) uncommented where kf2jobset wrote its own entries: the two lists
        # are for the user to merge (the API server refuses the duplicate key, so this never passes silently)
        assume(not (_list_map(one) and _list_map(other)))
    if not _UncommentedWins.duplicates:
        from ruamel.yaml import YAML

        list(YAML(typ="safe", pure=True).load_all(text))  # and a strict reader agrees it is YAML
    return docs


def _tagged(lines: list[str]) -> list[str]:
    """Every comment line marked with its line number (`# ... # L12`), so that the output line it became
    is found even when the same toggle sits in several blocks; uncommented, the mark is an ordinary comment."""
    return [f"{line}  # L{n}" if _is_comment(line) else line for n, line in enumerate(lines)]


def _unset_nulls(obj):
    """Kubernetes reads a null field as an unset one (and kf2jobset writes neither)."""
    if isinstance(obj, dict):
        return {k: _unset_nulls(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, list):
        return [_unset_nulls(v) for v in obj]
    return obj


def _check(v1: str, units: list[list[list[int]]]) -> int:
    """Check the property for each unit (fields uncommented together) of `v1`; returns how many were checked."""
    src = _tagged(v1.splitlines())
    converted = _convert("\n".join(src) + "\n")
    assert converted is not None
    out = converted.splitlines()
    checked = 0
    for unit in units:
        variant = list(src)
        _uncomment_fields(variant, unit)
        a_text = _convert("\n".join(variant) + "\n")
        if a_text is None:
            continue  # uncommented, the v1 job is not valid: not a toggle
        a = _unset_nulls(list(yaml.safe_load_all(a_text)))
        b_lines, came_from = list(out), {}
        for n in (n for field in unit for n in field):
            hits = [m for m, line in enumerate(out) if line.strip() == src[n].strip()]
            assert len(hits) == 1, f"{src[n]!r} found {len(hits)} times in the output"
            came_from[n] = hits[0]
        _uncomment_fields(b_lines, [[came_from[n] for n in field] for field in unit])
        wins = set(came_from.values())
        try:
            b = _unset_nulls(_load_b("\n".join(b_lines) + "\n", wins))
        except yaml.YAMLError as exc:
            pytest.fail(f"uncommenting {[src[n] for f in unit for n in f]} in the output breaks it: {exc}")
        assert a == b, f"uncommenting {[src[n].strip() for f in unit for n in f]} means something else in the JobSet"
        checked += 1
    return checked


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_converted_text(case):
    check_golden(case / "expected.yaml", _convert((case / "input.yaml").read_text()))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_uncommenting_means_what_it_meant_in_v1(case):
    text = (case / "input.yaml").read_text()
    lines = text.splitlines()
    fields, singles = _units(lines)
    assert fields, "a fixture with commented-out fields"
    # a toggle may need another (a GPU request needs its limit): those v1 refuses alone are skipped
    assert 2 * _check(text, [[f] for f in fields]) >= len(fields), "most commented-out fields are toggles v1 accepts"
    _check(text, [[s] for s in singles])  # those v1 accepts uncommented alone
    assert _check(text, [fields]) == 1, "all toggles on at once"


# ---- generated toggles: a field of a job commented out where it stands, in either comment style --------

REPO = Path(__file__).resolve().parents[1]
BASES = [(c / "input.yaml").read_text() for c in CASES] + [
    (REPO / "fixtures" / case / "input.yaml").read_text()
    for case in ("pytorchjob/master-workers", "tfjob/v1beta1-ps-workers", "mpijob-v2beta1/openmpi")]
# fields whose value kf2jobset reads nowhere else (a GPU count, a port or a replica count would change
# other fields of the JobSet too, so commenting them out is not a local change)
POD_FIELDS = ("nodeSelector", "tolerations", "volumes", "affinity")
CONTAINER_FIELDS = ("resources", "env", "volumeMounts", "args", "command", "imagePullPolicy", "workingDir")


def _local(path: tuple) -> bool:
    try:
        t = path.index("template")
    except ValueError:
        return False
    rest = path[t + 1:]
    if rest[:1] == ("metadata",):
        return len(rest) >= 3 and rest[1] in ("labels", "annotations")
    if rest[:1] != ("spec",) or len(rest) < 2:
        return False
    if rest[1] in POD_FIELDS:
        return True
    if rest[1] == "containers" and len(rest) >= 4 and rest[3] in CONTAINER_FIELDS:
        return not (rest[3] == "resources" and len(rest) >= 6 and "gpu" in str(rest[5]))
    return False


def _candidates(text: str) -> list[tuple[int, int]]:
    """(first line, last line) of every local field and sequence item of the text's job."""
    from kf2jobset.text.comments import _nodes
    from kf2jobset.text.yamlio import parse_documents

    data = parse_documents(text, "b.yaml", without_comments=True)[0].data
    lines = text.splitlines()
    out = []
    for node in _nodes(data):
        if not _local(node.path):
            continue
        first = node.line
        col = len(lines[first]) - len(lines[first].lstrip(" "))  # the key's, or the item's dash column
        if isinstance(node.path[-1], int):
            col = lines[first].index("-", col)
        last = first
        for m in range(first + 1, len(lines)):
            if not lines[m].strip() or _is_comment(lines[m]):
                continue
            if _indent(lines[m]) <= col and not (_indent(lines[m]) == col and lines[m].lstrip().startswith("- ")
                                                  and not isinstance(node.path[-1], int)):
                break
            last = m
        out.append((first, last))
    return out


def _comment_out(lines: list[str], first: int, last: int, space: bool) -> list[int]:
    """Comment lines first..last out as an editor does: `#` at their smallest indentation."""
    col = min(_indent(lines[n]) for n in range(first, last + 1) if lines[n].strip())
    done = []
    for n in range(first, last + 1):
        if lines[n].strip() and not _is_comment(lines[n]):
            lines[n] = lines[n][:col] + ("# " if space else "#") + lines[n][col:]
            done.append(n)
    return done


@settings(max_examples=int(__import__("os").environ.get("KF2JOBSET_COMMENT_EXAMPLES", "20")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.sampled_from(range(len(BASES))), st.data(), st.booleans())
def test_a_field_commented_out_anywhere_comes_back_when_uncommented(base, data, space):
    text = BASES[base]
    candidates = _candidates(text)
    first, last = data.draw(st.sampled_from(candidates))
    lines = text.splitlines()
    field = _comment_out(lines, first, last, space)
    commented = _tagged(lines)
    converted = _convert("\n".join(commented) + "\n")
    assume(converted is not None)  # v1 refuses the job without this field (a mount without its volume ...)
    a = _unset_nulls(list(yaml.safe_load_all(_convert(text))))
    out = converted.splitlines()
    hits = []
    for n in field:
        found = [m for m, line in enumerate(out) if line.strip() == commented[n].strip()]
        assert len(found) == 1, f"{commented[n]!r} found {len(found)} times in the output"
        hits.append(found[0])
    _uncomment_fields(out, [hits])
    b = _unset_nulls(_load_b("\n".join(out) + "\n", set(hits)))
    assert a == b, f"lines {first + 1}-{last + 1} commented out and back mean something else"


# ---- commented-out keys users write, and what has no place to go ------------------------------------------

def _indent_of(lines: list[str], needle: str) -> tuple[int, int]:
    hits = [n for n, line in enumerate(lines) if line.strip() == needle]
    assert len(hits) == 1, f"{needle!r} found {len(hits)} times"
    return hits[0], _indent(lines[hits[0]])


def test_toggles_stay_in_their_block_when_a_directory_is_converted_in_place(tmp_path):
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    (tmp_path / "jobs").mkdir()
    job = tmp_path / "jobs" / "bench.yaml"
    job.write_text((Path(__file__).parent / "commented" / "mpi-launcher-command" / "input.yaml").read_text())
    result = CliRunner().invoke(main, ["convert", str(tmp_path / "jobs"), "--in-place", "--accept-mpi-ssh"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = job.read_text().splitlines()
    gpu, gpu_col = _indent_of(lines, "# nvidia.com/gpu: 8")
    limits, limits_col = _indent_of(lines, "limits:")
    assert limits < gpu and gpu_col == limits_col + 2 and lines[gpu - 1].strip() == "cpu: 4", "a child of limits:"
    command, command_col = _indent_of(lines, '#command: ["mpirun", "--allow-run-as-root"]')
    args = lines[command - 1]
    assert args.strip().startswith("args:") and "/opt/stencil" in args, "after the launcher container's args"
    assert command_col == _indent(args), "a field of the launcher container"
    memory, memory_col = _indent_of(lines, "#memory: 16Gi")
    assert lines[memory - 1].strip() == "cpu: 4" and lines[memory + 1].strip() == "limits:"
    assert memory_col == gpu_col, "requests: and limits: children alike"


MOVED = pytorchjob_text(
    "moved",
    replica_text("Master", replica="#restartPolicy: ExitCode",
                 container="command:\n  - sh\n  - -c\n  - |\n        echo hi\n  # - --verbose") + "  # the master ends here\n",
    replica_text("Worker", "2"), spec="runPolicy:\n  #backoffLimit: 3\n  ttlSecondsAfterFinished: 60")


def test_fields_that_move_take_their_commented_toggles_along_and_the_rest_is_counted():
    r = convert_text(MOVED, "moved.yaml", OPTIONS)
    assert not r.errors
    lines = r.new_text.splitlines()
    assert "#backoffLimit: 3" not in r.new_text and r.dropped_comments == 1, "runPolicy.backoffLimit has no place"
    # a replica's restartPolicy is its pods': the toggle goes into the master's pod spec
    toggle, toggle_col = _indent_of(lines, "#restartPolicy: ExitCode")
    policies = [n for n, line in enumerate(lines) if line.strip().startswith("restartPolicy:")]
    assert toggle - 1 == policies[0] and _indent(lines[policies[0]]) == toggle_col
    # prose at the end of the Master block ends the master replicatedJob, at its children's column
    prose, prose_col = _indent_of(lines, "# the master ends here")
    assert lines[prose + 1].strip() == "- name: worker" and prose_col == _indent(lines[prose + 1]) + 2
    # after a block scalar a comment line stays a comment (deeper, it would be the script's text)
    item, item_col = _indent_of(lines, "# - --verbose")
    assert lines[item - 1].strip() == "echo hi"
    data = yaml.safe_load(r.new_text)
    assert data["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["command"][2] == "echo hi\n"


def _sprinkled(text: str, rng) -> str:
    """Comment lines of every kind at odd indentations above a quarter of the lines, and at the end."""
    out = []
    for line in text.splitlines():
        if line.strip() and rng.random() < 0.25:
            col = max(0, _indent(line) + rng.choice([-4, -2, 0, 0, 2, 4]))
            out.append(" " * col + rng.choice(["#x: 1", "# - y", "# prose", "#  z: 2", "#- name: q"]))
        out.append(line)
    out.append(" " * rng.choice([0, 2, 6, 12]) + "# tail")
    return "\n".join(out) + "\n"


def test_comments_anywhere_never_change_what_the_outputs_say():
    import random

    from kf2jobset.k8s.schemacheck import normalise

    from .conftest import FIXTURES

    rng = random.Random(25)
    options = ConvertOptions(accept_mpi_ssh=True, katib=True)
    checked = 0
    for path in sorted(FIXTURES.glob("*/*/input.yaml"))[::2]:  # half of them keeps it quick
        plain = convert_text(path.read_text(), "input.yaml", options)
        if plain.errors or plain.new_text is None or any(res.new_text is not None for res in plain.results):
            continue  # job text inside a block scalar (kf2jobset/sources/jobs_in_strings.py): a `#` line there is text, or ends it
        r = convert_text(_sprinkled(path.read_text(), rng), "input.yaml", options)
        assert not r.errors, path
        # as the API server reads them: a key with no value is an absent key (kf2jobset/k8s/crdnulls.py; the
        # comment code puts an empty key back above its commented-out children, `name: #<name>` too)
        assert [normalise(d) for d in yaml.safe_load_all(r.new_text)] == \
            [normalise(d) for d in yaml.safe_load_all(plain.new_text)], path
        checked += 1
    assert checked >= 25
