"""A Compose file that does not parse as YAML, read by its signature and by the fallback alike.

docker-compose 1 reads its file with PyYAML, whose error names the file and the place on the line after it:
'ERROR: yaml.scanner.ScannerError: mapping values are not allowed here' / '  in "./docker-compose.yml", line 7,
column 19'. Where the file was fetched from a repository's web page (wget or curl on github.com/OWNER/REPO/blob/...)
it is that page's HTML, not the file, and the first line HTML's markup breaks is the one named: Ubiquiti-App/UCRM#2
("due to using html version of compose file ... download raw text"), WhatsApp/WhatsApp-Business-API-Setup-Scripts#61
("You are using curl on the web page. You should curl the raw file instead": raw.githubusercontent.com),
greenstatic/bigbluebutton-exporter#50 (line 123 of a file shorter than that: "Imported via wget"). Otherwise it is
YAML's usual causes at or just above that line: a value holding ': ' that must be quoted, an indentation off,
a tab (tcosolutions/betterscan#165: a block comment YAML has no syntax for).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# PyYAML's error classes (scanner, parser, composer), and the file and place it names on the same or a later line.
YAML_ERROR = re.compile(r"yaml\.(?:scanner\.Scanner|parser\.Parser|composer\.Composer)Error: (?P<message>[^\n]*?)"
                        r"(?=\s+in \"|\s*$)")
_PLACE = re.compile(r"in \"(?P<file>[^\"]+)\", line (?P<line>\d+), column (?P<column>\d+)")
# Compose's file names: docker-compose.yml, compose.yaml, docker-compose.override.yml, and a project's own given with
# -f (carla-compose.yml); on Windows behind a backslash.
_COMPOSE_FILE = re.compile(r"compose[\w.-]*\.ya?ml$", re.IGNORECASE)
# What PyYAML's most frequent messages mean, by their words.
_HINTS = (
    (re.compile(r"mapping values are not allowed"), ("a value holding ': ' (a URL, a command, a description) must be "
                                                     "in quotes, or a key sits indented under a value")),
    (re.compile(r"could not find expected ':'|expected <block end>|did not find expected key"),
     "the indentation at or just above that line is off: spaces only, and the keys of one mapping aligned"),
    (re.compile(r"found character '\\t'|cannot start any token"), ("a tab, or a value starting with a character "
                                                                   "YAML reserves (@, `, %, *, &), which must be in "
                                                                   "quotes")),
)


@dataclass(frozen=True)
class ComposeYamlError:
    message: str
    file: str
    line: int
    column: int
    # What the message most often means (read from the whole error: a parser's second message says it).
    hint: str


def compose_yaml_error(text: str) -> ComposeYamlError | None:
    """PyYAML's error about a Compose file in `text` (a line joined with the ones after it), or None: another
    program's YAML file is not read as Compose's."""
    error = YAML_ERROR.search(text)
    place = _PLACE.search(text, error.end()) if error else None
    if error is None or place is None or not _COMPOSE_FILE.search(place["file"]):
        return None
    said = text[error.start():]
    hint = next((hint for pattern, hint in _HINTS if pattern.search(said)),
                "check the quoting and indentation at and just above that line")
    return ComposeYamlError(error["message"].strip(), place["file"], int(place["line"]), int(place["column"]), hint)


def compose_yaml_place(line: str) -> ComposeYamlError | None:
    """PyYAML's place line alone ('in "./docker-compose.yml", line 7, column 19'), where its error is on the line
    before: a Compose file that does not parse, its message unread."""
    place = _PLACE.search(line)
    if place is None or not _COMPOSE_FILE.search(place["file"]):
        return None
    return ComposeYamlError("", place["file"], int(place["line"]), int(place["column"]),
                            "check the quoting and indentation at and just above that line")


def compose_yaml_fix(error: ComposeYamlError) -> str:
    said = f" ({error.message})" if error.message else ""
    return (f"{error.file} does not parse as YAML at line {error.line}, column {error.column}{said}. First "
            f"look at what the file is: `head -n 5 {error.file}`; one that starts with `<!DOCTYPE html>` or `<html` is "
            "a web page saved in the file's place (wget or curl on the github.com/.../blob/... page shows the page, "
            "not the file): download the raw file instead, from raw.githubusercontent.com/OWNER/REPO/BRANCH/PATH (the "
            "page's Raw button), e.g. `curl -fsSLO https://raw.githubusercontent.com/OWNER/REPO/BRANCH/docker-compose"
            f".yml`. Otherwise it is YAML's usual causes at or just above line {error.line}: {error.hint}; `docker compose "
            "config` (`docker-compose config` for Compose 1) reads the file and shows what it makes of it. stackctl "
            "renders its own docker-compose.yml afresh on `stackctl up`, so this is a file added or edited by hand")
