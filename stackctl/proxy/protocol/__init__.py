"""The wire: pydantic models of the Anthropic and OpenAI APIs and server-sent-event framing.

The ground floor of the proxy: these modules import nothing else from it.
"""
