"""Prometheus rule files that fail to load: read by the prometheus-rules-invalid signature and by the
fallback alike.

A file under prometheus.yml's rule_files is YAML in the rule format (`groups:`, each group a name and
its rules); the rule manager's "loading groups failed" and main's "error loading rules" say one did not
load, and promtool's `check rules`/`test rules` say the same before Prometheus does. By its cause: a
file in Prometheus 1.x's rule syntax (ALERT ... IF ...), which 2.0 replaced with YAML (`promtool update
rules`); a value holding an unquoted ': ' (YAML's "mapping values are not allowed in this context"); a
file that is not a rule file at all (a list, a Grafana dashboard); one rule that is incomplete.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Prometheus's own words for a rule file it did not load (the server's, 2.x and 1.x's rulefmt).
RULES_FAILED = re.compile(r"msg=\"?loading groups failed|\berror loading rules\b|\binto rulefmt\.RuleGroups?\b"
                          r"|not found in type rulefmt\.")
# A YAML error where the log shows a rule file being read (promtool's check or unit test of one).
YAML_ERROR = re.compile(r"^\s*(?:FAILED:\s*)?yaml: line \d+: ")
RULES_READ = re.compile(r"promtool\s+(?:test|check)[\s-]+rules|Unit Testing:|\brule_files\b|rule manager"
                        r"|Checking \S+\.rules?\b")
_FILE = re.compile(r"err=\"?(?P<file>/[^\s:\"]+): |promtool\s+(?:test|check)[\s-]+rules\s+(?P<checked>\S+)"
                   r"|Unit Testing:\s+(?P<tested>\S+)|Checking (?P<read>\S+)")
_V1_SYNTAX = re.compile(r"`ALERT\b|cannot unmarshal !!str `(?:ALERT|IF|FOR|LABELS|ANNOTATIONS)\b")
_UNQUOTED = re.compile(r"mapping values are not allowed in this context")
_NOT_RULES = re.compile(r"cannot unmarshal !!(?:seq|map|str) .*into rulefmt\.RuleGroups|field (?P<field>\w+) not found "
                        r"in type rulefmt\.RuleGroups")
_RULE_INVALID = re.compile(r"group \\?\"(?P<group>[^\"\\]+)\\?\", rule \d+(?:, \\?\"(?P<rule>[^\"\\]*)\\?\")?: "
                           r"(?P<problem>[^\"\\]+)")
_FORMAT = ("a rule file is YAML in the rule format: `groups:` at the top, each group a `name:` and its `rules:`, each "
           "rule an `alert:` or a `record:` with its `expr:` (and `for:`, `labels:`, `annotations:`)")


def rule_file(lines: Sequence[str]) -> str | None:
    """The rule file the log names, where it does."""
    for line in lines:
        match = _FILE.search(line)
        if match:
            return next(value for value in match.groupdict().values() if value)
    return None


def reads_rules(lines: Sequence[str]) -> bool:
    """The log shows a rule file being read (a YAML error alone may be any file's)."""
    return any(RULES_READ.search(line) or RULES_FAILED.search(line) for line in lines)


def rules_fix(lines: Sequence[str]) -> str:
    """The fix for the rule file `lines` say did not load, by the cause they state."""
    text = " ".join(lines)
    file = rule_file(lines)
    named = file or "the rule file"
    check = f"`promtool check rules {file or 'FILE'}` tests it before Prometheus loads it"
    invalid = _RULE_INVALID.search(text)
    if _V1_SYNTAX.search(text):
        cause = (f"{named} is in Prometheus 1.x's rule syntax (ALERT ... IF ...); the rule format changed in Prometheus "
                 f"2.0 to YAML: convert it with `promtool update rules {file or 'FILE'}` (a 2.x promtool writes the "
                 "converted file beside it with .yml added), then list that file under rule_files. "
                 f"The YAML rule format: {_FORMAT}")
    elif _UNQUOTED.search(text):
        cause = (f"{named} has a value with an unquoted ': ' in it (YAML reads it as a new key): put the value in quotes, "
                 "as annotations' summary and description texts usually need (quoted strings: `description: \"...: "
                 "{{ $value }}\"`). The YAML rule format: " + _FORMAT)
    elif (wrong := _NOT_RULES.search(text)) is not None:
        what = f" (field {wrong['field']} is no rule file's)" if wrong["field"] else ""
        cause = (f"{file or 'a file under rule_files'} is not a rule file{what}: {_FORMAT}; a file of another kind (a Grafana dashboard, a list of "
                 "rules without `groups:`) does not belong under rule_files")
    elif invalid:
        rule = f" rule {invalid['rule']}" if invalid["rule"] else " a rule"
        cause = (f"{named} loads, but{rule} of group {invalid['group']} is invalid ({invalid['problem'].strip()}): "
                 f"correct that rule; {_FORMAT}")
    else:
        cause = f"{named} is not valid YAML in the rule format: {_FORMAT}"
    return (f"{cause}. {check}; Prometheus keeps no rules from a file it cannot load (at start it stops). stackctl's "
            "own prometheus.yml lists no rule_files: the file is from a configuration added by hand")
