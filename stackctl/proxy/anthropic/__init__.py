"""The Anthropic Messages API (`/v1/messages`): routes, the translation to and from the backend's
OpenAI API, the streamed reply, where system text goes, and the web-search server tool."""
