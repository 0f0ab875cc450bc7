"""The bundled offline example: build the kvserve repository, a fork's wheel, and audit it."""
