"""The filter-proxy: Anthropic Messages <-> OpenAI translation, stream fixes, keys, aliases,
metrics. Self-contained: it never imports the orchestration code (it ships alone in its image).
"""

from stackctl.proxy.app import create_app
from stackctl.proxy.settings import ProxyConfigError, ProxySettings, build_settings

__all__ = ["ProxyConfigError", "ProxySettings", "build_settings", "create_app"]
