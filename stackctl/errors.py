"""The one error hierarchy: every message says what happened and what to do next."""


class StackError(Exception):
    """A failure the user can act on. The CLI prints it as one red line."""

    exit_code = 1


class ConfigError(StackError):
    """stack.yaml, .env or a command-line value is invalid."""

    exit_code = 2


class RuntimeUnavailable(StackError):
    """The chosen runtime (e.g. a Docker engine) is not there."""


class ServiceFailed(StackError):
    """A service exited or missed its health gate."""
