"""Where the shipped fragments and config templates live (source checkout or installed wheel)."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
# In a source checkout (and an editable install) they sit at the top of the repository; a wheel
# carries a copy under stackctl/_data (see pyproject's force-include).
_SOURCE_ROOT = _PACKAGE_DIR.parent


def resource_dir(name: str) -> Path:
    """`compose`, `prometheus`, `grafana` or `nginx`."""
    checkout = _SOURCE_ROOT / name
    if checkout.is_dir() and (_SOURCE_ROOT / "pyproject.toml").is_file():
        return checkout
    return _PACKAGE_DIR / "_data" / name


def source_root() -> Path | None:
    """The repository root when running from a checkout (the filter-proxy image builds from it)."""
    return _SOURCE_ROOT if (_SOURCE_ROOT / "images").is_dir() else None
