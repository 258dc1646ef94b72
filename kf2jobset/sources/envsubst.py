"""v1 jobs kept as envsubst templates: `${VAR}` / `$VAR` placeholders filled in when applied.

What GNU gettext's `envsubst` substitutes (checked with the real binary, gettext-base 0.21):
`$NAME` and `${NAME}`, NAME = `[A-Za-z_][A-Za-z0-9_]*` (longest match); an unset variable becomes
empty unless the variables are named (`envsubst '${A} $B'`: only those). It leaves alone `$(NAME)`
(Kubernetes' own expansion, which kf2jobset writes), `${NAME:-default}` and other shell operators,
`${a.b}` (Katib's `${trialParameters.x}`), `$1`. Tools such as drone/envsubst and a8m/envsubst
also expand `${NAME:-default}`-style forms; kf2jobset recognises those too (they need a value just
the same) and says when GNU envsubst would leave one unexpanded.

A placeholder outside container commands/args makes the document a template. In commands and args
`$VAR` is usually the container shell's, so those strings are carried byte for byte and only listed.

A template converts when every placeholder sits in a string kf2jobset carries through (image, env
values, labels, paths ...). That is checked, not assumed: the job is converted with each placeholder
replaced by a stand-in token, twice with different tokens, and both outputs with the tokens put back
must be identical (the conversion did not read the values). Placeholders where kf2jobset needs the
value (replica counts, keys, container/env/port names, framework fields, anything the schema types as
a number) are an error that names them and the way forward: substitute first.

Pure: dicts in, dicts out.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import InvalidJobError, Kf2JobSetError, Location, Problem
from .. import claims as claim
from ..mappings import KindMapping
from ..notes import Note
from ..checks.staleness import SIZE_LITERALS_ANNOTATION
from . import placeholder_numbers as numeric
from ..text.treecopy import copy_tree

# `${NAME}`, `${NAME<op>...}` (drone/a8m forms, not GNU), `$NAME`.
PLACEHOLDER_RE = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<op>:?[-=+?][^{}]*)?\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))")
RULE = "envsubst"
# The command in hints; the shells put the file name in (fill_hint, from pipeline._locate).
PIPE = "envsubst < {file} | kf2jobset convert -"


def fill_hint(hint: str, file: str | None) -> str:
    if file in (None, "<stdin>", "-"):
        return hint.replace(" < {file}", "").replace("{file}", "-")
    return hint.replace("{file}", file)
INHERITED = " (inherited: the v1 API server or the operator's pods rejected this too)"


@dataclass(frozen=True)
class Placeholder:
    path: tuple  # where the string sits in the document
    text: str  # the whole string
    spellings: tuple  # the placeholders as written: `${TAG}`, `$NAMESPACE`, `${N:-2}`
    in_key: bool = False  # the string is a mapping key
    in_command: bool = False  # an item of a command/args list: the container shell's, usually

    @property
    def names(self) -> tuple:
        return tuple(dict.fromkeys(variable(s) for s in self.spellings))


def variable(spelling: str) -> str:
    m = PLACEHOLDER_RE.fullmatch(spelling)
    return (m.group("braced") or m.group("bare")) if m else spelling


def gnu_substitutes(spelling: str) -> bool:
    m = PLACEHOLDER_RE.fullmatch(spelling)
    return bool(m) and not m.group("op")


def find(doc: Any) -> list[Placeholder]:
    """Every string (value or key) of the document holding a placeholder, in document order."""
    found: list[Placeholder] = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and "$" in key:
                    spellings = tuple(m.group(0) for m in PLACEHOLDER_RE.finditer(key))
                    if spellings:
                        found.append(Placeholder(path + (key,), key, spellings, in_key=True))
                walk(value, path + (key,))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, path + (i,))
        elif isinstance(node, str) and "$" in node:
            spellings = tuple(m.group(0) for m in PLACEHOLDER_RE.finditer(node))
            if spellings:
                in_command = len(path) >= 2 and path[-2] in ("command", "args") and isinstance(path[-1], int)
                found.append(Placeholder(path, str(node), spellings, in_command=in_command))

    walk(doc, ())
    return found


def is_template(placeholders: list[Placeholder]) -> bool:
    return any(not p.in_command for p in placeholders)


# ---- where kf2jobset needs the value ------------------------------------------------------------

def needs_value(p: Placeholder) -> str | None:
    """Why conversion must know this value (None: a string it carries through)."""
    path = p.path
    if p.in_key:
        return "a mapping key decides what the entry is"
    if not path:
        return "the document itself"
    head = path[0]
    if head in ("apiVersion", "kind"):
        return "apiVersion and kind decide what the document is"
    if head == "metadata":
        if path[1:2] == ("generateName",):
            return "the name prefix decides the name-length limits of every Job and pod"
        return None  # name/namespace: converted with a note; labels, annotations: carried
    if head != "spec" or len(path) < 2:
        return None
    if isinstance(path[1], str) and path[1].endswith("ReplicaSpecs") and len(path) >= 4 and path[3] == "template":
        rest = path[4:]
        # ..., spec, containers, i, name | env, j, name | ports, j, name
        if len(rest) >= 4 and rest[0] == "spec" and rest[1] == "containers" and rest[3] == "name" and len(rest) == 4:
            return "the container name decides which container gets the operator's environment and port"
        if len(rest) == 6 and rest[:2] == ("spec", "containers") and rest[3] == "env" and rest[5] == "name":
            return "env names are merged with the variables the operator injected"
        if len(rest) == 6 and rest[:2] == ("spec", "containers") and rest[3] == "ports" and rest[5] == "name":
            return "the operator's port is found by its name"
        if len(rest) >= 6 and rest[:2] == ("spec", "containers") and rest[3] == "resources":
            return "resource quantities are checked: requests within limits, whole extended resources"
        return None
    if path[1:3] == ("runPolicy", "schedulingPolicy") and path[3:4] in (("queue",), ("priorityClass",)):
        return None
    if isinstance(path[1], str) and path[1].endswith("ReplicaSpecs") and path[3:4] == ("replicas",) or path == ("spec", "replicas"):
        return "replica counts decide the replicatedJobs, ranks and world size"
    if isinstance(path[1], str) and path[1].endswith("ReplicaSpecs") and path[3:4] == ("restartPolicy",):
        return "the restart policy decides the pods' restart policy and the Jobs' retry rules"
    return "this field decides how the job is converted"


def is_replica_count(p: Placeholder) -> bool:
    """`replicas: ${N}`: a whole replica count, which a JobSet can carry when nothing kf2jobset writes
    depends on the number (every size-derived value follows it: kf2jobset/checks/sizes.py)."""
    path = p.path
    # MPIJob v1alpha1's `spec.replicas` is its worker count (kf2jobset/upgrade/mpi.py)
    return ((len(path) == 4 and path[0] == "spec" and isinstance(path[1], str) and path[1].endswith("ReplicaSpecs")
             and path[3] == "replicas" or tuple(path) == ("spec", "replicas"))
            and len(p.spellings) == 1 and p.text.strip() == p.spellings[0])


# Replica counts a template is converted with, twice: three digits, so the JobSet's name-length rules are
# checked for pod indexes up to 999, and primes unlikely to be any other number of the job.
COUNT_STAND_INS = ((101, 103, 107, 109, 113), (127, 131, 137, 139, 149))


def _with_counts(doc, counts: dict[tuple, int]):
    for path, n in counts.items():
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = n
    return doc


def _counts_back(objects: list, notes: list, counts: dict[tuple, int], spelled: dict[tuple, str]) -> None:
    """The JobSet's replicas (and the report's words) with the stand-in counts put back as placeholders."""
    back = {n: spelled[path] for path, n in counts.items()}
    for obj in objects:
        if isinstance(obj, dict) and obj.get("kind") == "JobSet":
            for rjob in (obj.get("spec") or {}).get("replicatedJobs") or []:
                if rjob.get("replicas") in back:
                    rjob["replicas"] = back[rjob["replicas"]]
    pattern = re.compile(r"\b(" + "|".join(str(n) for n in back) + r")\b")
    for i, note in enumerate(notes):
        if pattern.search(note.message):
            notes[i] = dataclasses.replace(note, message=pattern.sub(lambda m: back[int(m.group(1))], note.message))


def _size_literals(conv) -> str | None:
    for obj in conv.objects:
        ann = ((obj.get("metadata") or {}).get("annotations") or {}) if isinstance(obj, dict) else {}
        if SIZE_LITERALS_ANNOTATION in ann:
            return ann[SIZE_LITERALS_ANNOTATION]
    return None


# ---- conversion with stand-in tokens --------------------------------------------------------------

def _tokens(spellings: list[str], taken: str, marks: str) -> dict[str, str]:
    """spelling -> a token: lower-case letters (valid in names, label values, paths, images, env
    names), all of one length, found nowhere in the document."""
    for salt in range(100):
        out = {}
        for i, s in enumerate(spellings):
            letters = "".join("abcdefghijklmnopqrstuvwxyz"[(i // 26 ** k) % 26] for k in (2, 1, 0))
            out[s] = f"{marks}{salt:02d}{letters}{marks[::-1]}"
        if not any(t in taken for t in out.values()):
            return out
    raise ValueError("no stand-in token is free")  # 100 salts all in the document: not a real manifest


def _substitute_doc(doc, table: dict[str, str], name: str | None = None, numbers=(), number_table=None):
    """A copy of the document (layout kept: flow style, quoting) with the template's placeholders
    replaced; commands/args are left as written. `name`: metadata.name, replaced whole; `numbers`:
    placeholders given the number stand-ins of `number_table`."""
    def sub(s):
        new = PLACEHOLDER_RE.sub(lambda m: table.get(m.group(0), m.group(0)), s)
        return s if new == s else (new if type(s) is str else _same_type(s, new))

    def walk(n, path):
        if isinstance(n, dict):
            for k, v in list(n.items()):
                if isinstance(v, str) and "$" in v:
                    n[k] = sub(v)
                else:
                    walk(v, path + (k,))
        elif isinstance(n, list):
            if path and path[-1] in ("command", "args"):
                return
            for i, v in enumerate(n):
                if isinstance(v, str) and "$" in v:
                    n[i] = sub(v)
                else:
                    walk(v, path + (i,))

    out = copy_tree(doc)
    walk(out, ())
    if name is not None:
        out["metadata"]["name"] = table[name]
    if numbers:
        numeric.put_in(out, numbers, number_table)
    return out


_DNS1035_PART = re.compile(r"[a-z0-9-]*")


def _name_problem(name: str) -> Problem | None:
    """What no value can fix in a templated name: characters outside a DNS-1035 label around the placeholders."""
    pieces = PLACEHOLDER_RE.split(name)
    fixed = [pieces[i] for i in range(0, len(pieces), 4)]  # split() interleaves the 3 groups of each match
    bad = [f for f in fixed if not _DNS1035_PART.fullmatch(f)]
    if bad or (fixed[-1].endswith("-")) or (fixed[0][:1].isdigit() or fixed[0].startswith("-")):
        return Problem(f"{name!r} is not a DNS-1035 label whatever the values of its envsubst placeholders "
                       "(lower-case letters, digits and '-', starting with a letter, ending with a letter or digit)",
                       Location(path=("metadata", "name")), rule="dns-1035")
    return None


def _same_type(old: str, new: str) -> str:
    try:
        return type(old)(new)
    except Exception:  # a str subclass that cannot be built from text: plain text is enough
        return new


class PlaceholderRestorer:
    """Puts placeholders back where tokens are, in dicts, lists, strings and dataclasses (in place)."""

    def __init__(self, table: dict[str, str]):
        self.back = {t: s for s, t in table.items()}
        self.pattern = re.compile("|".join(re.escape(t) for t in sorted(self.back, key=len, reverse=True)))
        self.seen: dict[int, Any] = {}

    def text(self, s: str) -> str:
        if not self.back:
            return s
        new = self.pattern.sub(lambda m: self.back[m.group(0)], s)
        return s if new == s else (new if type(s) is str else _same_type(s, new))

    def __call__(self, obj):
        if isinstance(obj, str):
            return self.text(obj)
        if obj is None or isinstance(obj, (int, float, bool, KindMapping)):
            return obj
        if id(obj) in self.seen:
            return self.seen[id(obj)]
        self.seen[id(obj)] = obj
        if isinstance(obj, dict):
            items = [(self(k) if isinstance(k, str) else k, self(v)) for k, v in obj.items()]
            if any(k is not old for (k, _), old in zip(items, list(obj), strict=False)):
                obj.clear()
            for k, v in items:
                obj[k] = v
        elif isinstance(obj, list):
            obj[:] = [self(v) for v in obj]
        elif isinstance(obj, tuple):
            new = tuple(self(v) for v in obj)
            new = type(obj)(*new) if hasattr(obj, "_fields") else new
            self.seen[id(obj)] = new
            return new
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            for f in dataclasses.fields(obj):
                value = getattr(obj, f.name)
                new = self(value)
                if new is not value:
                    object.__setattr__(obj, f.name, new)
        return obj


def convert_template(doc: dict, placeholders: list[Placeholder], convert: Callable[[dict], Any], *,
                     check_name: Callable[[dict, int], bool]):
    """Convert a template (`convert(doc)`: the usual checked conversion, raising Kf2JobSetError).
    `check_name(jobset, n)`: does the JobSet pass the name-length rules with an n-character name."""
    template = [p for p in placeholders if not p.in_command]
    numbers = [p for p in template if numeric.kind(p)]  # given number stand-ins (placeholder_numbers.py)
    needed = [(p, why) for p in template if p not in numbers and (why := needs_value(p))]
    sized = [p for p, _ in needed if is_replica_count(p)][:len(COUNT_STAND_INS[0])]
    # with other values needed as well, the counts are asked for with them (whether the JobSet can carry
    # a count is only known from a conversion, which needs the others)
    everything = needed
    needed = [(p, why) for p, why in needed if p not in sized]
    first_counts = {p.path: n for p, n in zip(sized, COUNT_STAND_INS[0], strict=False)}
    second_counts = {p.path: n for p, n in zip(sized, COUNT_STAND_INS[1], strict=False)}
    spelled = {p.path: p.text for p in sized}
    spellings = sorted({s for p in template if p not in sized and p not in numbers for s in p.spellings})
    name = next((p.text for p in template if p.path == ("metadata", "name")), None)
    if name is not None:
        # The whole name gets one stand-in: it is then checked at the stand-in's length, not at the
        # length of its fixed part plus stand-ins (the limit is worked out below and put in TPL002).
        problem = _name_problem(name)
        if problem:
            raise InvalidJobError(problem)
        spellings += [name] if name not in spellings else []
    taken = "\n".join(p.text for p in placeholders) + _all_text(doc)
    first, second = _tokens(spellings, taken, "zq"), _tokens(spellings, taken, "xv")
    first_numbers, second_numbers = numeric.stand_ins(numbers, 0, taken), numeric.stand_ins(numbers, 1, taken)
    try:
        conv = convert(_with_counts(_substitute_doc(doc, first, name, numbers, first_numbers), first_counts))
    except Kf2JobSetError as err:
        err = _explain(err, template, first, first_numbers)
        if not needed:
            raise err from None
        # All placeholders that need values in one message: those the conversion tripped over too.
        at = {p.path for p, _ in everything}
        more = [pr for pr in err.problems if pr.rule == RULE and tuple(pr.location.path) not in at]
        raise InvalidJobError([value_needed(p, why) for p, why in everything] + more) from None
    if needed:
        raise InvalidJobError([value_needed(p, why) for p, why in everything])
    try:
        other = convert(_with_counts(_substitute_doc(doc, second, name, numbers, second_numbers), second_counts))
    except Kf2JobSetError:
        other = None
    if sized:
        # the emitted JobSet carries the placeholders; conv.jobset keeps the stand-in counts for the report
        conv.output = copy_tree(conv.objects)
        _counts_back(conv.output, conv.notes, first_counts, spelled)
        if other is not None:
            other.output = copy_tree(other.objects)
            _counts_back(other.output, other.notes, second_counts, spelled)
    kept_name = name is not None and (conv.jobset.get("metadata") or {}).get("name") == first[name]  # not --name
    limit = _name_limit(conv.jobset, check_name) if kept_name else None
    if limit is not None and len(PLACEHOLDER_RE.sub("", name)) >= limit:
        raise InvalidJobError(Problem(
            f"{name!r}: this job's JobSet name may be at most {limit} characters (JobSet's name-length limits), and "
            f"its text without the envsubst placeholders is already {len(PLACEHOLDER_RE.sub('', name))}",
            Location(path=("metadata", "name")), rule="jobset-name", hint="shorten the name"))
    mine = numeric.put_back(PlaceholderRestorer(first)(conv.objects), first_numbers)
    theirs = numeric.put_back(PlaceholderRestorer(second)(other.objects), second_numbers) if other is not None else None
    if sized:
        _carried_counts(conv, mine, theirs, sized)
    if theirs != mine:
        names = ", ".join(dict.fromkeys(n for p in template for n in p.names))
        raise InvalidJobError(Problem(
            f"the conversion depends on the value of envsubst placeholder(s) {names}: it cannot be converted as a template",
            Location(path=template[0].path), rule=RULE, hint=_forward([s for p in template for s in p.spellings])))
    PlaceholderRestorer(first)((conv.job, conv.plan, conv.notes, conv.jobset))  # the JobSet a target keeps beside its objects
    numeric.notes_back(conv.notes, first_numbers)
    conv.notes.extend(template_notes(conv, placeholders, limit))
    return conv


def _carried_counts(conv, mine: list, theirs: list | None, sized: list[Placeholder]) -> None:
    """A replica-count placeholder converts only when the JobSet carries it as the replicatedJob's
    replicas and nothing else kf2jobset wrote depends on the number."""
    shown = ", ".join(p.text for p in sized)
    literals = _size_literals(conv)
    if literals or theirs is None or theirs != mine:
        why = (f"{literals} must be written from the number (no pod label carries it: SZ002)"
               + (_MPI_GENERATED if all(p.startswith("/etc/mpi/") for p in literals.split(", ")) else "") if literals else
               "the conversion depends on the number beyond the replicatedJob's replicas (e.g. a replica type split "
               "into two replicatedJobs, or a target whose size is not a replicatedJob's replicas)")
        raise InvalidJobError([value_needed(p, "replica counts decide the replicatedJobs, ranks and world size", why)
                               for p in sized])
    carried = [r.get("name") for o in mine if isinstance(o, dict) and o.get("kind") == "JobSet"
               for r in (o.get("spec") or {}).get("replicatedJobs") or [] if r.get("replicas") in {p.text for p in sized}]
    if len(carried) != len(sized):
        raise InvalidJobError([value_needed(p, "replica counts decide the replicatedJobs, ranks and world size",
                                            f"{shown} does not reach one replicatedJob's replicas as it is")
                               for p in sized])


# the MPI lists are literal only in a ConfigMap (or before JobSet v0.7): the init container can write them
_MPI_GENERATED = "; with --mpi-hostfile generated the launcher writes them at start from its pod count"


def _all_text(doc) -> str:
    parts = []
    stack = [doc]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            parts += [k for k in n if isinstance(k, str)]
            stack += list(n.values())
        elif isinstance(n, list):
            stack += n
        elif isinstance(n, str):
            parts.append(n)
    return "\n".join(parts)


def _name_limit(jobset: dict, check_name) -> int:
    """The longest name the JobSet's name-length rules accept (0: none)."""
    lo, hi = 0, 63
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if check_name(jobset, mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def value_needed(p: Placeholder, why: str, detail: str | None = None) -> Problem:
    shown = ", ".join(p.spellings)
    message = (f"envsubst placeholder {shown} where kf2jobset needs the value: {why}"
               + (f": {detail}" if detail else ""))
    return Problem(message, Location(path=p.path), rule=RULE, hint=_forward(p.spellings))


def _forward(spellings) -> str:
    names = list(dict.fromkeys(variable(s) for s in spellings))
    settings = " ".join(f"{n}=..." for n in names)
    text = f"substitute first: {settings} {PIPE}"
    unexpanded = [s for s in spellings if not gnu_substitutes(s)]
    if unexpanded:
        text += f"; GNU envsubst leaves {', '.join(unexpanded)} as is: use a tool that expands defaults (drone/envsubst, a8m/envsubst)"
    return text


def _explain(err: Kf2JobSetError, template: list[Placeholder], table: dict[str, str],
             number_table: dict | None = None) -> Kf2JobSetError:
    """Errors of the stand-in conversion: tokens back to placeholders; an error at (or on the entry
    just above) a placeholder is that placeholder's."""
    restore = PlaceholderRestorer(table)

    def words(text: str) -> str:
        return numeric.words_back(restore.text(text), number_table)
    problems = []
    hit = False
    for pr in err.problems:
        path = tuple(pr.location.path)
        mine = [p for p in template if path and p.path[:len(path)] == path and len(p.path) - len(path) <= 1]
        message = words(pr.message)
        if mine:
            message = message.replace(INHERITED, "")  # the template never reached an API server
            hit = True
            p = mine[0]
            spellings = tuple(dict.fromkeys(s for q in mine for s in q.spellings))
            problems.append(Problem(f"envsubst placeholder {', '.join(spellings)} where kf2jobset needs the value: "
                                    f"{message}", dataclasses.replace(pr.location, path=p.path if len(mine) == 1 else path),
                                    RULE, _forward(spellings)))
        else:
            problems.append(Problem(message, pr.location, pr.rule, words(pr.hint) if pr.hint else pr.hint))
    return InvalidJobError(problems) if hit else type(err)(problems)


# ---- what the report and the shells say -------------------------------------------------------------

def template_notes(conv, placeholders: list[Placeholder], name_limit: int | None) -> list[Note]:
    template = [p for p in placeholders if not p.in_command]
    written = "\n".join(_all_text(o) for o in conv.objects)
    # what the JobSet still holds (a --name may have replaced the only use of a variable)
    names = list(dict.fromkeys(variable(s) for p in template for s in p.spellings if s in written))
    shell_format = " ".join("${" + n + "}" for n in names)
    in_commands = [s for s in dict.fromkeys(s for p in placeholders if p.in_command for s in p.spellings)
                   if variable(s) not in names]
    own = sorted(_own_references(conv, placeholders))
    message = f"the JobSet is an envsubst template, like the job: it still needs {', '.join(names)}"
    unexpanded = sorted({s for p in template for s in p.spellings if not gnu_substitutes(s)})
    if unexpanded:
        message += f" ({', '.join(unexpanded)}: GNU envsubst leaves these as is)"
    if in_commands:
        message += (f"; commands/args also reference {', '.join(in_commands)}, carried as written: "
                    "plain envsubst replaces those too")
    if own:
        message += f"; kf2jobset's own scripts use {', '.join(own)}, which plain envsubst would blank"
    # none left: every placeholder sat in a field the conversion left out (JS040's schedulingPolicy)
    notes = [Note("TPL001", "unchanged", message, source_path="metadata",
                  action=f"substitute when applying, naming the variables: envsubst '{shell_format}' < FILE | kubectl apply -f -",
                  warn=True, unchecked="says which envsubst variables the whole JobSet text holds; "
                  "tests/test_envsubst.py substitutes them and validates the result")] if names else []
    meta = conv.jobset.get("metadata") or {}
    for p in template:
        if p.path == ("metadata", "name") and meta.get("name") == p.text:  # not renamed with --name
            fixed = len(PLACEHOLDER_RE.sub("", p.text))
            notes.append(Note(
                "TPL002", "approximated",
                f"metadata.name {p.text} holds envsubst placeholder(s): the JobSet name could not be checked; "
                f"after substitution it must be a DNS-1035 label (lower-case letters, digits, '-', starting with a "
                f"letter) of at most {name_limit} characters (JobSet's name-length limits for this job)"
                + (f", so {' '.join(p.names)} may add at most {name_limit - fixed}" if fixed else ""),
                source_path="metadata.name", target_path="metadata.name",
                action=f"keep the substituted name within {name_limit} characters", warn=True,
                claims=(claim.equals("metadata.name", p.text),)))
        elif p.path == ("metadata", "namespace"):
            notes.append(Note(
                "TPL002", "approximated",
                f"metadata.namespace {p.text} holds envsubst placeholder(s): it could not be checked; after "
                "substitution it must be a DNS-1123 label (lower-case letters, digits, '-') of at most 63 characters",
                source_path="metadata.namespace", target_path="metadata.namespace",
                action="substitute an existing namespace", warn=True,
                claims=(claim.equals("metadata.namespace", p.text),)))
    return notes


def _own_references(conv, placeholders) -> set[str]:
    """envsubst references in the output that the job did not hold: kf2jobset's shell scripts."""
    before = {s for p in placeholders for s in p.spellings}
    found = set()
    for obj in conv.objects:
        for m in PLACEHOLDER_RE.finditer(_all_text(obj)):
            if m.group(0) not in before and gnu_substitutes(m.group(0)):
                found.add(m.group(0))
    return found
