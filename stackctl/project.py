"""A rendered project, the value a runtime runs: the services, docker-compose.yml's text and the
config files under rendered/; and writing it into the stack directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stackctl.layout import StackLayout
from stackctl.services import Service


@dataclass(frozen=True)
class RenderedProject:
    services: list[Service]  # in dependency order
    compose_text: str  # docker-compose.yml
    config_files: dict[Path, str]  # relative to rendered/ -> text

    def write(self, layout: StackLayout) -> WrittenProject:
        """Write docker-compose.yml and rendered/ into the stack (or host) directory."""
        layout.home.mkdir(parents=True, exist_ok=True)
        config_files = write_config_files(layout, self.config_files)
        layout.compose_file.write_text(self.compose_text)
        env_link = layout.home / ".env"
        if layout.home != layout.root and not (env_link.is_symlink() or env_link.exists()):
            # `docker compose up -d` in hosts/NAME reads ${VAR} from the stack's one .env.
            env_link.symlink_to(Path("..") / ".." / ".env")
        return WrittenProject(layout.compose_file, config_files)


@dataclass(frozen=True)
class WrittenProject:
    compose_file: Path
    config_files: list[Path]


def write_config_files(layout: StackLayout, files: dict[Path, str]) -> list[Path]:
    """Write rendered config files (paths relative to rendered/); returns where they went."""
    written = []
    for relative, text in files.items():
        target = layout.rendered / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written.append(target)
    return written
