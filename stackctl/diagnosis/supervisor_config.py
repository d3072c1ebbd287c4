"""supervisord's configuration file it cannot parse: read by the supervisor-config-invalid signature and by
the fallback alike.

supervisord reads its ini files with Python's ConfigParser, and `supervisorctl reread`/`update` report
the same errors as CANT_REREAD:

- "File contains no section headers." (MissingSectionHeaderError): the file's first setting comes
  before any `[section]`; a conf.d/ include file of program settings without its `[program:NAME]`
  line (supervisor#1566, opencanary_web#12, supervisor#902), or a file that is no ini at all (an error
  saved in its place: kuoruan/shell-scripts#44);
- "File contains parsing errors" / "Source contains parsing errors" (ParsingError): a line that is
  neither `[section]` nor `key = value`;
- quotation marks kept in a value: ConfigParser does not strip them, so `loglevel = "WARN"` is the
  level '"WARN"' and `logfile = "/x.log"` a path starting with a quote (supervisor#566, #946);
- a path that is a template's placeholder never filled in: "The directory named as part of the path {{
  settings.SUPERVISOR.logs_directory }}/supervisord.log does not exist" (supervisor#634): a file written for a
  template engine (Jinja, Ansible, Salt, envsubst's `${X}`, ERB's `<%= %>`) and copied as it is; supervisord
  expands only its own `%(name)s`;
- a value of the wrong kind: "not a valid boolean value" (supervisor#113), an `environment=` item
  without `=` ("Unexpected end of key/value pairs", supervisor#515), a quotation not closed
  ("No closing quotation", supervisor#1557).

stackctl's native runtime writes its own supervisord.conf (every section headed, no quotes, no
includes): these come from a supervisord configuration of the host's own, or one edited by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Each reading: its kind and what the error names (a file, a section, a value).
_NO_SECTION = re.compile(r"File contains no section headers\.?(?:.*?\bfile: '?(?P<file>/?[^',\s]+)'?,(?:\.\.\.)? (?:line: )?"
                         r"(?P<line>\d+)(?:.*?(?P<content>'[^']*'|\"[^\"]*\"))?)?")
_PARSING = re.compile(r"(?:File|Source) contains parsing errors:?\s*'?(?P<file>[^'\s]+)?'?(?:.*?\[line\s+(?P<line>\d+)\]:"
                      r"\s*(?P<content>.+))?")
# A value repr'd with quotation marks inside it ('"WARN"', "'x'"), or a path Supervisor names with a quote first.
_QUOTED_VALUE = re.compile(r"(?P<what>bad logging level name|not a valid boolean value:) ?(?P<value>'\"[^'\"]*\"'"
                           r"|\"'[^'\"]*'\")|(?P<path>The directory named as part of the path) (?P<quoted>[\"'][^\"']+[\"'])")
# A placeholder of a template engine left in a path (supervisord's own %(name)s it expands itself).
_PLACEHOLDER = r"(?:\{\{.*?\}\}|\{%.*?%\}|\$\{\w+\}|<%.*?%>|@\w+@)"
_TEMPLATE_PATH = re.compile(r"The directory named as part of the path (?P<path>[^\n]*?" + _PLACEHOLDER
                            + r"[^\n]*?) does not exist")
_NOT_BOOLEAN = re.compile(r"not a valid boolean value: (?P<value>'[^']*'|\"[^\"]*\")")
_PAIRS = re.compile(r"Unexpected end of key/value pairs(?: in value (?P<value>'[^']*')| in section '(?P<section>[^']+)')*")
_CLOSING_QUOTE = re.compile(r"No closing quotation(?: in section '(?P<section>[^']+)')?")
_BADLY_FORMATTED = re.compile(r"Format string (?P<format>'.*'|\".*\") for '(?P<option>[^']+)' is badly formatted")
_FILE = re.compile(r"\(file: '?(?P<file>[^')]+)'?\)")
CONFIG_INVALID = re.compile(r"File contains no section headers|(?:File|Source) contains parsing errors"
                            r"|bad logging level name '[\"']|not a valid boolean value:"
                            r"|The directory named as part of the path (?:[\"']|[^\n]*?"
                            + _PLACEHOLDER + r")|Unexpected end of key/value pairs"
                            r"|No closing quotation in section|Format string .* is badly formatted")
# The first line of a headerless file that is no ini file at all: a traceback, HTML, JSON saved in its place.
_NOT_INI = re.compile(r"^['\"]\s*(?:Traceback|<|\{)")


@dataclass(frozen=True)
class ConfigError:
    kind: str  # "section header", "parsing", "template", "quoted value", "boolean", "environment", "quotation", "percent"
    file: str
    detail: str  # the line, value or section the error names


def config_error(text: str) -> ConfigError | None:
    """What supervisord could not parse in `text`, or None."""
    if not CONFIG_INVALID.search(text):
        return None
    file = (match["file"] if (match := _FILE.search(text)) else "")
    if (match := _BADLY_FORMATTED.search(text)) is not None:
        return ConfigError("percent", file, f"{match['option']}: {match['format']}")
    if (match := _NO_SECTION.search(text)) is not None:
        return ConfigError("section header", match["file"] or file, match["content"] or "")
    if (match := _PARSING.search(text)) is not None:
        return ConfigError("parsing", match["file"] or file, (match["content"] or "").strip())
    if (match := _TEMPLATE_PATH.search(text)) is not None:
        return ConfigError("template", file, match["path"])
    if (match := _QUOTED_VALUE.search(text)) is not None:
        return ConfigError("quoted value", file, match["value"] or match["quoted"])
    if (match := _NOT_BOOLEAN.search(text)) is not None:
        return ConfigError("boolean", file, match["value"])
    if (match := _PAIRS.search(text)) is not None:
        return ConfigError("environment", file, match["value"] or match["section"] or "")
    if (match := _CLOSING_QUOTE.search(text)) is not None:
        return ConfigError("quotation", file, match["section"] or "")
    return None


_RELOAD = ("then `supervisorctl reread` and `supervisorctl update` (or restart supervisord). stackctl's native "
           "runtime writes its own supervisord.conf (every section headed, no quoted values, no includes): this is a "
           "supervisord configuration of the host's own or one edited by hand")


def config_fix(error: ConfigError) -> str:
    file = error.file or "the file supervisord names"
    if error.kind == "section header":
        shown = f" (its first line: {error.detail})" if error.detail else ""
        if _NOT_INI.search(error.detail):
            return (f"{file} is no supervisord configuration{shown}: something else was saved in its place (an "
                    "error, a page); write it again (`echo_supervisord_conf` prints a sample), " + _RELOAD)
        return (f"{file} has settings before any section header{shown}: every supervisord ini file starts with a "
                "section line, and a program's file in conf.d/ (or supervisord.d/) must begin with its `[program:NAME]` "
                "line above command= and the rest (NAME: the name supervisorctl will show; `[group:NAME]`, "
                "`[eventlistener:NAME]` for those); a file saved with a byte-order mark ('\\ufeff' before the first "
                "line) needs saving as plain UTF-8; " + _RELOAD)
    if error.kind == "percent":
        return (f"supervisord expands `%(name)s` in its values, so a literal % in a value of {file} ({error.detail}) "
                "must be escaped as %%: `-Xloggc:/tmp/gc_%%t_%%p.log`, `date +%%Y-%%m-%%d`, a URL's `%%20`; a "
                "format the program itself reads (`%(asctime)s` for Python's logging) is written `%%(asctime)s`; or "
                "move the command into a script that command= runs, " + _RELOAD)
    if error.kind == "parsing":
        shown = f" ({error.detail})" if error.detail else ""
        return (f"a line of {file}{shown} is neither a `[section]` line nor `key = value`: add the missing `=`, put the "
                "line under its section, or indent a value's continuation lines; a comment starts with `;` or `#` at the "
                "line's start; " + _RELOAD)
    if error.kind == "template":
        return (f"the path {error.detail} in {file} still holds a template's placeholder that was never filled in "
                "(Jinja or Ansible `{{ }}`, envsubst `${X}`, ERB `<%= %>`): the file was copied from a template instead "
                "of being rendered, and supervisord expands only its own `%(here)s` and `%(ENV_X)s`. Put the real path "
                "there (logfile=, childlogdir=, a program's stdout_logfile=), or render the template with its tool "
                "before supervisord reads it, and create the directory it names; " + _RELOAD)
    if error.kind == "quoted value":
        return (f"supervisord keeps quotation marks as part of a value ({error.detail}): its ini reader does not strip "
                "them, so `loglevel = \"warn\"` is the level '\"warn\"' and a quoted path starts with a quote; remove "
                f"the quotes around the values in {file} (`loglevel = warn`, `logfile = /var/log/x.log`; only "
                "command= and environment= values may quote their parts), " + _RELOAD)
    if error.kind == "boolean":
        return (f"a setting of {file} that takes true or false has {error.detail} (empty, quoted or another word): set "
                "it to true or false (autostart, autorestart, redirect_stderr, nodaemon, ...), " + _RELOAD)
    if error.kind == "environment":
        return (f"an environment= value in {file} has an item without `=` ({error.detail}): write it as "
                "KEY=\"value\" pairs separated by commas (`environment=A=\"1\",B=\"2\"`), quoting any value that holds a "
                "comma, and remove a trailing comma, " + _RELOAD)
    return (f"a value in section {error.detail or 'named'} of {file} leaves a quotation mark open: supervisord "
            "cuts a value at a `;` or `#` that follows a space (an inline comment), even inside quotation marks, so "
            "`FOO=\"## A ##\"` loses its closing quote; remove the space before such a `;` or `#` (or the characters), "
            "and close any quotation opened in command= or environment= (they are split as a shell would), "
            + _RELOAD)
