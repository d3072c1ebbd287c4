"""The OpenAI API passed through to the backend (`/v1/chat/completions`, `/v1/completions`,
`/v1/models`, ...): the routes and the fixes made to its streams."""
