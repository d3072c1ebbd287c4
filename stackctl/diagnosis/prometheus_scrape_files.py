"""A file listed under prometheus.yml's scrape_config_files in the wrong shape, read by its signature and by the
fallback alike.

Prometheus 2.43 and later load scrape jobs from the files `scrape_config_files:` lists; each file has prometheus.yml's
own top-level key, `scrape_configs:`, with the jobs under it. A file that holds the jobs as a bare YAML list (what
goes under the key, without it) is refused: "cannot unmarshal !!seq into config.ScrapeConfigs" (siutsin/otaru#2709:
"wrap blackbox scrape file in scrape_configs key"), and its jobs are not scraped. ScrapeConfigs (plural) is the type
of such a file, not of a job (config.ScrapeConfig) nor of prometheus.yml (config.plain). VictoriaMetrics' vmagent
takes the bare list in its own scrape_config_files: a file written for it needs the key added.
"""

from __future__ import annotations

import re

BARE_LIST = re.compile(r"cannot unmarshal !!seq into config\.ScrapeConfigs\b")
_FILE = re.compile(r"(?:loading|parsing YAML file|scrape config file|scrape_config_files?)[ :=\"]+(?P<file>/[\w./-]+\.ya?ml)")


def bare_list(text: str) -> re.Match[str] | None:
    return BARE_LIST.search(text)


def scrape_file_named(text: str) -> str | None:
    match = _FILE.search(text)
    return match["file"] if match else None


def bare_list_fix(file: str | None) -> str:
    which = file or "the file prometheus.yml's scrape_config_files lists"
    return (f"{which} holds its scrape jobs as a bare YAML list, but a file given to scrape_config_files has the same "
            "top-level key as prometheus.yml: put `scrape_configs:` on its first line and the jobs under it, indented "
            "(`scrape_configs:` then `  - job_name: NAME`); a file written for vmagent, which takes the bare list, needs "
            "the key added. `promtool check config prometheus.yml` checks the files it lists too; then reload "
            "Prometheus (`stackctl up` for stackctl's rendered prometheus.yml)")
