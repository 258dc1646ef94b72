"""Go's text/template read as Helm runs it (kf2jobset/sources/chart/gotemplate.py): trims, strings that hold
`}}`, comments, blocks; and pipelines taken apart (indentation, helper calls, reads of the root)."""
from __future__ import annotations

import pytest

from kf2jobset.sources.chart import gotemplate as gt


def test_trims_eat_white_space_and_line_breaks_beside_the_action():
    pieces = gt.lex("a:\n  {{- if .x }}\n  b: 1\n  {{- end -}}\n\nc: 2")
    texts = [p for p in pieces if isinstance(p, str)]
    assert texts == ["a:", "\n  b: 1", "c: 2"]


def test_a_dash_without_a_space_is_a_number_not_a_trim():
    (_, action, _) = gt.lex("x{{-3}}y")
    assert action.body == "-3" and not action.trim_left


def test_strings_may_hold_the_closing_delimiter():
    (_, action, _) = gt.lex('{{ printf "}}%s" `}}` .x }}')
    assert action.body == 'printf "}}%s" `}}` .x'


def test_comments_and_their_trims():
    pieces = gt.lex("a\n{{- /* note }} */ -}}\nb")
    assert pieces[0] == "a" and pieces[1].is_comment and pieces[2] == "b"


def test_blocks_nest_with_their_branches():
    nodes = gt.parse("{{ if .a }}A{{ else if .b }}{{ range .c }}C{{ end }}{{ else }}D{{ end }}")
    (block,) = nodes
    assert [b.keyword for b in block.branches] == ["if", "else if", "else"]
    assert block.branches[1].header == ".b" and block.branches[1].body[0].kind == "range"


def test_declarations_write_nothing():
    nodes = gt.parse("{{- $x := .Values.a }}{{ $x = 2 }}{{ $x }}")
    assert [type(n).__name__ for n in nodes] == ["Silent", "Silent", "Out"]


@pytest.mark.parametrize("text, line", [("{{ if .a }}\nx\n", 1), ("a\n{{ end }}", 2), ("{{ .a ", 1)])
def test_unbalanced_templates_name_the_line(text, line):
    with pytest.raises(gt.TemplateError) as err:
        gt.parse(text)
    assert err.value.line == line


def test_indenting_pipelines_are_taken_apart():
    assert gt.indented('include "x.labels" . | nindent 4') == gt.Indented('include "x.labels" .', "nindent", 4)
    assert gt.indented("toYaml .Values.tolerations | indent 8") == gt.Indented("toYaml .Values.tolerations", "indent", 8)
    assert gt.indented("nindent 6 (toYaml .Values.env)") == gt.Indented("toYaml .Values.env", "nindent", 6)
    assert gt.indented(".Values.image") == gt.Indented(".Values.image", "", 0)
    assert gt.helper_call('include "train.container" $') == ("train.container", "$")


def test_reads_of_dot_are_rewritten_to_the_root_outside_strings():
    assert gt.rooted('include "x" . | printf "%s.y" .Values.a ($.b) $v.c') == 'include "x" $ | printf "%s.y" $.Values.a ($.b) $v.c'
    assert gt.variables('printf "$no" $a (index $b 0)') == {"$a", "$b"}
