"""The OpenAI Responses API (`/v1/responses`) passed to the backend's own Responses endpoint:
the route, the fixes made to its requests (namespaced tools, encrypted reasoning) and streams."""
